//! What the checks of one document add up to before the verdict: the anomalies, what positively
//! established the document, and the descriptive fields of the consultation.

use domain::analysis::{Check, CheckOutcome};
use domain::face_match::FaceComparison;
use domain::vocabulary::{Anomaly, AnomalyCode, DocumentType, TwoDDoc};

/// What positively establishes a document; the verdict needs one to be favourable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Evidence {
    /// Nothing could be verified: no seal, no MRZ, no confirmed issuer.
    Nothing,
    /// A trusted 2D-Doc seal verified and its data match the visible document.
    VerifiedSeal,
    /// An identity document's MRZ was read with every check digit right (and its seal, if any, verified).
    VerifiedMrz,
    /// No verified seal, but the issuer was confirmed in a company register.
    ConfirmedIssuer,
}

/// The findings of every check on one document (they travel from the sandbox child to the worker,
/// which adds those of the checks that go on the network).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Findings {
    pub anomalies: Vec<Anomaly>,
    pub evidence: Evidence,
    pub two_d_doc: Option<TwoDDoc>,
    pub document_type: DocumentType,
    pub document_country: Option<String>,
    pub holder_age: Option<u32>,
    /// The checks performed, in the order they ran.
    pub checks: Vec<CheckOutcome>,
    /// The comparison of the selfie with the document's portrait, when a selfie came.
    pub face_match: Option<FaceComparison>,
}

impl Findings {
    pub fn new() -> Self {
        Self {
            anomalies: Vec::new(),
            evidence: Evidence::Nothing,
            two_d_doc: None,
            document_type: DocumentType::Inconnu,
            document_country: None,
            holder_age: None,
            checks: Vec::new(),
            face_match: None,
        }
    }

    /// Records that `check` ran; run twice (front and back), it passes only if both passed.
    pub fn checked(&mut self, check: Check, passed: bool) {
        match self.checks.iter_mut().find(|c| c.check == check) {
            Some(outcome) => outcome.passed &= passed,
            None => self.checks.push(CheckOutcome { check, passed }),
        }
    }

    /// Adds anomalies, once per code: the same finding on the front and the back counts once.
    pub fn add(&mut self, anomalies: impl IntoIterator<Item = Anomaly>) {
        for found in anomalies {
            if !self.anomalies.iter().any(|a| a.code == found.code) {
                self.anomalies.push(found);
            }
        }
    }

    /// Adds anomalies that may share a code but each say something else (the departures of one seal),
    /// once per code and message.
    pub fn add_distinct(&mut self, anomalies: impl IntoIterator<Item = Anomaly>) {
        for found in anomalies {
            if !self.anomalies.contains(&found) {
                self.anomalies.push(found);
            }
        }
    }

    /// Adds the catalogue anomaly `code`.
    pub fn add_code(&mut self, code: AnomalyCode) {
        self.add([Anomaly::new(code)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anomaly_is_counted_once() {
        let mut findings = Findings::new();
        findings.add_code(AnomalyCode::HolderMinor);
        findings.add_code(AnomalyCode::HolderMinor);
        assert_eq!(findings.anomalies.len(), 1);
    }

    #[test]
    fn distinct_anomalies_of_one_code_are_each_kept_once() {
        let mut findings = Findings::new();
        let first = Anomaly::with_detail(AnomalyCode::TwoddocNonConformity, "first");
        let second = Anomaly::with_detail(AnomalyCode::TwoddocNonConformity, "second");
        findings.add_distinct([first.clone(), second.clone(), first.clone()]);
        assert_eq!(findings.anomalies, [first, second]);
    }
}
