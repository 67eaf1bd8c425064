//! The workflow decision (`API.md`, Verdict and decision): a default from the verdict, then the
//! client's rules. The verdict itself is never changed.

use crate::analysis::AnalysisReport;
use crate::model::WorkflowRules;
use crate::vocabulary::{Decision, ReviewStatus, Verdict};

/// The decision and the review status it implies.
pub fn decide(report: &AnalysisReport, rules: &WorkflowRules) -> (Decision, Option<ReviewStatus>) {
    let mut decision = match report.verdict {
        Verdict::Conforme | Verdict::SansAnomalie => Decision::Conforme,
        Verdict::Suspect | Verdict::AnalyseImpossible => Decision::AVerifier,
        Verdict::NonConforme => Decision::Refuse,
    };
    if decision != Decision::Refuse && violates(report, rules) {
        decision = Decision::Refuse;
    }
    // A selfie the engine could not compare is compared by a person.
    let selfie_unsettled = report.face_match.is_some_and(|face| face.outcome.needs_review());
    if decision == Decision::Conforme && (rules.systematic_review || selfie_unsettled) {
        decision = Decision::AVerifier;
    }
    let review = (decision == Decision::AVerifier).then_some(ReviewStatus::Pending);
    (decision, review)
}

fn violates(report: &AnalysisReport, rules: &WorkflowRules) -> bool {
    let too_young = matches!((rules.min_age, report.holder_age), (Some(min), Some(age)) if age < min);
    let country_ok = match (&rules.accepted_countries, report.document_country.as_deref()) {
        (Some(list), Some(country)) => list.iter().any(|x| x.eq_ignore_ascii_case(country)),
        (Some(_), None) => false,
        (None, _) => true,
    };
    let type_ok = rules
        .accepted_document_types
        .as_ref()
        .is_none_or(|types| types.contains(&report.document_type));
    too_young || !country_ok || !type_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::DocumentType;

    fn report(verdict: Verdict) -> AnalysisReport {
        AnalysisReport {
            verdict,
            document_type: DocumentType::Passeport,
            document_country: Some("FRA".into()),
            anomalies: vec![],
            two_d_doc: None,
            holder_age: Some(17),
            pages: 1,
            checks: vec![],
            face_match: None,
        }
    }

    #[test]
    fn default_decisions_follow_the_verdict() {
        let none = WorkflowRules::default();
        assert_eq!(decide(&report(Verdict::Conforme), &none), (Decision::Conforme, None));
        assert_eq!(
            decide(&report(Verdict::Suspect), &none),
            (Decision::AVerifier, Some(ReviewStatus::Pending))
        );
        assert_eq!(decide(&report(Verdict::NonConforme), &none), (Decision::Refuse, None));
        assert_eq!(
            decide(&report(Verdict::AnalyseImpossible), &none),
            (Decision::AVerifier, Some(ReviewStatus::Pending))
        );
    }

    #[test]
    fn rules_apply() {
        let adult = WorkflowRules {
            min_age: Some(18),
            ..Default::default()
        };
        assert_eq!(decide(&report(Verdict::Conforme), &adult).0, Decision::Refuse);
        let countries = WorkflowRules {
            accepted_countries: Some(vec!["BEL".into()]),
            ..Default::default()
        };
        assert_eq!(decide(&report(Verdict::Conforme), &countries).0, Decision::Refuse);
        let types = WorkflowRules {
            accepted_document_types: Some(vec![DocumentType::Passeport]),
            ..Default::default()
        };
        assert_eq!(decide(&report(Verdict::Conforme), &types).0, Decision::Conforme);
        let review = WorkflowRules {
            systematic_review: true,
            ..Default::default()
        };
        assert_eq!(
            decide(&report(Verdict::Conforme), &review),
            (Decision::AVerifier, Some(ReviewStatus::Pending))
        );
    }
}
