//! Nothing lost, nothing doubled: the real process killed with SIGKILL mid-batch and started again;
//! the 24 h windows (shortened here) expire what is left; SIGTERM exits cleanly.

use crate::support;

use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;
use support::receiver::Receiver;
use support::Service;

#[tokio::test]
async fn kill_9_mid_batch_then_restart_every_document_ends_exactly_once() {
    const DOCS: usize = 120;
    let mut svc = Service::start(&[("SCEAU_WORKERS", "1")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = svc.open_batch(&co.key, Some(&hook.url)).await;
    for i in 0..DOCS {
        assert_eq!(svc.deposit(&co.key, &batch, "identite", &support::png(200, i as u8)).await.0, 201);
    }
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let at_kill = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(60), |b| {
            b["counts"]["succeeded"].as_u64() >= Some(10)
        })
        .await;
    svc.kill_hard();
    let done_at_kill = at_kill["counts"]["succeeded"].as_u64().unwrap() as usize;
    assert!(done_at_kill < DOCS, "the kill must land mid-batch ({done_at_kill} of {DOCS} done)");

    svc.boot().await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(120), |b| b["status"] == "ended")
        .await;
    assert_eq!(
        done["counts"],
        json!({ "total": DOCS, "pending": 0, "succeeded": DOCS, "errored": 0, "canceled": 0, "expired": 0 })
    );
    let from_items: HashSet<String> = done["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["consultationId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(from_items.len(), DOCS);
    let listed = svc.consultation_ids(&co.key).await;
    assert_eq!(listed.len(), DOCS, "no consultation recorded twice");
    assert_eq!(listed.into_iter().collect::<HashSet<_>>(), from_items);

    let got = hook.wait_for(1, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let ids: HashSet<String> = hook.received().iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), 1, "batch.completed is one event (same eventId if redelivered)");
    assert_eq!(got[0].body["counts"]["succeeded"], DOCS);
}

#[tokio::test]
async fn an_open_batch_expires_after_its_window_with_its_documents() {
    let svc = Service::start(&[("SCEAU_BATCH_WINDOW_SECONDS", "2")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = svc.open_batch(&co.key, Some(&hook.url)).await;
    svc.deposit(&co.key, &batch, "identite", &support::png(8, 1)).await;
    svc.deposit(&co.key, &batch, "identite", &support::png(8, 2)).await;
    let expired = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(15), |b| b["status"] == "expired")
        .await;
    assert_eq!(
        expired["counts"],
        json!({ "total": 2, "pending": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 2 })
    );
    assert!(expired["items"].as_array().unwrap().iter().all(|i| i["status"] == "expired"));
    let (s, b) = svc.deposit(&co.key, &batch, "identite", &support::png(8, 3)).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("invalid_state")));
    let got = hook.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].body["event"], "batch.completed");
    assert_eq!(got[0].body["counts"]["expired"], 2);
}

#[tokio::test]
async fn the_completion_window_expires_what_was_not_processed() {
    const DOCS: usize = 60;
    // The window must outlast 60 deposits on a loaded machine, and the outage must outlast the window.
    let mut svc = Service::start(&[("SCEAU_BATCH_WINDOW_SECONDS", "8"), ("SCEAU_WORKERS", "1")]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    for i in 0..DOCS {
        assert_eq!(svc.deposit(&co.key, &batch, "identite", &support::png(120, i as u8)).await.0, 201);
    }
    let (s, _) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_eq!(s, 200);
    // The service is down past the deadline: at restart, what is left expires, nothing waits.
    svc.kill_hard();
    tokio::time::sleep(Duration::from_secs(9)).await;
    svc.boot().await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(30), |b| {
            b["status"] == "expired" && b["counts"]["pending"] == 0
        })
        .await;
    let counts = &done["counts"];
    let expired = counts["expired"].as_u64().unwrap();
    assert!(expired > 0, "{counts}");
    assert_eq!(counts["succeeded"].as_u64().unwrap() + expired, DOCS as u64, "{counts}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, later) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(later["counts"], *counts, "late results change nothing");
}

#[tokio::test]
async fn sigterm_finishes_work_in_flight_and_exits_zero() {
    let mut svc = Service::start(&[("SCEAU_WORKERS", "1")]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    for i in 0..20 {
        svc.deposit(&co.key, &batch, "identite", &support::png(150, i)).await;
    }
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    svc.wait_batch(&co.key, &batch, Duration::from_secs(30), |b| {
        b["counts"]["succeeded"].as_u64() >= Some(1)
    })
    .await;
    let statuses = svc.stop();
    assert!(statuses.iter().all(|s| s.success()), "exit statuses {statuses:?}");
    svc.boot().await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["counts"]["succeeded"], 20);
    assert_eq!(svc.consultation_ids(&co.key).await.len(), 20);
}
