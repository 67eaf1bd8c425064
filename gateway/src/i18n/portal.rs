//! The portal's words, French first, each English beside its French so the two never drift.
//! The labels of the API's vocabularies (verdicts, decisions…) come from `labels`.

use super::Lang;
use common::team::Role;

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
    language: "Langue", "Language";
    role: "Rôle", "Role";
    // Results, a result and its review, the review queue (PORTAL.md pages 3 and 4).
    results_title: "Résultats", "Results";
    filters: "Filtres", "Filters";
    filter: "Filtrer", "Filter";
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
    next_page: "Page suivante", "Next page";
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
