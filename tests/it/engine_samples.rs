//! The reference samples through the public API, on the real service with the built-in engine: each
//! document deposited in a batch comes back as a consultation with its manifest's verdict, seal outcome,
//! document type and country; the two the manifest refuses are refused at deposit.

use crate::support;

use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;
use support::Service;

fn samples_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/samples");
    assert!(dir.is_dir(), "the reference samples are missing: {} must exist", dir.display());
    dir
}

/// The samples' fictitious issuers, which the shipped register rightly does not know.
fn demo_register(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("demo-issuers.tsv");
    std::fs::write(
        &path,
        "# siren\tname\tkind\tsource\n789012341\tEAUX DE DEMONSTRATION\twater\ttest\n890123458\tDEMO CONSEIL SAS\tpayroll\ttest\n",
    )
    .expect("register file");
    path
}

#[tokio::test]
async fn every_sample_gets_its_manifest_verdict_through_the_api() {
    let dir = samples_dir();
    let manifest: Value = serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest")).expect("JSON");
    let scratch = std::env::temp_dir().join(format!("sceau-engine-samples-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let register = demo_register(&scratch);
    let svc = Service::start(&[
        ("SCEAU_ACCEPT_TEST_CA", "1"),
        ("SCEAU_ISSUER_REGISTER_FILE", register.to_str().expect("path")),
    ])
    .await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;

    let mut expected_by_position = Vec::new();
    for file in manifest["files"].as_array().expect("files") {
        let path = file["path"].as_str().expect("path");
        let bytes = std::fs::read(dir.join(path)).expect("sample");
        let (status, body) = svc
            .deposit(&co.key, &batch, file["category"].as_str().expect("category"), &bytes)
            .await;
        if file["expectRejectAtDeposit"] == true {
            let error = &file["expectedDepositError"];
            assert_eq!(
                (u64::from(status), &body["error"]),
                (error["status"].as_u64().expect("status"), &error["error"]),
                "{path}: {body}"
            );
            continue;
        }
        assert_eq!(status, 201, "{path}: {body}");
        expected_by_position.push((body["position"].as_u64().expect("position"), file.clone()));
    }
    let (status, body) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_eq!(status, 200, "{body}");
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(180), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["counts"]["succeeded"], json!(expected_by_position.len()), "{done}");

    for item in done["items"].as_array().expect("items") {
        let position = item["position"].as_u64().expect("position");
        let (_, file) = expected_by_position.iter().find(|(p, _)| *p == position).expect("deposited sample");
        let path = file["path"].as_str().expect("path");
        let id = item["consultationId"].as_str().expect("consultation id");
        let (status, c) = svc.get(&co.key, &format!("/api/v1/consultations/{id}")).await;
        assert_eq!(status, 200, "{c}");
        let acceptable: Vec<&Value> = file["acceptableVerdicts"].as_array().expect("verdicts").iter().collect();
        assert!(acceptable.contains(&&c["verdict"]), "{path}: {c}");
        assert_eq!(c["decision"], Value::Null, "{path}: batch results carry no decision");
        let anomalies = c["anomalies"].as_array().expect("anomalies");
        assert_eq!(c["anomalyCount"], json!(anomalies.len()), "{path}");
        let rejects = anomalies.iter().any(|a| a["severity"] == "reject");
        assert_eq!(c["hasRejectAnomaly"], json!(rejects), "{path}");
        assert_eq!(rejects, c["verdict"] == "non_conforme", "{path}: {c}");
        let seal = &file["expected"]["twoDDoc"];
        if seal["present"] == true {
            for field in ["signatureVerified", "trusted", "dataMatches"] {
                assert_eq!(c["twoDDoc"][field], seal[field], "{path}: twoDDoc.{field} in {c}");
            }
            assert_eq!(c["twoDDoc"]["readStatus"], "read", "{path}");
        } else {
            assert_eq!(c["twoDDoc"], Value::Null, "{path}");
        }
        if let Some(country) = file["expected"]["documentCountry"].as_str() {
            assert_eq!(c["documentCountry"], country, "{path}");
        }
        // Extracted data never leave the engine through the API: no name or number of the document.
        let text = c.to_string();
        for line in file["expected"]["mrz"]["mrzLines"].as_array().into_iter().flatten() {
            assert!(
                !text.contains(line.as_str().expect("line")),
                "{path}: the MRZ leaked into the consultation"
            );
        }
        if let Some(surname) = file["expected"]["mrz"]["surname"].as_str() {
            assert!(!text.contains(surname), "{path}: the holder's name leaked into the consultation");
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
