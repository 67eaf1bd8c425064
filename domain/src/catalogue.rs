//! The one catalogue of anomaly codes (`API.md`): each code's severity and meaning, so codes stay
//! stable, documented, and weighed the same way by every part of the engine.

use crate::vocabulary::{wire_enum, Severity};
use serde::{Deserialize, Serialize};

/// Declares [`AnomalyCode`] from one table: each code's wire name, severity and meanings, so a
/// code cannot exist without its severity and both its meanings.
macro_rules! catalogue {
    ($($variant:ident => $wire:tt, $severity:ident, $meaning:expr, $meaning_fr:expr;)+) => {
        wire_enum!(
            /// An anomaly code the engine may report (`API.md`); a typo in one is a compile error.
            AnomalyCode { $($variant => $wire),+ }
        );

        impl AnomalyCode {
            /// How much this anomaly weighs on the verdict.
            pub fn severity(self) -> Severity {
                match self { $(AnomalyCode::$variant => Severity::$severity),+ }
            }

            /// What the anomaly means, as shown to the client in `message`.
            pub fn meaning(self) -> &'static str {
                match self { $(AnomalyCode::$variant => $meaning),+ }
            }

            /// The same in French, for the certificate and the pages.
            pub fn meaning_fr(self) -> &'static str {
                match self { $(AnomalyCode::$variant => $meaning_fr),+ }
            }
        }
    };
}

catalogue! {
    DocumentUnreadable => "document_unreadable", Info,
        "The file could not be decoded as an image or a PDF, so nothing could be analysed; the result goes to human review.",
        "Le fichier n’a pu être décodé ni comme image ni comme PDF : rien n’a pu être analysé ; le résultat passe en revue humaine.";
    DocumentUnsupported => "document_unsupported", Info,
        "The file is of a type, size or page count the service does not analyse; the result goes to human review.",
        "Le fichier est d’un type, d’une taille ou d’un nombre de pages que le service n’analyse pas ; le résultat passe en revue humaine.";
    AnalysisFailed => "analysis_failed", Info,
        "The analysis engine failed on this document after several attempts; the result goes to human review.",
        "Le moteur d’analyse a échoué sur ce document après plusieurs tentatives ; le résultat passe en revue humaine.";
    AiDisabled => "ai_disabled", Info,
        "AI use is disabled for the company, so the document was not analysed; the result goes to human review.",
        "L’usage de l’IA est désactivé pour l’entreprise : le document n’a pas été analysé ; le résultat passe en revue humaine.";
    NotAnalysedInTestMode => "not_analysed_in_test_mode", Info,
        "Test mode analyses only its magic documents (test-documents/): this file was not analysed, and the result is made up.",
        "Le mode test n’analyse que ses documents de test (test-documents/) : ce fichier n’a pas été analysé, le résultat est fictif.";
    AutomatedChecksUnavailable => "automated_checks_unavailable", Info,
        "The file was read, but the engine version that analysed it performed no authenticity check \
         (reported by the provisional engine of the first releases; kept so stored results stay documented).",
        "Le fichier a été lu, mais la version du moteur qui l’a analysé n’a réalisé aucun contrôle d’authenticité.";
    MrzCompositeMismatch => "mrz_composite_mismatch", Reject,
        "The composite check digit of the machine-readable zone does not match the fields it covers.",
        "La clé de contrôle globale de la bande MRZ ne correspond pas aux champs qu’elle couvre.";
    MrzUnreadableField => "mrz_unreadable_field", Warning,
        "A field of the machine-readable zone could not be read, so it could not be verified.",
        "Un champ de la bande MRZ n’a pas pu être lu, et donc pas vérifié.";
    MrzUnknownCountry => "mrz_unknown_country", Warning,
        "The issuing state of the machine-readable zone is neither an ISO 3166 nor an ICAO code.",
        "L’État émetteur indiqué dans la bande MRZ n’est ni un code ISO 3166 ni un code OACI.";
    TwoddocSignatureInvalid => "twoddoc_signature_invalid", Reject,
        "The 2D-Doc seal's signature does not verify: the seal was forged or altered.",
        "La signature du cachet 2D-Doc ne se vérifie pas : le cachet a été contrefait ou modifié.";
    TwoddocDataMismatch => "twoddoc_data_mismatch", Reject,
        "The data signed in the 2D-Doc seal differ from the data printed on the document.",
        "Les données signées dans le cachet 2D-Doc diffèrent de celles imprimées sur le document.";
    MrzCheckDigitMismatch => "mrz_check_digit_mismatch", Reject,
        "A check digit of the machine-readable zone does not match its field.",
        "Une clé de contrôle de la bande MRZ ne correspond pas à son champ.";
    DocumentExpired => "document_expired", Reject,
        "The document's expiry date has passed.",
        "La date d’expiration du document est dépassée.";
    PdfModifiedAfterCreation => "pdf_modified_after_creation", Warning,
        "The PDF was modified after it was created (incremental update or differing dates).",
        "Le PDF a été modifié après sa création (mise à jour incrémentale ou dates différentes).";
    EditedWithSoftware => "edited_with_software", Warning,
        "The file's metadata show it was saved by image or PDF editing software.",
        "Les métadonnées du fichier montrent qu’il a été enregistré par un logiciel de retouche d’image ou d’édition de PDF.";
    LowResolution => "low_resolution", Warning,
        "The image resolution is too low for every check to be reliable.",
        "La résolution de l’image est trop faible pour que tous les contrôles soient fiables.";
    SelfieMismatch => "selfie_mismatch", Reject,
        "The selfie does not match the photo on the identity document.",
        "Le selfie ne correspond pas à la photo de la pièce d’identité.";
    SelfieNotChecked => "selfie_not_checked", Info,
        "The selfie was not compared with the photo on the identity document.",
        "Le selfie n’a pas été comparé à la photo de la pièce d’identité.";
    SelfieUncertain => "selfie_uncertain", Warning,
        "The selfie and the photo on the identity document look alike, but not enough to conclude they show the same person; the result goes to human review.",
        "Le selfie et la photo de la pièce d’identité se ressemblent, mais pas assez pour conclure qu’il s’agit de la même personne ; le résultat passe en revue humaine.";
    SelfieMultipleFaces => "selfie_multiple_faces", Warning,
        "More than one face appears on the selfie; the largest was compared with the document.",
        "Plusieurs visages apparaissent sur le selfie ; le plus grand a été comparé au document.";
    PortraitMissing => "portrait_missing", Warning,
        "No face was found on the front of an identity document whose type carries its holder's photo.",
        "Aucun visage n’a été trouvé au recto d’une pièce d’identité dont le type porte la photo du titulaire.";
    LivenessNotChecked => "liveness_not_checked", Info,
        "The selfie was compared with the document, but Sceau does not detect presentation attacks (a printed photo or a screen held to the camera): that the selfie shows a live person was not checked.",
        "Le selfie a été comparé au document, mais Sceau ne détecte pas les attaques par présentation (photo imprimée ou écran tendu à la caméra) : la présence réelle de la personne n’a pas été vérifiée.";
    TwoddocCertificateUnknown => "twoddoc_certificate_unknown", Warning,
        "The 2D-Doc seal names a certificate its authority is not known to have issued, so its signature could not be checked.",
        "Le cachet 2D-Doc désigne un certificat que son autorité n’est pas connue pour avoir émis : sa signature n’a pas pu être vérifiée.";
    TwoddocAuthorityUntrusted => "twoddoc_authority_untrusted", Warning,
        "The 2D-Doc seal was signed by an authority that is not on the ANTS trust list.",
        "Le cachet 2D-Doc a été signé par une autorité absente de la liste de confiance de l’ANTS.";
    TwoddocCertificateExpired => "twoddoc_certificate_expired", Warning,
        "The 2D-Doc seal's signature date lies outside the validity period of its certificate.",
        "La date de signature du cachet 2D-Doc est en dehors de la période de validité de son certificat.";
    TwoddocMalformed => "twoddoc_malformed", Warning,
        "A 2D-Doc seal was decoded but does not follow the ANTS specification, so it could not be verified.",
        "Un cachet 2D-Doc a été décodé mais ne suit pas la spécification de l’ANTS : il n’a pas pu être vérifié.";
    TwoddocNonConformity => "twoddoc_non_conformity", Warning,
        "The 2D-Doc seal departs from the ANTS specification in a way that still lets it be read and its signature be checked; a conforming issuer does not produce such a seal.",
        "Le cachet 2D-Doc s’écarte de la spécification de l’ANTS d’une manière qui permet encore de le lire et d’en vérifier la signature ; un émetteur conforme ne produit pas un tel cachet.";
    TwoddocUnreadable => "twoddoc_unreadable", Warning,
        "A 2D-Doc seal seems present but could not be decoded (image quality or a code drawn as vectors).",
        "Un cachet 2D-Doc semble présent mais n’a pas pu être décodé (qualité de l’image ou code dessiné en vectoriel).";
    TwoddocTestCertificate => "twoddoc_test_certificate", Info,
        "The 2D-Doc seal is signed with a test certificate, accepted only because the operator trusts the test authority.",
        "Le cachet 2D-Doc est signé avec un certificat de test, accepté uniquement parce que l’opérateur fait confiance à l’autorité de test.";
    VisibleTextUnavailable => "visible_text_unavailable", Warning,
        "The document's visible text could not be read, so the seal's data could not be compared with what is printed.",
        "Le texte visible du document n’a pas pu être lu : les données du cachet n’ont pas pu être comparées à ce qui est imprimé.";
    MrzNotFound => "mrz_not_found", Info,
        "No machine-readable zone was found on the identity document, so nothing could be verified; the result goes to human review.",
        "Aucune bande MRZ n’a été trouvée sur la pièce d’identité : rien n’a pu être vérifié ; le résultat passe en revue humaine.";
    HolderMinor => "holder_minor", Info,
        "The holder is under 18 according to the machine-readable zone.",
        "Le titulaire a moins de 18 ans d’après la bande MRZ.";
    IssuerNotConfirmed => "issuer_not_confirmed", Info,
        "The document has no verified seal and its issuer could not be confirmed in a company register, so nothing could be verified; the result goes to human review.",
        "Le document n’a pas de cachet vérifié et son émetteur n’a pas pu être confirmé dans un registre d’entreprises : rien n’a pu être vérifié ; le résultat passe en revue humaine.";
    IssuerIdentifierInvalid => "issuer_identifier_invalid", Warning,
        "A SIREN or SIRET number printed on the document fails its check digit.",
        "Un numéro SIREN ou SIRET imprimé sur le document a une clé de contrôle fausse.";
    BlurryImage => "blurry_image", Warning,
        "The image is too blurred for every check to be reliable.",
        "L’image est trop floue pour que tous les contrôles soient fiables.";
    OverexposedImage => "overexposed_image", Warning,
        "Large parts of the image are burnt out (over-exposed or glare), hiding what they carried.",
        "De grandes parties de l’image sont brûlées (surexposition ou reflet) et masquent ce qu’elles portaient.";
    ImageUnusable => "image_unusable", Info,
        "The image is far too small or too uniform to carry a document, so nothing could be analysed; the result goes to human review.",
        "L’image est bien trop petite ou trop uniforme pour porter un document : rien n’a pu être analysé ; le résultat passe en revue humaine.";
    ExternalFraudSignal => "external_fraud_signal", Warning,
        "The external analysis service reported a sign of fraud on this document.",
        "Le service d’analyse externe a signalé un indice de fraude sur ce document.";
    ExternalEngineUnavailable => "external_engine_unavailable", Info,
        "The external analysis service did not answer, so its checks (selfie match, fraud signals) were not performed.",
        "Le service d’analyse externe n’a pas répondu : ses contrôles (comparaison du selfie, indices de fraude) n’ont pas été réalisés.";
}

/// One point of attention found by the analysis: a catalogued code, its severity (the catalogue's,
/// or what an outside engine said of its own signal) and the message shown to the client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Anomaly {
    pub code: AnomalyCode,
    pub severity: Severity,
    pub message: String,
}

impl Anomaly {
    /// The anomaly `code` with the catalogue's severity and meaning.
    pub fn new(code: AnomalyCode) -> Anomaly {
        Anomaly {
            code,
            severity: code.severity(),
            message: code.meaning().to_owned(),
        }
    }

    /// The anomaly `code` whose message adds `detail` in parentheses (`meaning (detail).`), the
    /// one form [`Anomaly::message_fr`] carries over; without detail, the plain meaning.
    pub fn with_detail(code: AnomalyCode, detail: &str) -> Anomaly {
        let mut found = Anomaly::new(code);
        if !detail.is_empty() {
            found.message = format!("{} ({detail}).", found.message.trim_end_matches('.'));
        }
        found
    }

    /// The message in French: the catalogue's French meaning, with the detail the engine added to
    /// the English one (`meaning (detail).`).
    pub fn message_fr(&self) -> String {
        let detail = self
            .message
            .strip_prefix(self.code.meaning().trim_end_matches('.'))
            .and_then(|rest| rest.strip_prefix(" ("))
            .and_then(|rest| rest.strip_suffix(")."))
            .filter(|detail| !detail.is_empty());
        match detail {
            Some(detail) => {
                let detail = crate::face_match::detail_fr(detail).unwrap_or_else(|| detail.to_owned());
                format!("{} ({detail}).", self.code.meaning_fr().trim_end_matches('.'))
            }
            None => self.code.meaning_fr().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meanings_are_sentences_in_both_languages() {
        for code in AnomalyCode::ALL {
            assert!(code
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
            assert!(code.meaning().ends_with('.') && code.meaning_fr().ends_with('.'), "{code}");
            assert!(!code.meaning_fr().contains('\''), "French apostrophes are typographic: {code}");
        }
    }

    #[test]
    fn api_codes_have_their_severity() {
        let expected = [
            ("automated_checks_unavailable", Severity::Info),
            ("twoddoc_signature_invalid", Severity::Reject),
            ("twoddoc_data_mismatch", Severity::Reject),
            ("mrz_check_digit_mismatch", Severity::Reject),
            ("document_expired", Severity::Reject),
            ("pdf_modified_after_creation", Severity::Warning),
            ("edited_with_software", Severity::Warning),
            ("low_resolution", Severity::Warning),
            ("selfie_mismatch", Severity::Reject),
            ("selfie_not_checked", Severity::Info),
            ("selfie_uncertain", Severity::Warning),
            ("selfie_multiple_faces", Severity::Warning),
            ("portrait_missing", Severity::Warning),
            ("liveness_not_checked", Severity::Info),
        ];
        for (wire, severity) in expected {
            let code: AnomalyCode = wire.parse().unwrap();
            let anomaly = Anomaly::new(code);
            assert_eq!((anomaly.code.as_str(), anomaly.severity), (wire, severity));
            assert_eq!(serde_json::to_value(&anomaly).unwrap()["code"], wire);
        }
        assert!("no_such_code".parse::<AnomalyCode>().is_err());
        assert!(serde_json::from_str::<Anomaly>(r#"{"code":"no_such_code","severity":"info","message":"."}"#).is_err());
    }

    #[test]
    fn details_are_written_in_the_form_the_french_message_reads() {
        let unreadable = Anomaly::with_detail(AnomalyCode::TwoddocUnreadable, "the PDF page could not be searched");
        assert!(
            unreadable.message.ends_with("vectors) (the PDF page could not be searched)."),
            "{}",
            unreadable.message
        );
        assert!(unreadable
            .message_fr()
            .ends_with("vectoriel) (the PDF page could not be searched)."));
        assert_eq!(
            Anomaly::with_detail(AnomalyCode::DocumentExpired, ""),
            Anomaly::new(AnomalyCode::DocumentExpired)
        );
    }

    #[test]
    fn french_messages_keep_the_detail() {
        let mut digits = Anomaly::new(AnomalyCode::MrzCheckDigitMismatch);
        assert_eq!(
            digits.message_fr(),
            "Une clé de contrôle de la bande MRZ ne correspond pas à son champ."
        );
        digits.message = "A check digit of the machine-readable zone does not match its field (documentNumber, birthDate).".into();
        assert_eq!(
            digits.message_fr(),
            "Une clé de contrôle de la bande MRZ ne correspond pas à son champ (documentNumber, birthDate)."
        );
    }
}
