//! A batch from creation to its signed `batch.completed` webhook, on the real service.

use crate::support;

use serde_json::json;
use std::time::Duration;
use support::receiver::Receiver;
use support::Service;

#[tokio::test]
async fn a_batch_is_processed_and_announced_once_with_a_valid_signature() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = svc.open_batch(&co.key, Some(&hook.url)).await;

    let (s1, d1) = svc.deposit(&co.key, &batch, "identite", &support::png(64, 1)).await;
    assert_eq!((s1, d1["position"].as_u64()), (201, Some(1)), "{d1}");
    let (s2, d2) = svc
        .post(
            &co.key,
            &format!("/api/v1/batches/{batch}/documents"),
            json!({
                "documentCategory": "administratif", "document": format!("data:application/pdf;base64,{}", support::b64(&support::pdf(1))),
                "externalRef": "facture-1", "agencyPostalCode": "75001"
            }),
        )
        .await;
    assert_eq!((s2, d2["position"].as_u64()), (201, Some(2)), "{d2}");
    // Bytes that sniff as JPEG but do not decode: accepted at deposit, unreadable at analysis.
    let mut broken = support::jpeg(32);
    broken.truncate(40);
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &broken).await.0, 201);

    let (status, submitted) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_eq!(status, 200, "{submitted}");
    assert_eq!(submitted["status"], "in_progress");
    assert!(submitted["expiresAt"].as_str() > submitted["createdAt"].as_str());

    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["status"] == "ended")
        .await;
    assert_eq!(
        done["counts"],
        json!({ "total": 3, "pending": 0, "succeeded": 2, "errored": 1, "canceled": 0, "expired": 0 })
    );
    let items = done["items"].as_array().expect("items");
    assert_eq!(items[2]["error"], "unreadable_document");
    assert!(items[2]["consultationId"].is_null());
    for item in &items[..2] {
        let id = item["consultationId"].as_str().expect("consultation id");
        let (status, c) = svc.get(&co.key, &format!("/api/v1/consultations/{id}")).await;
        assert_eq!(status, 200);
        // A 64-pixel image and a blank page carry nothing to verify: neither can be concluded on.
        assert_eq!(c["verdict"], "analyse_impossible", "{c}");
        assert_eq!(c["decision"], json!(null));
        assert_eq!(c["reviewStatus"], json!(null));
    }
    assert_eq!(items[1]["externalRef"], "facture-1");

    let got = hook.wait_for(1, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(hook.received().len(), 1, "batch.completed is sent once");
    let event = &got[0];
    assert!(event.signature_valid, "signature must verify with the company secret");
    assert_eq!(event.body["event"], "batch.completed");
    assert_eq!(event.body["batchId"], batch.as_str());
    assert_eq!(event.body["eventId"], event.id.as_str());
    assert_eq!(event.body["counts"], done["counts"]);
    assert!(event.body.get("consultationId").is_none());
    assert!((event.timestamp - chrono_now()).abs() < 60);
}

#[tokio::test]
async fn deposit_files_are_encrypted_at_rest_and_deleted_after_processing() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let file = support::png(48, 7);
    svc.deposit(&co.key, &batch, "identite", &file).await;
    let blobs = svc.blob_dir();
    let stored = common::test_fixtures::files_under(&blobs);
    assert_eq!(stored.len(), 1);
    let raw = std::fs::read(&stored[0]).expect("blob");
    assert!(!raw.windows(16).any(|w| w == &file[100..116]), "the file is not stored in clear");

    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["status"] == "ended")
        .await;
    let csl = done["items"][0]["consultationId"].as_str().expect("csl").to_owned();
    // The deposit blob goes; the consultation keeps its own encrypted image.
    support::eventually(Duration::from_secs(10), "the deposit blob is deleted", || async {
        !common::test_fixtures::files_under(&blobs).contains(&stored[0])
    })
    .await;
    let image = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{csl}/images/recto")))
        .bearer_auth(&co.key)
        .send()
        .await
        .expect("image");
    assert_eq!(image.status(), 200);
    assert_eq!(image.headers()["content-type"], "image/png");
    assert_eq!(image.bytes().await.expect("bytes").as_ref(), file.as_slice());
    let audit = svc.admin(&["audit", "--company", &co.id]);
    let entry = &audit["data"][0];
    assert_eq!(entry["action"], "image.download");
    assert_eq!(entry["target"], format!("{csl}/recto"));
    assert_eq!(entry["keyPrefix"], &co.key[..16]);
    assert_eq!(entry["ip"], "127.0.0.1");
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[tokio::test]
async fn cancel_mid_batch_keeps_finished_results_and_cancels_the_rest() {
    let svc = Service::start(&[("SCEAU_WORKERS", "1"), ("RUST_LOG", "info")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = svc.open_batch(&co.key, Some(&hook.url)).await;
    for i in 0..60 {
        svc.deposit(&co.key, &batch, "identite", &support::png(160, i)).await;
    }
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    svc.wait_batch(&co.key, &batch, Duration::from_secs(30), |b| {
        b["counts"]["succeeded"].as_u64() >= Some(3)
    })
    .await;
    let (status, canceled) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/cancel"), json!(null)).await;
    assert_eq!((status, canceled["status"].as_str()), (200, Some("canceled")), "{canceled}");
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["counts"]["pending"] == 0)
        .await;
    let counts = &done["counts"];
    let (ok, gone) = (counts["succeeded"].as_u64().unwrap(), counts["canceled"].as_u64().unwrap());
    assert!(ok >= 3 && gone > 0 && ok + gone == 60, "{counts}");
    for item in done["items"].as_array().unwrap().iter().filter(|i| i["status"] == "succeeded") {
        let (s, _) = svc
            .get(
                &co.key,
                &format!("/api/v1/consultations/{}", item["consultationId"].as_str().unwrap()),
            )
            .await;
        assert_eq!(s, 200, "analyses already returned stay readable");
    }
    let got = hook.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].body["counts"], *counts, "announced once everything in flight settled");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(hook.received().len(), 1);
    // Logs carry no credential and no secret.
    let log = svc.log();
    assert!(log.contains("request_id"), "request logs are written");
    assert!(
        !log.contains(&co.key) && !log.contains(&co.secret[6..]),
        "a credential reached the log"
    );
}

#[cfg(unix)]
#[test]
fn serve_creates_its_data_dir_with_a_private_master_key() {
    use std::os::unix::fs::PermissionsExt;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let svc = rt.block_on(Service::start(&[]));
    let key = svc.master_key_path();
    assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(svc.data_dir().join("sceau.db").exists());
    drop(svc);
}

/// Batch documents are analysed by children running below the service's CPU priority, so that a
/// journey arriving meanwhile takes the CPU first; a journey's child keeps the service's priority.
#[tokio::test]
async fn batch_documents_are_analysed_below_the_services_priority_and_journeys_are_not() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    svc.deposit(&co.key, &batch, "identite", &support::png(64, 3)).await;
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    svc.wait_batch(&co.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    let workflow = support::journey::workflow(&svc, &co, "identite", None);
    let (photo, selfie) = (support::png(64, 4), support::png(64, 5));
    let files: [(&str, &[u8], &str); 2] = [("front", &photo, "image/png"), ("selfie", &selfie, "image/png")];
    support::journey::complete(&svc, &co, &workflow, "priority", &files).await;
    let children = support::children::analysis_children(&svc);
    let (batch_children, journey_children): (Vec<_>, Vec<_>) = children.iter().partition(|c| c.lowered);
    assert!(!batch_children.is_empty() && !journey_children.is_empty(), "{children:?}");
    assert!(
        batch_children.iter().all(|c| c.nice == 19),
        "SCEAU_BATCH_NICE's default: {children:?}"
    );
    assert!(journey_children.iter().all(|c| c.nice == 0), "{children:?}");
    // No child holds a credential of the service, yet each has its configuration. The distributed
    // pass gives the services AWS_SECRET_ACCESS_KEY and a broker URL with its password.
    let secrets = ["SCEAU_AMQP_URL", "SCEAU_REDIS_URL", "SCEAU_SMTP_URL", "SCEAU_MASTER_KEY_FILE"];
    for child in &children {
        assert!(child.variables.iter().any(|v| v == "SCEAU_DATA_DIR"), "{child:?}");
        let held: Vec<&String> = child
            .variables
            .iter()
            .filter(|v| secrets.contains(&v.as_str()) || v.starts_with("AWS_"))
            .collect();
        assert!(held.is_empty(), "a sandbox child holds {held:?}");
    }
}
