//! Files built to take the service down: a PDF whose object stream makes a parser materialise
//! gigabytes, and an image that keeps the analysis busy past its deadline. The service refuses or
//! survives each, with bounded memory, and goes on processing ordinary documents.

mod support;

use common::test_fixtures::bombs;
use serde_json::{json, Value};
use std::time::Duration;
use support::{journey, Service};

/// Peak resident memory of a process (`VmHWM`), in MiB.
fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_else(|e| panic!("process {pid} is gone: {e}"));
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kib / 1024
}

/// Every process of the service is alive and has never held more than `limit_mib`.
fn assert_alive_and_bounded(svc: &Service, limit_mib: u64) {
    for (role, pid) in svc.pids() {
        let peak = peak_rss_mib(pid);
        eprintln!("peak RSS of {role} (pid {pid}): {peak} MiB");
        assert!(peak < limit_mib, "{role} peaked at {peak} MiB");
    }
}

async fn deposit_pdf(svc: &Service, key: &str, batch: &str, pdf: &[u8]) -> (u16, Value) {
    svc.deposit(key, batch, "administratif", pdf).await
}

#[tokio::test]
async fn pdf_bombs_are_refused_at_the_edge_and_the_service_lives_on() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;

    // The pre-scan refuses these before any parser sees them…
    for bomb in [bombs::pdf_bomb_20k(), bombs::pdf_bomb_small(), bombs::pdf_bomb_escaped_name()] {
        let (status, body) = deposit_pdf(&svc, &co.key, &batch, &bomb).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_document")), "{body}");
        assert!(body["message"].as_str().unwrap_or_default().contains("object stream"), "{body}");
    }
    // …and this one, which it lets through, dies in a sandbox child at its memory limit.
    let (status, body) = deposit_pdf(&svc, &co.key, &batch, &bombs::pdf_bomb_past_prescan()).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_document")), "{body}");
    assert!(body["message"].as_str().unwrap_or_default().contains("too complex"), "{body}");

    // The same file through an administrative journey link, which needs no API key.
    let workflow = journey::workflow(&svc, &co, "administratif", None);
    let session = journey::session(&svc, &co, &workflow, "bomb").await;
    let (_, _, csrf) = journey::open(&svc, &session.url, None).await;
    let (status, body) = journey::upload(
        &svc,
        &session.url,
        "document",
        csrf.as_deref(),
        bombs::pdf_bomb_20k(),
        "application/pdf",
    )
    .await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_document")), "{body}");

    assert_alive_and_bounded(&svc, 400);

    // Ordinary documents still go through, deposit to result.
    let (status, body) = deposit_pdf(&svc, &co.key, &batch, &support::pdf(1)).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_eq!(status, 200, "{body}");
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["counts"]["succeeded"], 1, "{done}");
    assert_alive_and_bounded(&svc, 400);
}

/// The pids of the sandbox children the service killed at their deadline, from its log.
fn killed_children(log: &str) -> Vec<u32> {
    log.lines()
        .filter(|line| line.contains("sandbox child killed at its deadline"))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|entry| entry["fields"]["pid"].as_u64())
        .map(|pid| pid as u32)
        .collect()
}

#[tokio::test]
async fn an_analysis_past_its_deadline_is_stopped_once_and_the_worker_lives_on() {
    let svc = Service::start(&[("SCEAU_ANALYSIS_TIMEOUT_SECONDS", "1")]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let (status, body) = svc.deposit(&co.key, &batch, "identite", &bombs::checkerboard_png(6000)).await;
    assert_eq!(status, 201, "{body}");
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["items"][0]["error"], "unsupported_document", "{done}");

    let killed = killed_children(&svc.log());
    assert_eq!(killed.len(), 1, "one kill, no retry into more work: {killed:?}");
    assert!(
        !std::path::Path::new(&format!("/proc/{}", killed[0])).exists(),
        "the killed child {} is gone (and reaped)",
        killed[0]
    );

    let batch = svc.open_batch(&co.key, None).await;
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &support::png(64, 3)).await.0, 201);
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["counts"]["succeeded"], 1, "{done}");
    assert_alive_and_bounded(&svc, 600);
}
