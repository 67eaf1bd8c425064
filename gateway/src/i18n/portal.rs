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
    wf_webhook_malformed: "ce n’est pas une URL absolue valable.", "this is not a valid absolute URL.";
    wf_secret: "Secret de signature", "Signing secret";
    wf_secret_text: "Un seul secret signe les envois de tous les parcours de l’entreprise. Il n’est affiché qu’à son renouvellement ; l’ancien continue de signer pendant 24 h, les envois portent alors les deux signatures.", "One secret signs the deliveries of all the company’s workflows. It is shown only when renewed; the old one keeps signing for 24 h, deliveries then carry both signatures.";
    wf_secret_rotate: "Renouveler le secret", "Renew the secret";
    wf_secret_new: "Nouveau secret : copiez-le maintenant, il ne sera plus affiché.", "New secret: copy it now, it will not be shown again.";
    wf_test: "Événement de test", "Test event";
    wf_test_text: "Envoie un événement verification.test à l’URL du webhook, signé comme les autres.", "Sends a verification.test event to the webhook URL, signed as the others.";
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
