//! What the analysis engine reports about one document: the findings the recorder turns into a
//! consultation. It travels from a worker to the recorder, so it is plain serde data.

use crate::face_match::FaceComparison;
use crate::vocabulary::{Anomaly, DocumentCategory, DocumentType, Severity, TwoDDoc, Verdict};
use serde::{Deserialize, Serialize};

/// The engine's findings on one document (front, and back for identity documents).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisReport {
    pub verdict: Verdict,
    /// A `documentType` value of `API.md` (`inconnu` when nothing identifies it).
    pub document_type: DocumentType,
    /// ISO 3166-1 alpha-3, `None` when unknown.
    pub document_country: Option<String>,
    pub anomalies: Vec<Anomaly>,
    pub two_d_doc: Option<TwoDDoc>,
    /// Holder's age in whole years at analysis time, when the engine read a birth date.
    pub holder_age: Option<u32>,
    /// Pages in the analysed file (1 for an image).
    pub pages: u32,
    /// The checks actually performed, with their outcome (the certificate lists them; a check not
    /// performed is absent).
    #[serde(default)]
    pub checks: Vec<CheckOutcome>,
    /// What the comparison of the selfie with the document's portrait concluded; `None` when no
    /// selfie came with the document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub face_match: Option<FaceComparison>,
}

/// One check the engine performed on a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The 2D-Doc seal's signature against the ANTS trust list.
    TwoDDocSignature,
    /// The seal's data against the printed text.
    TwoDDocData,
    /// The machine-readable zone's check digits.
    MrzCheckDigits,
    /// The document's expiry date.
    DocumentValidity,
    /// File and image forensics (metadata, editing software, quality).
    FileIntegrity,
    /// The issuer's SIREN/SIRET in a company register.
    IssuerRegister,
    /// The selfie against the document's photo, by the external service.
    SelfieMatch,
    /// The selfie's face against the document's portrait, by Sceau's own models.
    FaceMatch,
}

impl Check {
    /// The check's name on the certificate, in French.
    pub fn label_fr(self) -> &'static str {
        match self {
            Self::TwoDDocSignature => "Signature du cachet 2D-Doc (liste de confiance ANTS)",
            Self::TwoDDocData => "Concordance des données du cachet avec le document",
            Self::MrzCheckDigits => "Clés de contrôle de la bande MRZ",
            Self::DocumentValidity => "Date de validité du document",
            Self::FileIntegrity => "Intégrité du fichier (métadonnées, retouche, qualité)",
            Self::IssuerRegister => "Émetteur confirmé dans un registre des entreprises",
            Self::SelfieMatch => "Correspondance du selfie avec la photo du document (service externe)",
            Self::FaceMatch => "Comparaison du selfie avec la photo du document",
        }
    }
}

/// A check and whether the document passed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckOutcome {
    pub check: Check,
    pub passed: bool,
}

impl AnalysisReport {
    /// True when one anomaly blocks (`severity: reject`).
    pub fn has_reject_anomaly(&self) -> bool {
        self.anomalies.iter().any(|a| a.severity == Severity::Reject)
    }
}

/// The bytes a job hands to the engine, already decrypted.
#[derive(Debug, Clone)]
pub struct AnalysisInput {
    pub category: DocumentCategory,
    pub front: Vec<u8>,
    pub back: Option<Vec<u8>>,
    pub selfie: Option<Vec<u8>>,
    /// The customer consented to the biometric comparison of the selfie with the document (GDPR
    /// art. 9); without it the selfie is kept for a reviewer and never compared.
    pub biometric_consent: bool,
}
