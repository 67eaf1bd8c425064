//! The journey's words in French and English.

use common::document::{describe_accepted, AcceptedWords};
use domain::journey::UploadWarning;
use domain::vocabulary::{DocumentCategory, JourneySide};

pub struct Strings {
    pub code: &'static str,
    /// The form's heading, per category of journey.
    pub heading_identity: &'static str,
    pub heading_document: &'static str,
    /// After the company's name in the title of a session's pages.
    pub title_suffix: &'static str,
    pub title_suffix_document: &'static str,
    pub intro_identity: &'static str,
    pub intro_document: &'static str,
    pub front: &'static str,
    pub back: &'static str,
    pub selfie: &'static str,
    /// The consent to the biometric comparison, asked before the selfie (GDPR art. 9).
    pub consent_label: &'static str,
    pub consent_text: &'static str,
    pub document: &'static str,
    /// The formats in words come from `common::document::describe_accepted` with these.
    pub format_words: &'static AcceptedWords,
    pub max_size: &'static str,
    pub optional: &'static str,
    pub submit: &'static str,
    pub privacy: &'static str,
    pub progress: &'static str,
    pub uploading: &'static str,
    pub uploaded: &'static str,
    pub err_type_intro: &'static str,
    pub err_size: &'static str,
    pub err_missing: &'static str,
    pub err_network: &'static str,
    pub err_busy: &'static str,
    pub checking_title: &'static str,
    pub checking_text: &'static str,
    pub done_title: &'static str,
    pub done_text: &'static str,
    /// Before the session's short reference on its end pages.
    pub reference_label: &'static str,
    /// The button back to the client's site (`returnUrl`).
    pub return_label: &'static str,
    pub used_title: &'static str,
    pub used_text: &'static str,
    pub expired_title: &'static str,
    pub expired_text: &'static str,
    pub unknown_title: &'static str,
    pub unknown_text: &'static str,
    pub error_title: &'static str,
    pub error_text: &'static str,
    /// The title of the page refused by a rate limit (its text is `err_busy`).
    pub busy_title: &'static str,
    /// The banner of a test-mode session's pages.
    pub test_mode: &'static str,
    /// One line of advice per file, under its label, beside a drawing of the framing.
    pub advice_front: &'static str,
    pub advice_back: &'static str,
    pub advice_selfie: &'static str,
    pub advice_document: &'static str,
    /// The quick look's warnings (`UploadWarning`), for a document and for a selfie.
    pub warn_low_resolution: &'static str,
    pub warn_low_resolution_selfie: &'static str,
    pub warn_blurry: &'static str,
    pub warn_blurry_selfie: &'static str,
    pub warn_glare: &'static str,
    pub warn_no_face: &'static str,
    pub warn_several_faces: &'static str,
    pub warn_front_is_back: &'static str,
    pub warn_back_is_front: &'static str,
    /// After a warning: the photo is kept unless the customer takes it again.
    pub warn_keep: &'static str,
    pub retake: &'static str,
    /// The QR code offered on a wide screen, to go on on a phone.
    pub handoff_title: &'static str,
    pub handoff_text: &'static str,
    pub handoff_qr_label: &'static str,
    /// The plain form post's refusals (without the script).
    pub form_refused_title: &'static str,
    pub form_refused_text: &'static str,
    pub form_too_large_title: &'static str,
    /// Above the form when a file just sent draws advice: sending again keeps it.
    pub warn_before_sending: &'static str,
}

pub const FR: Strings = Strings {
    code: "fr",
    heading_identity: "Vérification d’identité",
    heading_document: "Vérification de document",
    title_suffix: "vérification d'identité",
    title_suffix_document: "vérification de document",
    intro_identity: "Prenez en photo votre pièce d’identité (recto, puis verso si elle en a un), puis votre visage.",
    intro_document: "Transmettez le document demandé, en PDF ou en photo.",
    front: "Recto de la pièce d’identité",
    back: "Verso de la pièce d’identité",
    selfie: "Photo de votre visage (selfie)",
    consent_label: "J’accepte que la photo de mon visage soit comparée à celle de ma pièce d’identité.",
    consent_text: "Cette comparaison biométrique sert uniquement à vérifier que vous êtes le titulaire de la pièce. \
        Seuls son résultat et un score sont conservés : aucune donnée biométrique (gabarit ou extrait du visage) \
        n’est enregistrée. Sans votre accord, une personne vérifiera votre photo elle-même.",
    document: "Document",
    format_words: &AcceptedWords::FRENCH,
    max_size: "10 Mo maximum",
    optional: "facultatif",
    submit: "Envoyer",
    privacy: "Vos fichiers sont chiffrés et servent uniquement à cette vérification.",
    progress: "Progression de l’envoi",
    uploading: "Envoi en cours…",
    uploaded: "Fichier reçu.",
    err_type_intro: "Ce type de fichier n’est pas accepté. Choisissez",
    err_size: "Ce fichier dépasse 10 Mo. Choisissez un fichier plus léger.",
    err_missing: "Ajoutez d’abord les fichiers obligatoires.",
    err_network: "L’envoi a échoué. Vérifiez votre connexion et réessayez.",
    err_busy: "Trop de tentatives. Patientez une minute puis réessayez.",
    checking_title: "Vérification en cours",
    checking_text: "Vos documents ont bien été transmis et sont en cours de vérification. Cela prend quelques instants.",
    done_title: "Merci",
    done_text: "Vos documents ont bien été reçus. Votre interlocuteur vous tiendra informé de la suite.",
    reference_label: "Référence de votre dossier :",
    return_label: "Revenir au site",
    used_title: "Lien déjà utilisé",
    used_text: "Vos documents ont déjà été transmis avec ce lien. Merci.",
    expired_title: "Lien expiré",
    expired_text: "Ce lien de vérification a expiré. Demandez-en un nouveau à votre interlocuteur.",
    unknown_title: "Lien inconnu",
    unknown_text: "Ce lien de vérification n’existe pas. Vérifiez l’adresse reçue.",
    error_title: "Service indisponible",
    error_text: "Réessayez dans quelques instants.",
    busy_title: "Trop de tentatives",
    test_mode: "TEST — Parcours de test : ce n’est pas une vérification réelle, son résultat n’a aucune valeur.",
    advice_front: "Pièce à plat sur un fond sombre, bien éclairée, sans reflet : ses quatre coins dans le cadre, le texte net.",
    advice_back: "Le verso de la même façon, les lignes du bas bien lisibles.",
    advice_selfie: "Votre visage de face et en entier, bien éclairé, sans lunettes de soleil ni couvre-chef.",
    advice_document: "Le document entier, à plat, lisible, sans ombre ni reflet ; un PDF convient aussi.",
    warn_low_resolution:
        "La photo est trop petite pour lire le document : rapprochez-vous, avec l’appareil photo plutôt qu’une capture d’écran.",
    warn_low_resolution_selfie: "La photo est trop petite : rapprochez le téléphone de votre visage.",
    warn_blurry: "La photo semble floue : tenez le téléphone immobile et touchez l’écran pour faire la mise au point.",
    warn_blurry_selfie: "La photo semble floue : tenez le téléphone immobile, à bout de bras.",
    warn_glare: "Un reflet masque une partie du document : inclinez-le un peu ou éloignez-le de la lumière.",
    warn_no_face: "Nous ne voyons pas de visage : prenez-vous de face, le visage entier dans le cadre et bien éclairé.",
    warn_several_faces: "Nous voyons plusieurs visages : soyez seul ou seule sur la photo.",
    warn_front_is_back: "Cette photo semble montrer le verso de la carte (les lignes de caractères, sans photo) : ici, envoyez le recto, celui qui porte votre photo.",
    warn_back_is_front: "Cette photo semble montrer le recto de la carte (votre photo) : ici, envoyez le verso, celui qui porte les lignes de caractères en bas.",
    warn_keep: "Vous pouvez aussi la garder telle quelle.",
    retake: "Reprendre la photo",
    handoff_title: "Continuer sur votre téléphone",
    handoff_text: "Les photos sont plus faciles à prendre avec un téléphone : scannez ce code avec son appareil photo pour y ouvrir ce même parcours. Cette page affichera ensuite où il en est quand vous la rechargerez.",
    handoff_qr_label: "Code QR du lien de ce parcours",
    form_refused_title: "Page expirée",
    form_refused_text: "Cette page n’est plus valable. Rouvrez le lien de vérification que vous avez reçu.",
    form_too_large_title: "Fichier trop lourd",
    warn_before_sending: "Vos fichiers sont reçus. Vérifiez les conseils ci-dessus, puis appuyez sur « Envoyer » pour les transmettre tels quels, ou reprenez une photo.",
};

pub const EN: Strings = Strings {
    code: "en",
    heading_identity: "Identity verification",
    heading_document: "Document verification",
    title_suffix: "identity verification",
    title_suffix_document: "document verification",
    intro_identity: "Take a photo of your identity document (front, then back if it has one), then of your face.",
    intro_document: "Send the requested document, as a PDF or a photo.",
    front: "Front of the identity document",
    back: "Back of the identity document",
    selfie: "Photo of your face (selfie)",
    consent_label: "I agree that the photo of my face be compared with the one on my identity document.",
    consent_text: "This biometric comparison only checks that you are the document's holder. Only its outcome \
        and a score are kept: no biometric data (face template or face crop) is stored. Without your consent, \
        a person will check your photo instead.",
    document: "Document",
    format_words: &AcceptedWords::ENGLISH,
    max_size: "10 MB at most",
    optional: "optional",
    submit: "Send",
    privacy: "Your files are encrypted and used for this verification only.",
    progress: "Upload progress",
    uploading: "Uploading…",
    uploaded: "File received.",
    err_type_intro: "This file type is not accepted. Choose",
    err_size: "This file is over 10 MB. Choose a smaller file.",
    err_missing: "Add the required files first.",
    err_network: "The upload failed. Check your connection and try again.",
    err_busy: "Too many attempts. Wait a minute and try again.",
    checking_title: "Being checked",
    checking_text: "Your documents were received and are being checked. This takes a few moments.",
    done_title: "Thank you",
    done_text: "Your documents were received. Your contact will keep you informed of what comes next.",
    reference_label: "Your reference:",
    return_label: "Back to the website",
    used_title: "Link already used",
    used_text: "Your documents were already sent with this link. Thank you.",
    expired_title: "Link expired",
    expired_text: "This verification link has expired. Ask your contact for a new one.",
    unknown_title: "Unknown link",
    unknown_text: "This verification link does not exist. Check the address you received.",
    error_title: "Service unavailable",
    error_text: "Try again in a few moments.",
    busy_title: "Too many attempts",
    test_mode: "TEST — Test journey: this is not a real verification, and its result has no value.",
    advice_front: "The document flat on a dark surface, well lit, without glare: its four corners in the frame, the text sharp.",
    advice_back: "The back the same way, with the bottom lines easy to read.",
    advice_selfie: "Your whole face, from the front, well lit, without sunglasses or a hat.",
    advice_document: "The whole document, flat, readable, without shadow or glare; a PDF is fine too.",
    warn_low_resolution: "The photo is too small to read the document: come closer, and use the camera rather than a screenshot.",
    warn_low_resolution_selfie: "The photo is too small: bring the phone closer to your face.",
    warn_blurry: "The photo looks blurred: hold the phone still and tap the screen to focus.",
    warn_blurry_selfie: "The photo looks blurred: hold the phone still, at arm's length.",
    warn_glare: "Glare hides part of the document: tilt it a little or move it away from the light.",
    warn_no_face: "We cannot see a face: take the photo from the front, your whole face in the frame and well lit.",
    warn_several_faces: "We can see several faces: be alone in the photo.",
    warn_front_is_back: "This photo seems to show the back of the card (the lines of characters, no photo): send the front here, the side with your photo.",
    warn_back_is_front: "This photo seems to show the front of the card (your photo): send the back here, the side with the lines of characters at the bottom.",
    warn_keep: "You may also keep it as it is.",
    retake: "Take the photo again",
    handoff_title: "Go on with your phone",
    handoff_text: "Photos are easier to take with a phone: scan this code with its camera to open this same journey there. Reload this page afterwards to see where it stands.",
    handoff_qr_label: "QR code of this journey's link",
    form_refused_title: "Page expired",
    form_refused_text: "This page is no longer valid. Open the verification link you received again.",
    form_too_large_title: "File too large",
    warn_before_sending: "Your files were received. Check the advice above, then press \"Send\" to send them as they are, or take a photo again.",
};

impl Strings {
    /// The form's heading for a journey of `category`.
    pub fn heading(&self, category: DocumentCategory) -> &'static str {
        match category {
            DocumentCategory::Identite => self.heading_identity,
            DocumentCategory::Administratif => self.heading_document,
        }
    }

    /// The advice under a file's label.
    pub fn advice(&self, side: JourneySide) -> &'static str {
        match side {
            JourneySide::Front => self.advice_front,
            JourneySide::Back => self.advice_back,
            JourneySide::Selfie => self.advice_selfie,
            JourneySide::Document => self.advice_document,
        }
    }

    /// A warning of the quick look at a photo of `side`, in words.
    pub fn upload_warning(&self, warning: UploadWarning, side: JourneySide) -> &'static str {
        let selfie = side == JourneySide::Selfie;
        match warning {
            UploadWarning::LowResolution if selfie => self.warn_low_resolution_selfie,
            UploadWarning::LowResolution => self.warn_low_resolution,
            UploadWarning::Blurry if selfie => self.warn_blurry_selfie,
            UploadWarning::Blurry => self.warn_blurry,
            UploadWarning::Glare => self.warn_glare,
            UploadWarning::NoFace => self.warn_no_face,
            UploadWarning::SeveralFaces => self.warn_several_faces,
            UploadWarning::WrongSide if side == JourneySide::Back => self.warn_back_is_front,
            UploadWarning::WrongSide => self.warn_front_is_back,
        }
    }

    /// Under a file field: what it takes, e.g. "Une photo JPEG, PNG ou WebP, 10 Mo maximum."
    pub fn file_hint(&self, category: DocumentCategory) -> String {
        let formats = describe_accepted(category, self.format_words);
        let mut chars = formats.chars();
        let formats = chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default();
        format!("{formats}, {}.", self.max_size)
    }

    /// When the picked file's type is not one the journey takes.
    pub fn err_type(&self, category: DocumentCategory) -> String {
        format!("{} {}.", self.err_type_intro, describe_accepted(category, self.format_words))
    }
}
