//! The verdict from the findings, exactly as `API.md` states it: a reject anomaly makes the document
//! `non_conforme`, warnings alone make it `suspect`, and a favourable verdict needs evidence.

use domain::vocabulary::{Severity, Verdict};

use super::findings::{Evidence, Findings};

pub fn decide(findings: &Findings) -> Verdict {
    let worst = findings.anomalies.iter().map(|a| a.severity).max_by_key(|s| rank(*s));
    match (worst.map(rank), findings.evidence) {
        (Some(2), _) => Verdict::NonConforme,
        (Some(1), _) => Verdict::Suspect,
        (_, Evidence::Nothing) => Verdict::AnalyseImpossible,
        (_, Evidence::VerifiedSeal | Evidence::VerifiedMrz) => Verdict::Conforme,
        (_, Evidence::ConfirmedIssuer) => Verdict::SansAnomalie,
    }
}

fn rank(severity: Severity) -> u8 {
    match severity {
        Severity::Info => 0,
        Severity::Warning => 1,
        Severity::Reject => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(codes: &[&str], evidence: Evidence) -> Findings {
        let mut findings = Findings::new();
        for code in codes {
            findings.add_code(code.parse().unwrap());
        }
        findings.evidence = evidence;
        findings
    }

    #[test]
    fn follows_the_rules_of_the_api() {
        let cases = [
            (vec!["twoddoc_signature_invalid"], Evidence::Nothing, Verdict::NonConforme),
            (
                vec!["twoddoc_data_mismatch", "blurry_image"],
                Evidence::VerifiedSeal,
                Verdict::NonConforme,
            ),
            (vec!["blurry_image"], Evidence::VerifiedMrz, Verdict::Suspect),
            (vec!["twoddoc_certificate_unknown"], Evidence::Nothing, Verdict::Suspect),
            (vec![], Evidence::Nothing, Verdict::AnalyseImpossible),
            (vec!["mrz_not_found"], Evidence::Nothing, Verdict::AnalyseImpossible),
            (vec![], Evidence::VerifiedSeal, Verdict::Conforme),
            (
                vec!["selfie_not_checked", "twoddoc_test_certificate"],
                Evidence::VerifiedMrz,
                Verdict::Conforme,
            ),
            (vec![], Evidence::ConfirmedIssuer, Verdict::SansAnomalie),
            (vec!["edited_with_software"], Evidence::ConfirmedIssuer, Verdict::Suspect),
        ];
        for (codes, evidence, expected) in cases {
            assert_eq!(decide(&findings(&codes, evidence)), expected, "{codes:?} {evidence:?}");
        }
    }
}
