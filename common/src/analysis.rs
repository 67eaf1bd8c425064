//! What the analysis engine reports about one document: the findings the recorder turns into a
//! consultation. It travels from a worker to the recorder, so it is plain serde data.

use crate::domain::{Anomaly, DocumentCategory, Severity, TwoDDoc, Verdict};
use serde::{Deserialize, Serialize};

/// The engine's findings on one document (front, and back for identity documents).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisReport {
    pub verdict: Verdict,
    /// A `documentType` value of `API.md` (`inconnu` when nothing identifies it).
    pub document_type: String,
    /// ISO 3166-1 alpha-3, `None` when unknown.
    pub document_country: Option<String>,
    pub anomalies: Vec<Anomaly>,
    pub two_d_doc: Option<TwoDDoc>,
    /// Holder's age in whole years at analysis time, when the engine read a birth date.
    pub holder_age: Option<u32>,
    /// Pages in the analysed file (1 for an image).
    pub pages: u32,
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
}
