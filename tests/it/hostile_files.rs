//! Files built to take the service down: a PDF whose object stream makes a parser materialise
//! gigabytes, and an image that keeps the analysis busy past its deadline. The service refuses or
//! survives each, with bounded memory, and goes on processing ordinary documents.

use crate::support;

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

    // The pre-scan refuses these before any parser sees them, decode parameters or not.
    for bomb in [
        bombs::pdf_bomb_20k(),
        bombs::pdf_bomb_small(),
        bombs::pdf_bomb_escaped_name(),
        bombs::pdf_bomb_past_prescan(),
        bombs::pdf_slow_page_count_plain(),
    ] {
        let (status, body) = deposit_pdf(&svc, &co.key, &batch, &bomb).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_document")), "{body}");
        assert!(body["message"].as_str().unwrap_or_default().contains("object stream"), "{body}");
    }

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

/// Every one of `futures`, run at once on this task; their outputs in order.
async fn all<F: std::future::Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// A deposit and how long its answer took.
struct Timed {
    status: u16,
    body: Value,
    retry_after: Option<String>,
    took: Duration,
}

async fn timed_deposit(svc: &Service, key: &str, batch: &str, pdf: &[u8]) -> Timed {
    let started = std::time::Instant::now();
    let response = svc
        .http
        .post(svc.url(&format!("/api/v1/batches/{batch}/documents")))
        .bearer_auth(key)
        .json(&json!({ "documentCategory": "administratif", "document": support::b64(pdf) }))
        .send()
        .await
        .expect("POST a deposit");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.json().await.unwrap_or(Value::Null);
    Timed {
        status,
        body,
        retry_after,
        took: started.elapsed(),
    }
}

/// A slow PDF is refused as the bombs are (400), or, when it waited too long for its sender's
/// turn or a child, 503 with Retry-After; never anything else.
fn assert_refused_cleanly(answer: &Timed) {
    match answer.status {
        400 => assert_eq!(answer.body["error"], "invalid_document", "{}", answer.body),
        503 => {
            assert_eq!(answer.body["error"], "service_unavailable", "{}", answer.body);
            assert!(answer.retry_after.is_some(), "a 503 says when to retry: {}", answer.body);
        }
        other => panic!("the slow PDF was answered {other}: {}", answer.body),
    }
}

/// The slow file of the second audit, five times at once from one company, held the edge's
/// four children 7 to 10 s each while another company's deposit waited 12.4 s. Now the pre-scan
/// refuses it in milliseconds, and a company holds one child at most: the other company is
/// answered at once.
#[tokio::test]
async fn a_slow_pdf_costs_its_sender_not_another_company() {
    let svc = Service::start(&[]).await;
    let (slow, other) = (svc.company(), svc.company());
    let (slow_batch, other_batch) = (svc.open_batch(&slow.key, None).await, svc.open_batch(&other.key, None).await);
    let bomb = bombs::pdf_slow_page_count();
    let burst = all((0..5).map(|_| timed_deposit(&svc, &slow.key, &slow_batch, &bomb)));
    let meanwhile = async {
        // Once the burst is at the edge.
        tokio::time::sleep(Duration::from_millis(300)).await;
        timed_deposit(&svc, &other.key, &other_batch, &support::pdf(1)).await
    };
    let (burst, answer) = tokio::join!(burst, meanwhile);
    for refused in &burst {
        eprintln!("slow PDF: {} after {:?}", refused.status, refused.took);
        assert_refused_cleanly(refused);
    }
    eprintln!("the other company's deposit: {} after {:?}", answer.status, answer.took);
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert!(answer.took < Duration::from_secs(2), "the other company waited {:?}", answer.took);
}

/// The page-count children (`sceau sandbox` within the edge's address space) alive under the
/// service's processes now.
fn edge_children(svc: &Service) -> usize {
    edge_children_pids(svc).len()
}

fn edge_children_pids(svc: &Service) -> Vec<String> {
    let edge_args = format!("--address-space-mb\0{}", common::sandbox::PAGE_COUNT_ADDRESS_SPACE_MB);
    svc.pids()
        .into_iter()
        .flat_map(|(_, pid)| {
            std::fs::read_dir(format!("/proc/{pid}/task"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|thread| std::fs::read_to_string(thread.path().join("children")).ok())
                .flat_map(|children| children.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        })
        .filter(|child| {
            std::fs::read(format!("/proc/{child}/cmdline")).is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(&edge_args))
        })
        .collect()
}

/// A child's address-space limit bounds what it will use, not what its allocator reserved before
/// the limit was set: the allocator's 1 GiB arena once left a page-count child (1 GiB) above its
/// limit from its start, so the first stack growth of a release build died of SIGSEGV.
fn assert_room_under_address_limit(pid: impl std::fmt::Display) {
    let kib = |status: &str, field: &str| -> Option<u64> {
        let line = status.lines().find(|line| line.starts_with(field))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return; // It ended meanwhile.
    };
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
    let limit: Option<u64> = limits
        .lines()
        .find(|line| line.starts_with("Max address space"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|bytes| bytes.parse().ok());
    let (Some(size), Some(limit)) = (kib(&status, "VmSize:"), limit) else {
        panic!("child {pid}: no VmSize or address-space limit\n{status}\n{limits}");
    };
    assert!(
        size * 1024 < limit / 2,
        "child {pid} uses {size} KiB of address space already, of its limit of {} KiB",
        limit / 1024
    );
}

/// Files the pre-scan passes but the parser takes long on are stopped at the page count's CPU
/// deadline (about 2 s, was 10 s on the wall clock), and one company's files take turns at one
/// child: the next starts once the one before is done, or is refused with Retry-After after
/// its wait, never run beside it on another child.
#[tokio::test]
async fn a_company_holds_one_edge_parser_at_a_time() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let slow = bombs::pdf_slow_within_prescan();
    let done = std::sync::atomic::AtomicBool::new(false);
    let deposits = async {
        let answers = all((0..3).map(|_| timed_deposit(&svc, &co.key, &batch, &slow))).await;
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        answers
    };
    let most_children = async {
        let mut most = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            most = most.max(edge_children(&svc));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        most
    };
    let (mut answers, most_children) = tokio::join!(deposits, most_children);
    answers.sort_by_key(|answer| answer.took);
    for answer in &answers {
        eprintln!(
            "slow PDF of one company: {} after {:?}: {}",
            answer.status, answer.took, answer.body["message"]
        );
        assert_refused_cleanly(answer);
    }
    eprintln!("page-count children alive at once: {most_children}");
    assert_eq!(most_children, 1, "the company's files were counted side by side");
    assert!(
        answers[0].took < Duration::from_secs(6),
        "the first slow file held its child {:?}",
        answers[0].took
    );
}

/// What a sandbox child may find in its environment: the system's locale and paths, its own
/// allocator and temporary directory, and the analysis settings its parent hands it.
const CHILD_VARIABLES: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TESSDATA_PREFIX",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "MALLOC_ARENA_MAX",
    "MIMALLOC_ARENA_RESERVE",
    "TMPDIR",
    "SCEAU_DATA_DIR",
    "SCEAU_TESSERACT",
    "SCEAU_FACE_MATCH",
    "SCEAU_ANALYSIS_TIMEOUT_SECONDS",
    "SCEAU_ACCEPT_TEST_CA",
    "SCEAU_TRUST_DIR",
    "SCEAU_ISSUER_REGISTER_FILE",
    common::sandbox::environment::ESCAPE_HOOK,
];

/// The escape attempts the service logged at start (test-only hook): (role, what, outcome).
fn escape_attempts(log: &str) -> Vec<(String, String, String)> {
    log.lines()
        .filter(|line| line.contains("sandbox escape attempt"))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|entry| {
            let field = |name: &str| entry["fields"][name].as_str().unwrap_or_default().to_owned();
            (field("role"), field("what"), field("outcome"))
        })
        .collect()
}

/// A child that parses client files runs with no new privileges under a seccomp filter, with an
/// environment of named variables only, and cannot open the master key, the database or a socket:
/// the test-only hook has each pool's first child try at the service's start.
#[tokio::test]
async fn a_sandbox_child_cannot_reach_the_keys_the_database_or_the_network() {
    let svc = Service::start(&[(common::sandbox::environment::ESCAPE_HOOK, "1")]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &support::png(64, 9)).await.0, 201);
    // A PDF's pages are counted at the edge, in a page-count child (the 1 GiB ones).
    let (status, body) = deposit_pdf(&svc, &co.key, &batch, &support::pdf(1)).await;
    assert_eq!(status, 201, "{body}");
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["counts"]["succeeded"], 2, "an analysis still runs confined: {done}");

    let children = support::children::analysis_children(&svc);
    assert!(!children.is_empty(), "an analysis child is alive after a document");
    for child in &children {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.pid)).expect("the child's status");
        assert!(status.contains("NoNewPrivs:\t1"), "child {}: {status}", child.pid);
        assert!(status.contains("Seccomp:\t2"), "child {}: {status}", child.pid);
        let unexpected: Vec<&String> = child
            .variables
            .iter()
            .filter(|v| !CHILD_VARIABLES.contains(&v.as_str()) && !v.starts_with("LC_"))
            .collect();
        assert!(unexpected.is_empty(), "child {} holds {unexpected:?}", child.pid);
        assert_room_under_address_limit(child.pid);
    }
    let edge = edge_children_pids(&svc);
    assert!(!edge.is_empty(), "a page-count child waits for the next PDF");
    for pid in edge {
        assert_room_under_address_limit(pid);
    }

    support::eventually(Duration::from_secs(30), "the escape attempts of every role", || async {
        let attempts = escape_attempts(&svc.log());
        ["gateway", "worker"]
            .iter()
            .all(|role| attempts.iter().any(|(r, what, _)| r == role && what == "udp6 socket"))
    })
    .await;
    assert!(svc.master_key_path().exists(), "the master key is there to be refused");
    let attempts = escape_attempts(&svc.log());
    for (role, what, outcome) in &attempts {
        let refused = outcome.contains("Permission denied") || outcome.contains("Operation not permitted");
        assert!(refused, "{role}'s child could {what}: {outcome}");
    }
    let tried = |role: &str, target: &str| attempts.iter().any(|(r, what, _)| r == role && what == target);
    for role in ["gateway", "worker"] {
        for target in ["master key", "tcp socket", "udp6 socket"] {
            assert!(tried(role, target), "{role} did not try {target}: {attempts:?}");
        }
    }
    assert!(tried("gateway", "database"), "{attempts:?}");
}
