//! Every sample of `shared/data/samples` gives its manifest's findings: verdict, seal outcome, document
//! type and country, and the expected anomalies; the samples refused at deposit are refused here too.

use domain::analysis::{Check, CheckOutcome};
use domain::vocabulary::DocumentCategory;
use serde_json::Value;

use super::{analyse, codes, engine, input, shared_data};
use crate::analysis::engine::EngineError;

/// The manifest's descriptive findings, as anomaly codes of the catalogue.
fn anomaly_code(finding: &str) -> &str {
    match finding {
        "signature_invalid" => "twoddoc_signature_invalid",
        "data_mismatch" => "twoddoc_data_mismatch",
        "mrz_check_digit" => "mrz_check_digit_mismatch",
        other => other,
    }
}

fn document_type(kind: &str) -> &str {
    match kind {
        "identity_card" => "carte_identite",
        "passport" => "passeport",
        other => other,
    }
}

#[tokio::test]
async fn every_sample_gives_its_manifest_findings() {
    let dir = shared_data().join("samples");
    let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest")).expect("manifest JSON");
    let engine = engine();
    let mut checked = 0;
    for file in manifest["files"].as_array().expect("files") {
        let path = file["path"].as_str().expect("path");
        let category = match file["category"].as_str() {
            Some("identite") => DocumentCategory::Identite,
            _ => DocumentCategory::Administratif,
        };
        let bytes = std::fs::read(dir.join(path)).expect("sample");
        let result = analyse(&engine, input(category, bytes)).await;
        if file["expectRejectAtDeposit"].as_bool() == Some(true) {
            let error = result.expect_err(path);
            assert!(matches!(error, EngineError::Unsupported(_)), "{path}: {error:?}");
            continue;
        }
        let report = result.unwrap_or_else(|e| panic!("{path}: {e}"));
        let verdict = report.verdict.as_str();
        let acceptable: Vec<&str> = file["acceptableVerdicts"]
            .as_array()
            .expect("verdicts")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            acceptable.contains(&verdict),
            "{path}: verdict {verdict}, expected one of {acceptable:?}; anomalies {:?}",
            codes(&report)
        );

        let expected = &file["expected"];
        for finding in expected["expectedFindings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            assert!(
                codes(&report).contains(&anomaly_code(finding)),
                "{path}: {finding} missing from {:?}",
                codes(&report)
            );
        }
        match (&expected["twoDDoc"], &report.two_d_doc) {
            (Value::Object(seal), Some(found)) if seal["present"] == true => {
                assert_eq!(found.read_status.as_str(), "read", "{path}");
                assert_eq!(Some(found.signature_verified), seal["signatureVerified"].as_bool(), "{path}");
                assert_eq!(Some(found.trusted), seal["trusted"].as_bool(), "{path}");
                assert_eq!(Some(found.data_matches), seal["dataMatches"].as_bool(), "{path}");
            }
            (Value::Object(seal), None) if seal["present"] == false => {}
            (Value::Null, None) => {}
            (seal, found) => panic!("{path}: expected seal {seal}, found {found:?}"),
        }
        let outcome = |check: Check| report.checks.iter().find(|c| c.check == check).map(|c: &CheckOutcome| c.passed);
        assert_eq!(
            outcome(Check::SelfieMatch),
            None,
            "{path}: the built-in engine never compares a selfie"
        );
        assert!(outcome(Check::FileIntegrity).is_some(), "{path}: forensics always run");
        if let Some(verified) = expected["twoDDoc"]["signatureVerified"].as_bool() {
            assert_eq!(outcome(Check::TwoDDocSignature), Some(verified), "{path}");
            assert_eq!(outcome(Check::TwoDDocData), expected["twoDDoc"]["dataMatches"].as_bool(), "{path}");
        }
        if let Some(valid) = expected["mrz"]["checkDigitsValid"].as_bool() {
            assert_eq!(outcome(Check::MrzCheckDigits), Some(valid), "{path}");
        }
        if let Some(kind) = expected["documentKind"].as_str() {
            assert_eq!(report.document_type.as_str(), document_type(kind), "{path}");
        }
        if let Some(country) = expected["documentCountry"].as_str() {
            assert_eq!(report.document_country.as_deref(), Some(country), "{path}");
        }
        if let Some(age) = expected["mrz"]["ageAtReferenceDate"].as_u64() {
            assert_eq!(report.holder_age.map(u64::from), Some(age), "{path}");
        }
        checked += 1;
    }
    assert_eq!(checked, 10, "every analysable sample was checked");
}
