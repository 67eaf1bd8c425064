//! The portal's words, French first, each English beside its French so the two never drift.
//! The labels of the API's vocabularies (verdicts, decisions…) come from `labels`.

use super::Lang;
use domain::team::Role;

/// Declares the `Words` struct and its two instances from `name: "fr", "en"` pairs.
macro_rules! words {
    ($($name:ident: $fr:literal, $en:literal;)+) => {
        /// Every fixed text of the portal in one language.
        pub struct Words { $(pub $name: &'static str,)+ }
        pub const FR: Words = Words { $($name: $fr,)+ };
        pub const EN: Words = Words { $($name: $en,)+ };
    };
}

words! {
    portal: "Espace client", "Client portal";
    skip: "Aller au contenu", "Skip to content";
    nav_dashboard: "Tableau de bord", "Dashboard";
    nav_consultations: "Résultats", "Results";
    nav_reviews: "Revue", "Review";
    nav_batches: "Lots", "Batches";
    nav_workflows: "Parcours", "Workflows";
    nav_api_keys: "Clés d’API", "API keys";
    nav_team: "Équipe", "Team";
    nav_settings: "Paramètres", "Settings";
    nav_audit: "Journal d’audit", "Audit log";
    nav_usage: "Consommation", "Usage";
    account: "Mon compte", "My account";
    sign_out: "Se déconnecter", "Sign out";
    sign_in: "Se connecter", "Sign in";
    email: "Adresse e-mail", "E-mail address";
    password: "Mot de passe", "Password";
    password_confirm: "Confirmez le mot de passe", "Confirm the password";
    password_rule: "Au moins 12 caractères.", "At least 12 characters.";
    wrong_credentials: "Adresse e-mail ou mot de passe incorrect.", "Wrong e-mail address or password.";
    locked: "Trop de tentatives : réessayez dans quelques minutes.", "Too many attempts: try again in a few minutes.";
    busy_title: "Service très sollicité", "Service busy";
    busy: "Trop de connexions en même temps : réessayez dans quelques secondes.", "Too many sign-ins at once: try again in a few seconds.";
    second_factor_title: "Code de vérification", "Verification code";
    second_factor_text: "Saisissez le code à 6 chiffres de votre application d’authentification, ou un code de secours.", "Enter the 6-digit code from your authenticator app, or a recovery code.";
    code: "Code", "Code";
    verify: "Vérifier", "Verify";
    wrong_code: "Code incorrect.", "Wrong code.";
    invitation_title: "Rejoindre l’espace client", "Join the client portal";
    invitation_text: "Choisissez le mot de passe de votre compte", "Choose the password of your account";
    invitation_invalid: "Ce lien d’invitation n’est plus valable. Demandez une nouvelle invitation.", "This invitation link is no longer valid. Ask for a new invitation.";
    passwords_differ: "Les deux mots de passe diffèrent.", "The two passwords differ.";
    password_too_short: "Le mot de passe doit compter au moins 12 caractères.", "The password must have at least 12 characters.";
    password_too_long: "Le mot de passe est trop long.", "The password is too long.";
    create_account: "Créer mon compte", "Create my account";
    welcome: "Bienvenue dans l’espace client.", "Welcome to the client portal.";
    forbidden_title: "Accès refusé", "Access denied";
    forbidden_text: "Votre rôle ne permet pas cette action.", "Your role does not allow this action.";
    not_found_title: "Page introuvable", "Page not found";
    not_found_text: "Cette page n’existe pas ou n’est pas accessible à votre entreprise.", "This page does not exist or is not available to your company.";
    error_title: "Erreur", "Error";
    error_text: "Une erreur est survenue. Réessayez dans un instant.", "Something went wrong. Try again in a moment.";
    expired_form: "Le formulaire a expiré ou ne vient pas de cette page : réessayez.", "The form expired or did not come from this page: try again.";
    signed_out: "Vous êtes déconnecté.", "You are signed out.";
    session_expired: "Votre session a expiré : reconnectez-vous.", "Your session expired: sign in again.";
    dashboard_title: "Tableau de bord", "Dashboard";
    acts_this_month: "Actes ce mois-ci", "Acts this month";
    acts_last_month: "Actes le mois dernier", "Acts last month";
    reviews_waiting: "Revues en attente", "Reviews waiting";
    open_batches: "Lots ouverts", "Open batches";
    failing_deliveries: "Webhooks en échec", "Failing webhooks";
    verdicts_30_days: "Résultats par verdict sur 30 jours", "Results per verdict over 30 days";
    no_data: "Aucune donnée.", "No data.";
    account_title: "Mon compte", "My account";
    change_password: "Changer de mot de passe", "Change password";
    current_password: "Mot de passe actuel", "Current password";
    new_password: "Nouveau mot de passe", "New password";
    save: "Enregistrer", "Save";
    password_changed: "Mot de passe changé. Vos autres sessions sont fermées.", "Password changed. Your other sessions are closed.";
    wrong_password: "Mot de passe actuel incorrect.", "Wrong current password.";
    sessions: "Sessions actives", "Active sessions";
    this_session: "cette session", "this session";
    started: "Ouverte le", "Started";
    last_seen: "Dernière activité", "Last activity";
    address: "Adresse IP", "IP address";
    browser: "Navigateur", "Browser";
    revoke: "Révoquer", "Revoke";
    session_revoked: "Session révoquée.", "Session revoked.";
    two_factor: "Double authentification", "Two-factor authentication";
    two_factor_on: "Activée.", "Enabled.";
    two_factor_off: "Non activée.", "Not enabled.";
    two_factor_required: "Votre entreprise exige la double authentification : activez-la pour continuer.", "Your company requires two-factor authentication: enable it to continue.";
    two_factor_enrol: "Activer la double authentification", "Enable two-factor authentication";
    two_factor_scan: "Scannez ce QR code avec votre application d’authentification, ou saisissez la clé ci-dessous, puis le code affiché.", "Scan this QR code with your authenticator app, or type the key below, then the code it shows.";
    two_factor_key: "Clé", "Key";
    two_factor_enabled: "Double authentification activée. Conservez ces codes de secours : ils ne seront plus affichés.", "Two-factor authentication enabled. Keep these recovery codes: they will not be shown again.";
    two_factor_disable: "Désactiver la double authentification", "Disable two-factor authentication";
    two_factor_disabled: "Double authentification désactivée.", "Two-factor authentication disabled.";
    two_factor_mandatory: "Votre entreprise exige la double authentification.", "Your company requires two-factor authentication.";
    recovery_codes: "Codes de secours", "Recovery codes";
    two_factor_replace: "Changer d’appareil de double authentification", "Change the two-factor device";
    two_factor_replace_text: "Pour remplacer votre double authentification, confirmez avec votre mot de passe actuel et un code de votre application actuelle (ou un code de secours). Vos anciens codes de secours ne serviront plus.", "To replace your two-factor authentication, confirm with your current password and a code from your current app (or a recovery code). Your old recovery codes will stop working.";
    current_code: "Code actuel (ou code de secours)", "Current code (or recovery code)";
    new_code: "Code de la nouvelle clé", "Code from the new key";
    wrong_password_or_code: "Mot de passe actuel ou code actuel incorrect.", "Wrong current password or current code.";
    enrolment_expired: "Cette clé a expiré (elle est valable 10 minutes) : recommencez avec la nouvelle clé ci-dessous.", "This key has expired (it is valid for 10 minutes): start again with the new key below.";
    two_factor_changed: "Votre double authentification a changé entre-temps : recommencez.", "Your two-factor authentication changed meanwhile: start again.";
    language: "Langue", "Language";
    role: "Rôle", "Role";
    // — Team, settings, audit log, usage
    team_title: "Équipe", "Team";
    invite: "Inviter", "Invite";
    invite_title: "Inviter un membre", "Invite a member";
    invited: "Invitation créée. Transmettez ce lien à la personne invitée (valable 7 jours, une seule fois) :", "Invitation created. Send this link to the person invited (valid 7 days, once):";
    invited_mailed: "Invitation créée et envoyée par e-mail. Le lien (valable 7 jours, une seule fois) :", "Invitation created and e-mailed. The link (valid 7 days, once):";
    invalid_email: "Adresse e-mail invalide.", "Invalid e-mail address.";
    email_taken: "Cette adresse est déjà membre de votre équipe.", "This address is already a member of your team.";
    keep_an_owner: "Une entreprise garde toujours un propriétaire : nommez d’abord un autre propriétaire.", "A company always keeps an owner: make another member owner first.";
    state_changed: "Ce membre a changé entre-temps : rechargez la page.", "This member changed meanwhile: reload the page.";
    members: "Membres", "Members";
    pending_invitations: "Invitations en attente", "Pending invitations";
    state: "État", "State";
    state_active: "Actif", "Active";
    state_invited: "Invité", "Invited";
    state_disabled: "Désactivé", "Disabled";
    expires: "Expire le", "Expires";
    expired: "expirée", "expired";
    change_role: "Changer le rôle", "Change the role";
    disable: "Désactiver", "Disable";
    role_changed: "Rôle changé. Les sessions du membre sont fermées.", "Role changed. The member's sessions are closed.";
    member_disabled: "Membre désactivé.", "Member disabled.";
    confirm_disable_title: "Désactiver un membre", "Disable a member";
    confirm_disable_revoke_keys: "Révoquer aussi ses clés d’API (recommandé)", "Also revoke their API keys (recommended)";
    confirm_disable: "Confirmer la désactivation", "Confirm and disable";
    back_to_team: "Revenir à l’équipe", "Back to the team";
    invitation_revoked: "Invitation révoquée.", "Invitation revoked.";
    settings_title: "Paramètres", "Settings";
    ai_enabled: "Utiliser l’IA pour l’analyse des documents administratifs", "Use AI to analyse administrative documents";
    ai_hint: "Désactivée, les documents administratifs ne peuvent plus être déposés.", "When off, administrative documents can no longer be deposited.";
    retention_days: "Durée de conservation des images (jours)", "Image retention (days)";
    retention_hint: "De 0 à 3650 jours, comptés depuis l’enregistrement du résultat.", "From 0 to 3650 days, counted from when the result was recorded.";
    retention_held: "Les images d’un résultat en attente de relecture sont conservées jusqu’à la décision, quelle que soit la durée ; à 0, elles sont supprimées dès que le résultat est réglé.", "The images of a result waiting for review are kept until it is settled, whatever the retention; at 0 they are deleted as soon as the result is settled.";
    confirm_retention_title: "Réduire la durée de conservation", "Lower the image retention";
    confirm_retention: "Confirmer et supprimer", "Confirm and delete";
    confirm_retention_keeps: "Confirmer", "Confirm";
    back_to_settings: "Revenir aux paramètres", "Back to the settings";
    two_factor_for_all: "Exiger la double authentification de chaque membre", "Require two-factor authentication of every member";
    settings_saved: "Paramètres enregistrés.", "Settings saved.";
    journey_title: "Parcours client", "Customer journey";
    journey_hint: "Ce que vos clients voient de vous quand ils transmettent leurs documents, sur chaque page du parcours.", "What your customers see of you when they send their documents, on every page of the journey.";
    display_name: "Nom affiché", "Display name";
    display_name_hint: "Le nom que vos clients connaissent, 80 caractères au plus ; vide, celui de votre société.", "The name your customers know, 80 characters at most; empty, your company's name.";
    logo: "Logo (PNG ou JPEG, 200 Ko au plus)", "Logo (PNG or JPEG, 200 KB at most)";
    remove_logo: "Retirer le logo actuel", "Remove the current logo";
    accent_color: "Couleur d’accent", "Accent colour";
    accent_color_hint: "Au format #RRGGBB, par exemple #0B4F9C ; le texte des boutons s’y adapte pour rester lisible.", "As #RRGGBB, for example #0B4F9C; button text adapts to stay legible.";
    privacy_notice: "Notice de confidentialité", "Privacy notice";
    privacy_notice_hint: "Affichée à vos clients avant tout envoi (RGPD, article 13). La durée de conservation et le rôle de Sceau, votre sous-traitant, y figurent d’office ; complétez le reste.", "Shown to your customers before they send anything (GDPR, article 13). The retention and Sceau's role as your processor are stated for you; complete the rest.";
    privacy_controller: "Responsable du traitement (raison sociale, adresse)", "Controller (legal name, address)";
    privacy_contact: "Contact pour exercer ses droits (DPO, adresse e-mail)", "Contact to exercise rights (DPO, e-mail address)";
    privacy_purpose: "Finalité de la vérification", "Purpose of the verification";
    privacy_policy_url: "Lien vers votre politique de confidentialité (https)", "Link to your privacy policy (https)";
    journey_saved: "Parcours client enregistré.", "Customer journey saved.";
    invalid_display_name: "Le nom affiché doit compter de 1 à 80 caractères, sans caractère de contrôle.", "The display name must have 1 to 80 characters, without control characters.";
    invalid_accent_color: "La couleur doit s’écrire #RRGGBB, par exemple #0B4F9C.", "The colour must be written #RRGGBB, for example #0B4F9C.";
    invalid_logo: "Le logo doit être une image PNG ou JPEG lisible de 200 Ko au plus.", "The logo must be a readable PNG or JPEG image of 200 KB at most.";
    logo_unavailable: "Le logo ne peut pas être vérifié pour l’instant ; réessayez dans un moment.", "The logo cannot be checked right now; try again in a moment.";
    invalid_privacy: "La notice : 200 caractères au plus par champ (500 pour la finalité), sans caractère de contrôle, et un lien en https://.", "The notice: 200 characters at most per field (500 for the purpose), without control characters, and an https:// link.";
    privacy_incomplete: "Votre notice de confidentialité est incomplète : indiquez le responsable du traitement et un contact dans Paramètres, section « Parcours client ». En attendant, vos clients voient une notice construite à partir du nom de votre société.", "Your privacy notice is incomplete: give the controller and a contact in Settings, section \"Customer journey\". Until then, your customers see a notice built from your company's name.";
    invalid_retention: "La durée de conservation doit être un nombre de jours entre 0 et 3650.", "Retention must be a number of days between 0 and 3650.";
    audit_title: "Journal d’audit", "Audit log";
    when: "Date", "When";
    actor: "Auteur", "Actor";
    action: "Action", "Action";
    object: "Objet", "Object";
    all: "Toutes", "All";
    filter: "Filtrer", "Filter";
    next_page: "Page suivante", "Next page";
    export_csv: "Exporter en CSV", "Export as CSV";
    usage_title: "Consommation", "Usage";
    month: "Mois", "Month";
    acts: "Actes", "Acts";
    usage_batch_documents: "Documents de lots", "Batch documents";
    journeys: "Parcours", "Journeys";
    acts_per_month: "Actes par mois sur 12 mois", "Acts per month over 12 months";
    operator: "opérateur", "operator";
    yes: "oui", "yes";
    no: "non", "no";
    // Developers → API keys (PORTAL.md page 7) and Batches (page 5).
    keys_title: "Clés d’API", "API keys";
    keys_prefix: "Préfixe", "Prefix";
    keys_access: "Accès", "Access";
    keys_full: "Complet", "Full";
    keys_read_only: "Lecture seule", "Read-only";
    keys_created_by: "Créée par", "Created by";
    keys_operator: "opérateur", "operator";
    keys_created_at: "Créée le", "Created";
    keys_last_used: "Dernière utilisation", "Last used";
    keys_never: "jamais", "never";
    keys_state: "État", "State";
    keys_live: "Active", "Active";
    keys_revoked_on: "Révoquée le", "Revoked on";
    keys_revoke: "Révoquer", "Revoke";
    keys_none: "Aucune clé pour l’instant.", "No key yet.";
    keys_new: "Créer une clé", "Create a key";
    keys_read_only_label: "Lecture seule : la clé ne peut appeler que des opérations GET", "Read-only: the key can only call GET operations";
    keys_test_label: "Clé de test (sk_test_…) : elle n’agit que sur les données de test, à part des données réelles et jamais facturées", "Test key (sk_test_…): it acts only on test data, kept apart from live data and never billed";
    keys_mode: "Mode", "Mode";
    keys_mode_live: "Réel", "Live";
    keys_mode_test: "Test", "Test";
    keys_create: "Créer la clé", "Create the key";
    keys_licence: "La création de clés d’API demande la licence Groupe, que votre entreprise n’a pas. Contactez Sceau pour l’obtenir.", "Creating API keys requires the Group licence, which your company does not have. Contact Sceau to get it.";
    keys_created: "Clé créée. Copiez-la maintenant : elle ne sera plus jamais affichée.", "Key created. Copy it now: it will never be shown again.";
    keys_secret: "Votre nouvelle clé", "Your new key";
    keys_test_secret: "Votre première clé de test : les événements du mode test sont signés avec ce secret, à part de celui de production. Copiez-le maintenant ; il se renouvelle dans l’onglet Diffusion d’un parcours.", "Your first test key: test-mode events are signed with this secret, apart from the live one. Copy it now; it is renewed in a workflow's Diffusion tab.";
    keys_revoked: "Clé révoquée : l’API la refuse désormais.", "Key revoked: the API now refuses it.";
    keys_last_used_hint: "La dernière utilisation est relevée à la minute près.", "Last use is recorded to the minute.";
    keys_scopes: "Portée", "Scopes";
    keys_scope_images: "Résultats, images et certificats", "Results, images and certificates";
    keys_scope_none: "Résultats sans images", "Results without images";
    keys_images_label: "Images et certificats : la clé peut télécharger les images d’identité et les certificats des résultats", "Images and certificates: the key may download the identity images and the certificates of results";
    keys_images_not_yours: "Les clés que vous créez lisent les résultats sans leurs images ni leurs certificats : votre rôle ne les voit pas.", "The keys you create read results without their images or certificates: your role does not see them.";
    keys_images_refused: "Votre rôle ne permet pas de créer une clé qui accède aux images et aux certificats.", "Your role cannot create a key that reaches images and certificates.";
    batch_title: "Lots", "Batches";
    batch_id: "Lot", "Batch";
    batch_ref: "Référence externe", "External reference";
    batch_status: "Statut", "Status";
    batch_documents: "Documents", "Documents";
    batch_created: "Créé le", "Created";
    batch_submitted: "Soumis le", "Submitted";
    batch_ended: "Terminé le", "Ended";
    batch_expires: "Échéance", "Deadline";
    batch_none: "Aucun lot pour l’instant.", "No batch yet.";
    batch_next: "Lots plus anciens", "Older batches";
    batch_first: "Lots les plus récents", "Newest batches";
    batch_back: "Tous les lots", "All batches";
    batch_total: "total", "total";
    batch_pending: "en attente", "pending";
    batch_succeeded: "analysés", "analysed";
    batch_errored: "en erreur", "errored";
    batch_canceled: "annulés", "canceled";
    batch_expired: "expirés", "expired";
    batch_cancel: "Annuler le lot", "Cancel the batch";
    batch_cancel_hint: "Les documents en attente ne seront pas analysés ; ceux en cours d’analyse se terminent.", "Pending documents will not be analysed; those being analysed finish.";
    batch_was_canceled: "Lot annulé.", "Batch canceled.";
    batch_not_cancelable: "Ce lot ne peut plus être annulé.", "This batch can no longer be canceled.";
    batch_position: "N°", "No.";
    batch_category: "Catégorie", "Category";
    batch_item_status: "État", "State";
    batch_error: "Erreur", "Error";
    batch_result: "Résultat", "Result";
    batch_see_result: "Voir le résultat", "See the result";
    batch_no_documents: "Aucun document déposé.", "No document deposited.";
    batch_state_open: "Ouvert", "Open";
    batch_state_in_progress: "En cours", "In progress";
    batch_state_ended: "Terminé", "Ended";
    batch_state_canceled: "Annulé", "Canceled";
    batch_state_expired: "Expiré", "Expired";
    item_state_uploading: "En cours de dépôt", "Uploading";
    item_state_pending: "En attente", "Pending";
    item_state_processing: "En analyse", "Being analysed";
    item_state_succeeded: "Analysé", "Analysed";
    item_state_errored: "En erreur", "Errored";
    item_state_canceled: "Annulé", "Canceled";
    item_state_expired: "Expiré", "Expired";
    item_error_ia: "L’analyse par IA est désactivée pour votre entreprise.", "AI analysis is disabled for your company.";
    item_error_unreadable: "Document illisible.", "Unreadable document.";
    item_error_unsupported: "Type de document non pris en charge.", "Unsupported document type.";
    item_error_engine: "L’analyse a échoué de notre côté : déposez le document à nouveau.", "The analysis failed on our side: deposit the document again.";
    // Results, a result and its review, the review queue (PORTAL.md pages 3 and 4).
    results_title: "Résultats", "Results";
    filters: "Filtres", "Filters";
    any: "Tous", "Any";
    workflow: "Parcours", "Workflow";
    verdict: "Verdict", "Verdict";
    decision: "Décision", "Decision";
    external_ref: "Référence externe", "External reference";
    created_after: "Créés à partir du", "Created from";
    date: "Date", "Date";
    result_id: "Identifiant", "Result id";
    document_type: "Type de document", "Document type";
    review_status: "Revue humaine", "Human review";
    no_results: "Aucun résultat.", "No results.";
    first_page: "Première page", "First page";
    bad_filter: "Un filtre n’a pas pu être lu ; il est ignoré.", "A filter could not be read; it is ignored.";
    result_title: "Résultat", "Result";
    analysed_at: "Analysé le", "Analysed";
    country: "Pays", "Country";
    category: "Catégorie", "Category";
    settled_by: "Par", "By";
    settled_at: "Le", "On";
    comment: "Commentaire", "Comment";
    anomalies: "Points d’attention", "Points of attention";
    no_anomalies: "Aucun point d’attention.", "No point of attention.";
    severity: "Gravité", "Severity";
    meaning: "Signification", "Meaning";
    two_d_doc: "2D-Doc", "2D-Doc";
    seal_present: "Cachet présent", "Seal present";
    seal_read: "Lecture", "Reading";
    seal_signature: "Signature", "Signature";
    seal_trusted: "Autorité de confiance (liste ANTS)", "Trusted authority (ANTS list)";
    seal_data: "Données conformes au document", "Data matching the document";
    no_two_d_doc: "Aucun 2D-Doc.", "No 2D-Doc.";
    checks: "Contrôles effectués", "Checks performed";
    no_checks: "Aucun contrôle enregistré.", "No check recorded.";
    face_title: "Comparaison des visages", "Face comparison";
    face_outcome: "Résultat", "Outcome";
    face_score: "Similarité", "Similarity";
    face_thresholds: "même personne à partir de", "same person from";
    face_thresholds_below: "personnes différentes sous", "different people below";
    face_reason: "Motif", "Reason";
    face_document: "Photo du document", "Photo on the document";
    face_selfie: "Selfie", "Selfie";
    face_liveness: "La présence réelle de la personne (photo imprimée ou écran présenté à la caméra) n’est pas vérifiée.", "That the selfie shows a live person (not a printed photo or a screen held to the camera) is not checked.";
    check: "Contrôle", "Check";
    outcome: "Résultat", "Outcome";
    images: "Images", "Images";
    no_images: "Aucune image.", "No image.";
    image_recto: "Recto", "Front";
    image_verso: "Verso", "Back";
    image_selfie: "Selfie", "Selfie";
    image_alt: "Image du document", "Image of the document";
    image_open: "Ouvrir le fichier", "Open the file";
    image_purged: "Supprimée par la politique de conservation.", "Removed by the retention policy.";
    certificate: "Certificat", "Certificate";
    certificate_download: "Télécharger le certificat (PDF)", "Download the certificate (PDF)";
    review_form: "Décision de revue", "Review decision";
    review_comment_hint: "Obligatoire pour rejeter.", "Required to reject.";
    review_accept: "Accepter", "Accept";
    review_reject: "Rejeter", "Reject";
    review_settled: "Revue enregistrée.", "Review recorded.";
    review_comment_required: "Un commentaire est obligatoire pour rejeter.", "A comment is required to reject.";
    review_comment_too_long: "Le commentaire est trop long (2 000 caractères au plus).", "The comment is too long (2,000 characters at most).";
    review_not_pending: "Cette revue n’est plus en attente : elle a déjà été tranchée.", "This review is no longer pending: it was already settled.";
    reviews_title: "Revues en attente", "Reviews waiting";
    reviews_intro: "Les plus anciennes d’abord.", "Oldest first.";
    no_reviews: "Aucune revue en attente.", "No review waiting.";
    open_result: "Ouvrir", "Open";
    // Workflows and their Diffusion tab (PORTAL.md page 6).
    wf_title: "Parcours", "Workflows";
    wf_none: "Aucun parcours pour l’instant.", "No workflow yet.";
    wf_new: "Nouveau parcours", "New workflow";
    wf_name: "Nom", "Name";
    wf_category: "Catégorie de documents", "Document category";
    wf_min_age: "Âge minimum (facultatif)", "Minimum age (optional)";
    wf_min_age_hint: "Un titulaire plus jeune est refusé. Entre 1 et 120.", "A younger holder is refused. Between 1 and 120.";
    wf_countries: "Pays acceptés (facultatif)", "Accepted countries (optional)";
    wf_countries_hint: "Codes ISO 3166 alpha-3 séparés par des virgules, par exemple FRA, BEL. Vide : tous les pays.", "ISO 3166 alpha-3 codes separated by commas, for example FRA, BEL. Empty: every country.";
    wf_types: "Types de documents acceptés (facultatif)", "Accepted document types (optional)";
    wf_types_hint: "Aucune case cochée : tous les types de la catégorie.", "No box ticked: every type of the category.";
    wf_systematic_review: "Revue systématique (chaque résultat attend une revue)", "Systematic review (every result waits for review)";
    wf_create: "Créer le parcours", "Create the workflow";
    wf_save: "Enregistrer", "Save";
    wf_created: "Parcours créé.", "Workflow created.";
    wf_saved: "Parcours enregistré.", "Workflow saved.";
    wf_tabs: "Onglets du parcours", "Workflow tabs";
    wf_tab_settings: "Réglages", "Settings";
    wf_tab_diffusion: "Diffusion", "Diffusion";
    wf_rules: "Règles", "Rules";
    wf_webhook: "Webhook", "Webhook";
    wf_created_at: "Créé le", "Created on";
    wf_default_batch: "parcours des lots", "batch workflow";
    wf_none_set: "aucune", "none";
    wf_age_short: "Âge minimum", "Minimum age";
    wf_review_short: "Revue systématique", "Systematic review";
    wf_err_name: "Le nom doit compter de 1 à 200 caractères.", "The name must have 1 to 200 characters.";
    wf_err_category: "Choisissez une catégorie de documents.", "Choose a document category.";
    wf_err_default_batch: "Le workflow des lots par défaut d’une catégorie garde sa catégorie.", "A category’s default batch workflow keeps its category.";
    wf_err_min_age: "L’âge minimum doit être un nombre entier entre 1 et 120.", "The minimum age must be a whole number between 1 and 120.";
    wf_err_country: "Code pays ISO alpha-3 inconnu :", "Unknown ISO alpha-3 country code:";
    wf_err_type: "Type de document inconnu ou d’une autre catégorie :", "Unknown document type, or one of another category:";
    wf_webhook_url: "URL du webhook", "Webhook URL";
    wf_webhook_hint: "Les événements verification.* de ce parcours y sont envoyés. https obligatoire ; les adresses internes (boucle locale, réseau privé, lien local, métadonnées) sont refusées. Vide : aucun envoi.", "This workflow’s verification.* events are sent there. https required; internal addresses (loopback, private network, link-local, metadata) are refused. Empty: nothing is sent.";
    wf_webhook_saved: "URL du webhook enregistrée.", "Webhook URL saved.";
    wf_webhook_removed: "URL du webhook supprimée : plus aucun envoi.", "Webhook URL removed: nothing is sent any more.";
    wf_webhook_refused: "URL refusée :", "URL refused:";
    wf_webhook_http: "l’URL doit être en https.", "the URL must use https.";
    wf_webhook_internal: "cette adresse est interne (boucle locale, réseau privé, lien local ou métadonnées).", "this address is internal (loopback, private network, link-local or metadata).";
    wf_webhook_port: "ce port est refusé : utilisez 443, 80, ou un port de 1024 à 65535 qu'aucun service connu n'utilise (bases de données, files de messages, administration).", "this port is refused: use 443, 80, or a port from 1024 to 65535 that no well-known service uses (databases, message brokers, administration).";
    wf_webhook_malformed: "ce n’est pas une URL absolue valable.", "this is not a valid absolute URL.";
    wf_secret: "Secret de signature", "Signing secret";
    wf_secret_text: "Un seul secret signe les envois réels (hors mode test) de tous les parcours de l’entreprise. Il n’est affiché qu’à son renouvellement ; l’ancien continue de signer pendant 24 h, les envois portent alors les deux signatures.", "One secret signs the live deliveries (test mode aside) of all the company’s workflows. It is shown only when renewed; the old one keeps signing for 24 h, deliveries then carry both signatures.";
    wf_secret_rotate: "Renouveler le secret", "Renew the secret";
    wf_secret_new: "Nouveau secret : copiez-le maintenant, il ne sera plus affiché.", "New secret: copy it now, it will not be shown again.";
    wf_test: "Événement de test", "Test event";
    wf_test_text: "Envoie un événement verification.test à l’URL du webhook (jamais à l’URL de test), signé avec le secret de production comme les autres événements réels.", "Sends a verification.test event to the webhook URL (never to the test URL), signed with the live secret as the other live events.";
    wf_test_send: "Envoyer un événement de test", "Send a test event";
    wf_test_sent: "Événement verification.test mis en file d’envoi.", "verification.test event queued for delivery.";
    wf_test_no_url: "Enregistrez d’abord une URL de webhook.", "Save a webhook URL first.";
    wf_deliveries: "Derniers envois", "Last deliveries";
    wf_deliveries_none: "Aucun envoi pour ce parcours.", "No delivery for this workflow.";
    wf_col_event: "Événement", "Event";
    wf_col_event_id: "Identifiant", "Identifier";
    wf_col_attempt: "Essai", "Attempt";
    wf_col_status_code: "Code HTTP", "HTTP status";
    wf_col_duration: "Durée", "Duration";
    wf_col_outcome: "Résultat", "Outcome";
    wf_col_time: "Date", "Time";
    wf_col_action: "Action", "Action";
    wf_outcome_pending: "En attente d’envoi", "Waiting to be sent";
    wf_outcome_delivered: "Livré", "Delivered";
    wf_outcome_retrying: "Échec, nouvel essai prévu", "Failed, will be retried";
    wf_outcome_dead: "Abandonné", "Dead-lettered";
    wf_outcome_gone: "Refusé par le destinataire (410)", "Refused by the receiver (410)";
    wf_replay: "Renvoyer", "Replay";
    wf_replayed: "Événement remis en file d’envoi.", "Event queued again.";
    wf_replay_refused: "Seuls les événements abandonnés peuvent être renvoyés.", "Only dead-lettered events can be replayed.";
    wf_test_webhook_url: "URL du webhook de test", "Test webhook URL";
    wf_test_webhook_hint: "Les événements du mode test (clés de test) de ce parcours vont là, et jamais à l’URL ci-dessus, signés avec le secret de test. Vide : ils ne sont pas envoyés.", "This workflow’s test-mode events (test keys) go there, never to the URL above, signed with the test secret. Empty: they are not sent.";
    wf_test_secret: "Secret de signature de test", "Test signing secret";
    wf_test_secret_text: "Les événements du mode test sont signés avec un secret à part : un destinataire qui vérifie avec le secret de production les refuse. Il n’est affiché qu’à sa création (avec la première clé de test de l’entreprise, ou la première URL de test s’il n’en existait pas) et à son renouvellement ; l’ancien continue de signer pendant 24 h.", "Test-mode events are signed with a secret of their own: a receiver that verifies with the live secret refuses them. It is shown only when made (with the company's first test key, or its first test URL when no test key came before) and when renewed; the old one keeps signing for 24 h.";
    wf_test_secret_rotate: "Renouveler le secret de test", "Renew the test secret";
    wf_test_secret_new: "Secret de test : copiez-le maintenant, il ne sera plus affiché.", "Test secret: copy it now, it will not be shown again.";
    wf_test_deliveries: "Derniers événements du mode test", "Last test-mode events";
    wf_test_deliveries_none: "Aucun événement du mode test pour ce parcours.", "No test-mode event for this workflow.";
    wf_outcome_not_sent: "Non envoyé : aucune URL de test", "Not sent: no test URL";
}

impl Lang {
    /// The portal's words in this language.
    pub fn portal(self) -> &'static Words {
        match self {
            Lang::Fr => &FR,
            Lang::En => &EN,
        }
    }
}

/// What lowering the retention from `from` to `to` days deletes now: `images` images.
pub fn retention_impact(lang: Lang, from: u32, to: u32, images: u64) -> String {
    match (lang, images) {
        (Lang::Fr, 0) => format!("Passer la conservation de {from} à {to} jours ne supprime aucune image maintenant."),
        (Lang::Fr, 1) => format!("Passer la conservation de {from} à {to} jours supprime 1 image maintenant."),
        (Lang::Fr, n) => format!("Passer la conservation de {from} à {to} jours supprime {n} images maintenant."),
        (Lang::En, 0) => format!("Lowering the retention from {from} to {to} days deletes no image now."),
        (Lang::En, 1) => format!("Lowering the retention from {from} to {to} days deletes 1 image now."),
        (Lang::En, n) => format!("Lowering the retention from {from} to {to} days deletes {n} images now."),
    }
}

/// What disabling `email` does, and how many live API keys they created (`keys`).
pub fn disable_impact(lang: Lang, email: &str, keys: usize) -> String {
    match (lang, keys) {
        (Lang::Fr, 0) => format!("{email} ne pourra plus se connecter et ses sessions seront fermées. Ce membre n’a créé aucune clé d’API active."),
        (Lang::Fr, 1) => format!("{email} ne pourra plus se connecter et ses sessions seront fermées. Ce membre a créé 1 clé d’API active, qui continue de fonctionner si vous ne la révoquez pas."),
        (Lang::Fr, n) => format!("{email} ne pourra plus se connecter et ses sessions seront fermées. Ce membre a créé {n} clés d’API actives, qui continuent de fonctionner si vous ne les révoquez pas."),
        (Lang::En, 0) => format!("{email} will no longer sign in and their sessions will be closed. This member created no live API key."),
        (Lang::En, 1) => format!("{email} will no longer sign in and their sessions will be closed. This member created 1 live API key, which keeps working unless you revoke it."),
        (Lang::En, n) => format!("{email} will no longer sign in and their sessions will be closed. This member created {n} live API keys, which keep working unless you revoke them."),
    }
}

/// The flash after disabling a member, naming how many of their keys were revoked.
pub fn disabled_with_keys(lang: Lang, keys: usize) -> String {
    match (lang, keys) {
        (Lang::Fr, 1) => "Membre désactivé et 1 clé d’API révoquée.".to_owned(),
        (Lang::Fr, n) => format!("Membre désactivé et {n} clés d’API révoquées."),
        (Lang::En, 1) => "Member disabled and 1 API key revoked.".to_owned(),
        (Lang::En, n) => format!("Member disabled and {n} API keys revoked."),
    }
}

/// A role's name.
pub fn role(role: Role, lang: Lang) -> &'static str {
    match (role, lang) {
        (Role::Owner, Lang::Fr) => "Propriétaire",
        (Role::Owner, Lang::En) => "Owner",
        (Role::Admin, Lang::Fr) => "Administrateur",
        (Role::Admin, Lang::En) => "Administrator",
        (Role::Developer, Lang::Fr) => "Développeur",
        (Role::Developer, Lang::En) => "Developer",
        (Role::Reviewer, Lang::Fr) => "Réviseur",
        (Role::Reviewer, Lang::En) => "Reviewer",
        (Role::Viewer, Lang::Fr) => "Lecteur",
        (Role::Viewer, Lang::En) => "Viewer",
    }
}
