//! The non-personal facts a certificate states, in one canonical form, and their fingerprint.
//! The certificate prints the fingerprint, the authenticity page shows the same facts and
//! recomputes it from the record: a doctored certificate (a verdict, a check or a point of
//! attention changed) no longer matches the page. Personal data never enters the facts, so the
//! fingerprint can be public and reveals nothing the page does not already show.

use crate::i18n::{labels, Lang};
use chrono::{DateTime, Utc};
use domain::analysis::{Check, CheckOutcome};
use domain::face_match::FaceMatch;
use domain::model::Consultation;
use domain::vocabulary::{
    AnomalyCode, Decision, DocumentCategory, DocumentType, ReadStatus, ReviewStatus, Severity, SignatureStatus, TwoDDoc, Verdict,
};
use serde::Serialize;
use std::fmt;

/// Names the canonical form: changing what goes into it means a new label, so fingerprints of
/// different forms can never be taken for one another.
const FORM: &[u8] = b"sceau-certificate-facts-v1\n";
/// Bytes of SHA-256 kept: 96 bits, far beyond what a forger can search for a matching variant,
/// and still 24 characters a reader can compare at a glance.
const FINGERPRINT_BYTES: usize = 12;

/// What the certificate says of a consultation, personal data left out (no reference, no name,
/// no date of birth, no document number: the consultation holds none of them but its reference).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    pub consultation: String,
    #[serde(with = "domain::time::serde_millis")]
    pub analyzed_at: DateTime<Utc>,
    #[serde(with = "domain::time::serde_millis")]
    pub created_at: DateTime<Utc>,
    pub category: DocumentCategory,
    pub document_type: DocumentType,
    pub document_country: Option<String>,
    pub verdict: Verdict,
    pub decision: Option<Decision>,
    pub review_status: Option<ReviewStatus>,
    pub checks: Vec<CheckOutcome>,
    /// The face comparison of a journey's selfie: its outcome and similarity (absent, and so out
    /// of the fingerprint, for a document without a selfie).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub face_match: Option<FaceMatch>,
    pub two_d_doc: Option<SealFacts>,
    pub anomalies: Vec<AnomalyFact>,
}

/// The 2D-Doc seal as the certificate reports it (the engine's English explanation is not printed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SealFacts {
    pub present: bool,
    pub signature_status: SignatureStatus,
    pub signature_verified: bool,
    pub trusted: bool,
    pub data_matches: bool,
    pub read_status: ReadStatus,
}

/// A point of attention by its catalogue code; the engine's free-text detail stays out, as it
/// could carry anything an external engine wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnomalyFact {
    pub severity: Severity,
    pub code: AnomalyCode,
}

/// The short digest of a set of facts, printed as groups of four hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint([u8; FINGERPRINT_BYTES]);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, pair) in self.0.chunks(2).enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            for byte in pair {
                write!(f, "{byte:02X}")?;
            }
        }
        Ok(())
    }
}

impl SealFacts {
    fn of(seal: &TwoDDoc) -> Self {
        Self {
            present: seal.present,
            signature_status: seal.signature_status,
            signature_verified: seal.signature_verified,
            trusted: seal.trusted,
            data_matches: seal.data_matches,
            read_status: seal.read_status,
        }
    }
}

/// One line of the checks performed, as the certificate and the authenticity page both list it:
/// the check, its outcome, and for the face comparison why it was not made (apart, as it is long).
pub struct CheckLine {
    pub text: String,
    pub reason: Option<&'static str>,
}

impl Facts {
    /// The checks performed, in `lang`; the face comparison with its outcome and similarity, and
    /// listed too when it was not made.
    pub fn check_lines(&self, lang: Lang) -> Vec<CheckLine> {
        let face_line = |face: &FaceMatch| {
            let label = match lang {
                Lang::Fr => face.label_fr(),
                Lang::En => face.label_en(),
            };
            let text = match face.similarity() {
                Some(similarity) => {
                    let value = format!("{similarity:.2}");
                    match lang {
                        Lang::Fr => format!("{label} (similarité {})", value.replace('.', ",")),
                        Lang::En => format!("{label} (similarity {value})"),
                    }
                }
                None => label.to_owned(),
            };
            let reason = match (face, lang) {
                (FaceMatch::NotChecked { reason }, Lang::Fr) => Some(reason.detail_fr()),
                (FaceMatch::NotChecked { reason }, Lang::En) => Some(reason.detail()),
                _ => None,
            };
            (text, reason)
        };
        let mut lines: Vec<CheckLine> = self
            .checks
            .iter()
            .map(|outcome| {
                let (result, reason) = match (outcome.check, &self.face_match) {
                    (Check::FaceMatch, Some(face)) => face_line(face),
                    _ => (labels::outcome(outcome.passed, lang).to_owned(), None),
                };
                CheckLine {
                    text: format!("{} — {result}", labels::check(outcome.check, lang)),
                    reason,
                }
            })
            .collect();
        if let Some(face @ FaceMatch::NotChecked { .. }) = &self.face_match {
            let (result, reason) = face_line(face);
            lines.push(CheckLine {
                text: format!("{} — {result}", labels::check(Check::FaceMatch, lang)),
                reason,
            });
        }
        lines
    }

    /// The facts of `c`, the checks the engine performed on it and its face comparison.
    pub fn of(c: &Consultation, checks: &[CheckOutcome], face_match: Option<FaceMatch>) -> Self {
        Self {
            consultation: c.id.to_string(),
            analyzed_at: c.analyzed_at,
            created_at: c.created_at,
            category: c.document_category,
            document_type: c.document_type,
            document_country: c.document_country.clone(),
            verdict: c.verdict,
            decision: c.decision,
            review_status: c.review_status,
            checks: checks.to_vec(),
            face_match,
            two_d_doc: c.two_d_doc.as_ref().map(SealFacts::of),
            anomalies: c
                .anomalies
                .iter()
                .map(|a| AnomalyFact {
                    severity: a.severity,
                    code: a.code,
                })
                .collect(),
        }
    }

    /// SHA-256 of the canonical form (the form label, then the facts as JSON in declaration
    /// order), cut to its first bytes.
    pub fn fingerprint(&self) -> Result<Fingerprint, serde_json::Error> {
        let mut canonical = FORM.to_vec();
        serde_json::to_writer(&mut canonical, self)?;
        let digest = ring::digest::digest(&ring::digest::SHA256, &canonical);
        let mut short = [0u8; FINGERPRINT_BYTES];
        short.copy_from_slice(&digest.as_ref()[..FINGERPRINT_BYTES]);
        Ok(Fingerprint(short))
    }

    /// The facts as a certificate downloaded before the review was settled states them: the
    /// review is the one fact that changes after the analysis, and such a certificate is genuine.
    pub fn before_review(&self) -> Option<Self> {
        matches!(self.review_status, Some(ReviewStatus::Accepted | ReviewStatus::Rejected)).then(|| Self {
            review_status: Some(ReviewStatus::Pending),
            ..self.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::analysis::Check;

    fn sample() -> Facts {
        Facts {
            consultation: "CSL-20260101-0123456789ab".into(),
            analyzed_at: domain::time::parse("2026-01-01T10:20:30.000Z").unwrap(),
            created_at: domain::time::parse("2026-01-01T10:20:31.000Z").unwrap(),
            category: DocumentCategory::Administratif,
            document_type: domain::vocabulary::DocumentType::AvisImposition,
            document_country: Some("FRA".into()),
            verdict: Verdict::NonConforme,
            decision: Some(Decision::Refuse),
            review_status: None,
            checks: vec![
                CheckOutcome {
                    check: Check::TwoDDocSignature,
                    passed: true,
                },
                CheckOutcome {
                    check: Check::TwoDDocData,
                    passed: false,
                },
            ],
            face_match: None,
            two_d_doc: Some(SealFacts {
                present: true,
                signature_status: domain::vocabulary::SignatureStatus::Valid,
                signature_verified: true,
                trusted: true,
                data_matches: false,
                read_status: domain::vocabulary::ReadStatus::Read,
            }),
            anomalies: vec![AnomalyFact {
                severity: Severity::Reject,
                code: AnomalyCode::TwoddocDataMismatch,
            }],
        }
    }

    #[test]
    fn the_fingerprint_is_stable_and_printed_in_groups() {
        let a = sample().fingerprint().unwrap();
        assert_eq!(a, sample().fingerprint().unwrap());
        let text = a.to_string();
        let groups: Vec<&str> = text.split(' ').collect();
        assert_eq!(groups.len(), 6, "{text}");
        assert!(groups
            .iter()
            .all(|g| g.len() == 4 && g.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())));
    }

    /// One way of doctoring a certificate's facts.
    type Doctor = fn(&mut Facts);

    #[test]
    fn any_changed_fact_changes_the_fingerprint() {
        let genuine = sample().fingerprint().unwrap();
        let doctored: Vec<(&str, Doctor)> = vec![
            ("consultation", |f| f.consultation = "CSL-20260101-0123456789ac".into()),
            ("analysis date", |f| {
                f.analyzed_at = domain::time::parse("2026-01-02T10:20:30.000Z").unwrap()
            }),
            ("record date", |f| {
                f.created_at = domain::time::parse("2026-01-02T10:20:31.000Z").unwrap()
            }),
            ("category", |f| f.category = DocumentCategory::Identite),
            ("document type", |f| f.document_type = DocumentType::Facture),
            ("country", |f| f.document_country = Some("BEL".into())),
            ("no country", |f| f.document_country = None),
            ("verdict", |f| f.verdict = Verdict::Conforme),
            ("decision", |f| f.decision = Some(Decision::Conforme)),
            ("no decision", |f| f.decision = None),
            ("review", |f| f.review_status = Some(ReviewStatus::Accepted)),
            ("check outcome", |f| f.checks[1].passed = true),
            ("check dropped", |f| {
                f.checks.pop();
            }),
            ("check added", |f| {
                f.checks.push(CheckOutcome {
                    check: Check::IssuerRegister,
                    passed: true,
                })
            }),
            ("seal signature", |f| {
                if let Some(s) = &mut f.two_d_doc {
                    s.signature_status = domain::vocabulary::SignatureStatus::Invalid;
                }
            }),
            ("seal data", |f| {
                if let Some(s) = &mut f.two_d_doc {
                    s.data_matches = true;
                }
            }),
            ("no seal", |f| f.two_d_doc = None),
            ("severity", |f| f.anomalies[0].severity = Severity::Warning),
            ("code", |f| f.anomalies[0].code = AnomalyCode::LowResolution),
            ("point dropped", |f| f.anomalies.clear()),
        ];
        for (what, change) in doctored {
            let mut facts = sample();
            change(&mut facts);
            assert_ne!(facts.fingerprint().unwrap(), genuine, "{what} changed, the fingerprint did not");
        }
    }

    #[test]
    fn a_settled_review_remembers_the_pending_certificate() {
        let mut facts = sample();
        assert_eq!(facts.before_review(), None, "no review, nothing before it");
        facts.review_status = Some(ReviewStatus::Pending);
        let pending = facts.fingerprint().unwrap();
        assert_eq!(facts.before_review(), None);
        facts.review_status = Some(ReviewStatus::Accepted);
        let before = facts.before_review().unwrap();
        assert_eq!(before.fingerprint().unwrap(), pending);
        assert_ne!(facts.fingerprint().unwrap(), pending);
    }
}
