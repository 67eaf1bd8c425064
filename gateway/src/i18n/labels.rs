//! The words the certificate and the authenticity page put on each fact, in French and English,
//! in one place: a reader compares the two documents, so they must say the same thing.

use crate::i18n::Lang;
use domain::analysis::Check;
use domain::vocabulary::{
    AnomalyCode, Decision, DocumentCategory, DocumentType, ReadStatus, ReviewStatus, Severity, SignatureStatus, Verdict,
};

/// An instant as printed: `22/11/2026 à 23:41:40 UTC` in French, `2026-11-22 23:41:40 UTC` in
/// English.
pub fn date(t: chrono::DateTime<chrono::Utc>, lang: Lang) -> String {
    let format = match lang {
        Lang::Fr => "%d/%m/%Y à %H:%M:%S UTC",
        Lang::En => "%Y-%m-%d %H:%M:%S UTC",
    };
    t.format(format).to_string()
}

/// The category's name.
pub fn category(category: DocumentCategory, lang: Lang) -> &'static str {
    match (category, lang) {
        (DocumentCategory::Identite, Lang::Fr) => "Document d’identité",
        (DocumentCategory::Identite, Lang::En) => "Identity document",
        (DocumentCategory::Administratif, Lang::Fr) => "Document administratif",
        (DocumentCategory::Administratif, Lang::En) => "Administrative document",
    }
}

/// The verdict in words.
pub fn verdict(verdict: Verdict, lang: Lang) -> &'static str {
    match (verdict, lang) {
        (Verdict::Conforme, Lang::Fr) => "Conforme",
        (Verdict::Conforme, Lang::En) => "Compliant",
        (Verdict::SansAnomalie, Lang::Fr) => "Sans anomalie détectée",
        (Verdict::SansAnomalie, Lang::En) => "No anomaly detected",
        (Verdict::NonConforme, Lang::Fr) => "Non conforme",
        (Verdict::NonConforme, Lang::En) => "Not compliant",
        (Verdict::Suspect, Lang::Fr) => "Suspect",
        (Verdict::Suspect, Lang::En) => "Suspicious",
        (Verdict::AnalyseImpossible, Lang::Fr) => "Analyse impossible",
        (Verdict::AnalyseImpossible, Lang::En) => "Analysis not possible",
    }
}

pub fn decision(decision: Option<Decision>, lang: Lang) -> &'static str {
    match (decision, lang) {
        (Some(Decision::Conforme), Lang::Fr) => "Conforme",
        (Some(Decision::Conforme), Lang::En) => "Compliant",
        (Some(Decision::AVerifier), Lang::Fr) => "À vérifier",
        (Some(Decision::AVerifier), Lang::En) => "To be checked",
        (Some(Decision::Refuse), Lang::Fr) => "Refusé",
        (Some(Decision::Refuse), Lang::En) => "Refused",
        (None, Lang::Fr) => "Aucune (le verdict seul s’applique)",
        (None, Lang::En) => "None (the verdict alone applies)",
    }
}

pub fn review(review: Option<ReviewStatus>, lang: Lang) -> &'static str {
    match (review, lang) {
        (Some(ReviewStatus::Pending), Lang::Fr) => "En attente",
        (Some(ReviewStatus::Pending), Lang::En) => "Pending",
        (Some(ReviewStatus::Accepted), Lang::Fr) => "Acceptée",
        (Some(ReviewStatus::Accepted), Lang::En) => "Accepted",
        (Some(ReviewStatus::Rejected), Lang::Fr) => "Rejetée",
        (Some(ReviewStatus::Rejected), Lang::En) => "Rejected",
        (None, Lang::Fr) => "Non requise",
        (None, Lang::En) => "Not required",
    }
}

pub fn severity(severity: Severity, lang: Lang) -> &'static str {
    match (severity, lang) {
        (Severity::Info, Lang::Fr) => "Information",
        (Severity::Info, Lang::En) => "Information",
        (Severity::Warning, Lang::Fr) => "Avertissement",
        (Severity::Warning, Lang::En) => "Warning",
        (Severity::Reject, Lang::Fr) => "Bloquant",
        (Severity::Reject, Lang::En) => "Blocking",
    }
}

/// A check's name; the French one is the engine's own (`Check::label_fr`).
pub fn check(check: Check, lang: Lang) -> &'static str {
    match lang {
        Lang::Fr => check.label_fr(),
        Lang::En => match check {
            Check::TwoDDocSignature => "2D-Doc seal signature (ANTS trust list)",
            Check::TwoDDocData => "Seal data matching the document",
            Check::MrzCheckDigits => "Check digits of the machine-readable zone",
            Check::DocumentValidity => "Validity date of the document",
            Check::FileIntegrity => "File integrity (metadata, editing, quality)",
            Check::IssuerRegister => "Issuer confirmed in a company register",
            Check::SelfieMatch => "Selfie matching the document's photo (external service)",
            Check::FaceMatch => "Selfie compared with the document's photo",
        },
    }
}

/// A check's outcome.
pub fn outcome(passed: bool, lang: Lang) -> &'static str {
    match (passed, lang) {
        (true, Lang::Fr) => "Réussie",
        (true, Lang::En) => "Passed",
        (false, Lang::Fr) => "Échouée",
        (false, Lang::En) => "Failed",
    }
}

pub fn yes_no(value: bool, lang: Lang) -> &'static str {
    match (value, lang) {
        (true, Lang::Fr) => "oui",
        (true, Lang::En) => "yes",
        (false, Lang::Fr) => "non",
        (false, Lang::En) => "no",
    }
}

/// The name of a `documentType` of `API.md`.
pub fn document_type(value: DocumentType, lang: Lang) -> &'static str {
    let (fr, en) = match value {
        DocumentType::CarteIdentite => ("Carte nationale d’identité", "National identity card"),
        DocumentType::Passeport => ("Passeport", "Passport"),
        DocumentType::TitreSejour => ("Titre de séjour", "Residence permit"),
        DocumentType::PermisConduire => ("Permis de conduire", "Driving licence"),
        DocumentType::AutreIdentite => ("Autre pièce d’identité", "Other identity document"),
        DocumentType::JustificatifDomicile => ("Justificatif de domicile", "Proof of address"),
        DocumentType::Facture => ("Facture", "Invoice"),
        DocumentType::AvisImposition => ("Avis d’imposition", "Tax notice"),
        DocumentType::BulletinSalaire => ("Bulletin de salaire", "Payslip"),
        DocumentType::Rib => ("Relevé d’identité bancaire", "Bank account details"),
        DocumentType::ReleveCompte => ("Relevé de compte", "Bank statement"),
        DocumentType::ContratTravail => ("Contrat de travail", "Employment contract"),
        DocumentType::Attestation => ("Attestation", "Certificate"),
        DocumentType::AutreAdministratif => ("Autre document administratif", "Other administrative document"),
        DocumentType::Inconnu => ("Non déterminé", "Not determined"),
    };
    match lang {
        Lang::Fr => fr,
        Lang::En => en,
    }
}

/// The issuing country (ISO 3166-1 alpha-3), or words for an unknown one.
pub fn country(value: Option<&str>, lang: Lang) -> &str {
    match (value, lang) {
        (Some(code), _) => code,
        (None, Lang::Fr) => "non déterminé",
        (None, Lang::En) => "not determined",
    }
}

pub fn signature_status(status: SignatureStatus, lang: Lang) -> &'static str {
    let (fr, en) = match status {
        SignatureStatus::Valid => ("valide", "valid"),
        SignatureStatus::Invalid => ("invalide", "invalid"),
        SignatureStatus::UnknownCertificate => ("certificat inconnu", "unknown certificate"),
        SignatureStatus::UntrustedAuthority => ("autorité non reconnue", "authority not recognised"),
        SignatureStatus::CertificateExpired => ("certificat expiré", "certificate expired"),
        SignatureStatus::NotChecked => ("non vérifiée", "not checked"),
    };
    match lang {
        Lang::Fr => fr,
        Lang::En => en,
    }
}

pub fn read_status(status: ReadStatus, lang: Lang) -> &'static str {
    let (fr, en) = match status {
        ReadStatus::Read => ("cachet lu", "seal read"),
        ReadStatus::Unreadable => ("cachet présent mais illisible", "seal present but unreadable"),
        ReadStatus::Malformed => (
            "cachet non conforme à la spécification de l’ANTS",
            "seal not conforming to the ANTS specification",
        ),
    };
    match lang {
        Lang::Fr => fr,
        Lang::En => en,
    }
}

/// What a point of attention means, in the catalogue's words (never the engine's free text).
pub fn anomaly_meaning(code: AnomalyCode, lang: Lang) -> &'static str {
    match lang {
        Lang::Fr => code.meaning_fr(),
        Lang::En => code.meaning(),
    }
}
