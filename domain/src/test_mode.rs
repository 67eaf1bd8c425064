//! Test mode's made-up outcomes (API.md, Test mode): what each magic document of `test-documents/`
//! stands for, and the report a made-up analysis carries, shaped as the engine's are, so a
//! client's code meets in test mode what it will meet live. Test mode runs no real analysis: it
//! is not billed, and must not be a free way round the live service.

use crate::analysis::{AnalysisReport, Check, CheckOutcome};
use crate::catalogue::{Anomaly, AnomalyCode};
use crate::vocabulary::{DocumentCategory, DocumentType, ItemError, Verdict};

/// What a magic document yields when a test key deposits it (or a test journey submits it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MagicOutcome {
    /// A result with this verdict (a journey's too).
    Verdict(Verdict),
    /// A batch document in state `errored` with this code (a journey, which always ends with a
    /// result, gets `analyse_impossible`).
    Error(ItemError),
}

/// The magic documents, by their file's name in `test-documents/` (its stem is the outcome).
pub const MAGIC_DOCUMENTS: &[(&str, MagicOutcome)] = &[
    ("conforme.png", MagicOutcome::Verdict(Verdict::Conforme)),
    ("sans_anomalie.png", MagicOutcome::Verdict(Verdict::SansAnomalie)),
    ("non_conforme.png", MagicOutcome::Verdict(Verdict::NonConforme)),
    ("suspect.png", MagicOutcome::Verdict(Verdict::Suspect)),
    ("analyse_impossible.png", MagicOutcome::Verdict(Verdict::AnalyseImpossible)),
    ("unreadable_document.png", MagicOutcome::Error(ItemError::UnreadableDocument)),
    ("unsupported_document.png", MagicOutcome::Error(ItemError::UnsupportedDocument)),
    ("engine_failure.png", MagicOutcome::Error(ItemError::EngineFailure)),
    ("ia_desactivee.png", MagicOutcome::Error(ItemError::IaDesactivee)),
];

/// The result of a test key's document that is not a magic one: test mode analyses nothing real
/// (it is not billed), so it is `analyse_impossible`, saying why.
pub fn not_analysed() -> AnalysisReport {
    AnalysisReport {
        verdict: Verdict::AnalyseImpossible,
        document_type: DocumentType::Inconnu,
        document_country: None,
        anomalies: vec![Anomaly::new(AnomalyCode::NotAnalysedInTestMode)],
        two_d_doc: None,
        holder_age: None,
        pages: 1,
        checks: Vec::new(),
        face_match: None,
    }
}

/// The report of a made-up analysis of a document of `category` that found `verdict`: a French
/// passport or an invoice, with the anomaly that explains the verdict. `sans_anomalie` exists for
/// administrative documents only (API.md); asked of an identity document, it reads `conforme`.
pub fn report(verdict: Verdict, category: DocumentCategory) -> AnalysisReport {
    let identity = category == DocumentCategory::Identite;
    let verdict = match verdict {
        Verdict::SansAnomalie if identity => Verdict::Conforme,
        other => other,
    };
    let anomaly = match (verdict, identity) {
        (Verdict::NonConforme, true) => Some(AnomalyCode::MrzCheckDigitMismatch),
        (Verdict::NonConforme, false) => Some(AnomalyCode::TwoddocDataMismatch),
        (Verdict::Suspect, _) => Some(AnomalyCode::EditedWithSoftware),
        (Verdict::AnalyseImpossible, _) => Some(AnomalyCode::DocumentUnreadable),
        _ => None,
    };
    let concluded = !matches!(verdict, Verdict::AnalyseImpossible);
    let checks = match (identity, concluded) {
        (_, false) => Vec::new(),
        (true, true) => vec![
            CheckOutcome {
                check: Check::MrzCheckDigits,
                passed: verdict != Verdict::NonConforme,
            },
            CheckOutcome {
                check: Check::FileIntegrity,
                passed: verdict != Verdict::Suspect,
            },
        ],
        (false, true) => vec![CheckOutcome {
            check: Check::FileIntegrity,
            passed: verdict != Verdict::Suspect,
        }],
    };
    AnalysisReport {
        verdict,
        document_type: match (concluded, identity) {
            (false, _) => DocumentType::Inconnu,
            (true, true) => DocumentType::Passeport,
            (true, false) => DocumentType::Facture,
        },
        document_country: (concluded && identity).then(|| "FRA".to_owned()),
        anomalies: anomaly.map(Anomaly::new).into_iter().collect(),
        two_d_doc: None,
        holder_age: (concluded && identity).then_some(34),
        pages: 1,
        checks,
        face_match: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_and_every_item_error_has_its_magic_document() {
        for verdict in Verdict::ALL {
            assert!(
                MAGIC_DOCUMENTS.iter().any(|(_, o)| *o == MagicOutcome::Verdict(*verdict)),
                "{verdict}"
            );
        }
        for error in ItemError::ALL {
            assert!(MAGIC_DOCUMENTS.iter().any(|(_, o)| *o == MagicOutcome::Error(*error)), "{error}");
        }
        for (file, outcome) in MAGIC_DOCUMENTS {
            let stem = match outcome {
                MagicOutcome::Verdict(v) => v.as_str(),
                MagicOutcome::Error(e) => e.as_str(),
            };
            assert_eq!(*file, format!("{stem}.png"));
        }
    }

    #[test]
    fn a_made_up_report_is_consistent_with_its_verdict() {
        for category in DocumentCategory::ALL {
            for verdict in Verdict::ALL {
                let report = report(*verdict, *category);
                let expected = match (verdict, category) {
                    (Verdict::SansAnomalie, DocumentCategory::Identite) => Verdict::Conforme,
                    (v, _) => *v,
                };
                assert_eq!(report.verdict, expected);
                assert_eq!(
                    report.has_reject_anomaly(),
                    expected == Verdict::NonConforme,
                    "{verdict} {category}"
                );
                assert_eq!(
                    report.anomalies.is_empty(),
                    matches!(expected, Verdict::Conforme | Verdict::SansAnomalie)
                );
                let type_category = report.document_type.category();
                assert!(type_category.is_none() || type_category == Some(*category), "{verdict} {category}");
            }
        }
    }
}
