//! One document's log lines share the id of the request that deposited it: the gateway's request,
//! the worker's job, the recorder's result and the notifier's webhook delivery, in every mode.

use crate::support;

use serde_json::Value;
use std::time::Duration;
use support::receiver::Receiver;
use support::Service;

/// The stages (`request`, `job`, `result`, `delivery`) of the log lines whose spans carry `id`.
fn stages_of(log: &str, id: &str) -> Vec<String> {
    let mut stages = Vec::new();
    for line in log.lines().filter(|line| line.contains(id)) {
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        for span in entry["spans"].as_array().into_iter().flatten() {
            if span["request_id"] != id {
                continue;
            }
            let stage = match span["name"].as_str() {
                Some("document") => span["stage"].as_str().unwrap_or("?").to_owned(),
                Some(name) => name.to_owned(),
                None => continue,
            };
            if !stages.contains(&stage) {
                stages.push(stage);
            }
        }
    }
    stages
}

#[tokio::test]
async fn a_deposit_is_followed_by_its_request_id_from_the_request_to_the_webhook() {
    let svc = Service::start(&[("RUST_LOG", "info")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = svc.open_batch(&co.key, Some(&hook.url)).await;
    let id = format!("trace-{}", std::process::id());
    let deposited = svc
        .http
        .post(svc.url(&format!("/api/v1/batches/{batch}/documents")))
        .bearer_auth(&co.key)
        .header("x-request-id", &id)
        .json(&serde_json::json!({ "documentCategory": "identite", "document": support::b64(&support::png(64, 3)) }))
        .send()
        .await
        .expect("deposit");
    assert_eq!(deposited.status().as_u16(), 201);
    assert_eq!(deposited.headers()["x-request-id"], id.as_str(), "the client's id is kept");
    let (status, _) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), Value::Null).await;
    assert_eq!(status, 200);
    svc.wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["status"] == "ended")
        .await;
    hook.wait_for(1, Duration::from_secs(10)).await;

    let expected = ["request", "job", "result", "delivery"];
    let started = std::time::Instant::now();
    loop {
        let stages = stages_of(&svc.log(), &id);
        if expected.iter().all(|stage| stages.iter().any(|s| s == stage)) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "stages carrying {id}: {stages:?}; its lines: {:#?}",
            svc.log().lines().filter(|l| l.contains(&id)).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // An id that could forge or flood log lines is replaced by a fresh one.
    for unusable in ["x\"}{\"level\":\"ERROR", &"a".repeat(65), "with space"] {
        let answered = svc
            .http
            .get(svc.url("/api/v1/workflows"))
            .bearer_auth(&co.key)
            .header("x-request-id", unusable)
            .send()
            .await
            .expect("list");
        assert_eq!(answered.status().as_u16(), 200);
        let given = answered.headers()["x-request-id"].to_str().expect("ascii").to_owned();
        assert_ne!(given, unusable);
        assert_eq!(given.len(), 36, "a fresh UUID: {given}");
        assert!(!svc.log().contains(unusable), "{unusable} reached the log");
    }
}
