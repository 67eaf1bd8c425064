//! What only distributed mode has, on real processes and the local RabbitMQ and Redis: losing a
//! worker (kill -9 or SIGTERM), losing the broker's connections or Redis's data mid-batch, draining
//! the pool, poison jobs going to the dead-letter queue, and blobs in an S3 bucket that workers
//! read with no access to the gateway's data dir, or that stops answering. Test names start with
//! `distributed_only_`: `scripts/test` runs them in its distributed pass.

use crate::support;

use serde_json::{json, Value};
use std::collections::HashSet;
use std::process::Command;
use std::time::Duration;
use support::receiver::Receiver;
use support::{Mode, Service};

const LONG: Duration = Duration::from_secs(120);

async fn start(extra: &[(&str, &str)]) -> Service {
    Service::start_in(Mode::Distributed, extra).await
}

async fn batch_of(svc: &Service, key: &str, hook: Option<&str>, docs: usize, side: u32) -> String {
    let batch = svc.open_batch(key, hook).await;
    for i in 0..docs {
        assert_eq!(svc.deposit(key, &batch, "identite", &support::png(side, i as u8)).await.0, 201);
    }
    batch
}

async fn submit(svc: &Service, key: &str, batch: &str) {
    let (s, b) = svc.post(key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_eq!(s, 200, "{b}");
}

/// Every document succeeded exactly once, and one `batch.completed` event (same id if redelivered).
async fn assert_exactly_once(svc: &Service, key: &str, batch: &str, docs: usize, hook: &Receiver) {
    let done = svc.wait_batch(key, batch, LONG, |b| b["status"] == "ended").await;
    assert_eq!(
        done["counts"],
        json!({ "total": docs, "pending": 0, "succeeded": docs, "errored": 0, "canceled": 0, "expired": 0 })
    );
    let items: HashSet<String> = done["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["consultationId"].as_str().unwrap().to_owned())
        .collect();
    let listed = svc.consultation_ids(key).await;
    assert_eq!(listed.len(), docs, "no consultation recorded twice");
    assert_eq!(listed.into_iter().collect::<HashSet<_>>(), items);
    hook.wait_for(1, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let ids: HashSet<String> = hook.received().iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), 1, "one batch.completed event");
}

#[tokio::test]
async fn distributed_only_kill_9_of_a_worker_holding_jobs_loses_and_doubles_nothing() {
    let mut svc = start(&[("SCEAU_WORKERS", "2")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = batch_of(&svc, &co.key, Some(&hook.url), 80, 200).await;
    submit(&svc, &co.key, &batch).await;
    let at_kill = svc
        .wait_batch(&co.key, &batch, LONG, |b| b["counts"]["succeeded"].as_u64() >= Some(5))
        .await;
    svc.kill_one("worker");
    assert!(at_kill["counts"]["succeeded"].as_u64().unwrap() < 80, "the kill lands mid-batch");
    svc.add_worker("2");
    assert_exactly_once(&svc, &co.key, &batch, 80, &hook).await;
}

#[tokio::test]
async fn distributed_only_sigterm_lets_a_busy_worker_finish_and_exit_zero() {
    let mut svc = start(&[("SCEAU_WORKERS", "2")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = batch_of(&svc, &co.key, Some(&hook.url), 60, 200).await;
    submit(&svc, &co.key, &batch).await;
    svc.wait_batch(&co.key, &batch, LONG, |b| b["counts"]["succeeded"].as_u64() >= Some(5))
        .await;
    let status = svc.stop_one("worker");
    assert!(status.success(), "a worker stops cleanly on SIGTERM: {status:?}");
    assert_exactly_once(&svc, &co.key, &batch, 60, &hook).await;
}

#[tokio::test]
async fn distributed_only_broker_connections_closed_during_deposits_lose_no_accepted_document() {
    let svc = start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = svc.open_batch(&co.key, Some(&hook.url)).await;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(15)).build().unwrap();
    let mut accepted = 0;
    for i in 0..40u8 {
        if i == 10 || i == 25 {
            let out = Command::new("rabbitmqctl")
                .args(["close_all_connections", "-p", svc.vhost(), "test: broker restart"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        let r = client
            .post(svc.url(&format!("/api/v1/batches/{batch}/documents")))
            .bearer_auth(&co.key)
            .json(&json!({ "documentCategory": "identite", "document": support::b64(&support::png(32, i)) }))
            .send()
            .await
            .expect("no request hangs");
        if r.status().is_success() {
            accepted += 1;
        }
    }
    assert_eq!(
        accepted, 40,
        "deposits only need SQLite: the broker being away does not refuse them"
    );
    submit(&svc, &co.key, &batch).await;
    let out = Command::new("rabbitmqctl")
        .args(["close_all_connections", "-p", svc.vhost(), "test: broker restart"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_exactly_once(&svc, &co.key, &batch, accepted, &hook).await;
}

#[tokio::test]
async fn distributed_only_a_flushed_redis_loses_no_deadline_and_no_flag() {
    // A Redis database of its own, so FLUSHDB touches no other test.
    let url = "redis://127.0.0.1:6379/7";
    let svc = start(&[("SCEAU_REDIS_URL", url), ("SCEAU_WORKERS", "1")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = batch_of(&svc, &co.key, Some(&hook.url), 40, 160).await;
    let other = svc.open_batch(&co.key, None).await;
    submit(&svc, &co.key, &batch).await;
    svc.wait_batch(&co.key, &batch, LONG, |b| b["counts"]["succeeded"].as_u64() >= Some(3))
        .await;
    let out = Command::new("redis-cli").args(["-n", "7", "FLUSHDB"]).output().unwrap();
    assert!(out.status.success());
    assert_exactly_once(&svc, &co.key, &batch, 40, &hook).await;
    // The open batch's deadline is back in Redis.
    support::eventually(Duration::from_secs(10), "the deadline is re-seeded", || async {
        let out = Command::new("redis-cli")
            .args([
                "-n",
                "7",
                "ZSCORE",
                &format!("{}deadlines", svc.env_value("SCEAU_REDIS_PREFIX")),
                &other,
            ])
            .output()
            .unwrap();
        !String::from_utf8_lossy(&out.stdout).trim().is_empty()
    })
    .await;
}

#[tokio::test]
async fn distributed_only_drain_stops_processing_and_resume_restarts_it() {
    let svc = start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let drained = svc.ops(&["drain", "--wait", "--timeout", "30"]);
    assert_eq!(drained["idle"], true);
    let batch = batch_of(&svc, &co.key, Some(&hook.url), 20, 32).await;
    submit(&svc, &co.key, &batch).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (_, held) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(held["counts"]["succeeded"], 0, "nothing is processed while drained: {held}");
    let status: Value = svc.ops(&["status"]);
    assert_eq!(status["draining"], true);
    assert_eq!(status["workers"].as_array().unwrap().len(), 2);
    assert!(status["workers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["draining"] == true && w["inFlight"] == 0));
    let jobs = status["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "jobs.batch")
        .unwrap()
        .clone();
    assert_eq!(
        jobs["unacked"].as_u64().unwrap() + jobs["ready"].as_u64().unwrap(),
        20,
        "every job waits, ready or held: {jobs}"
    );
    svc.ops(&["resume"]);
    assert_exactly_once(&svc, &co.key, &batch, 20, &hook).await;
    assert_eq!(svc.ops(&["status"])["draining"], false);
}

#[tokio::test]
async fn distributed_only_a_poison_job_is_dead_lettered_and_replayed_once_fixed() {
    let svc = start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = batch_of(&svc, &co.key, Some(&hook.url), 5, 32).await;
    // Damage one stored document: every attempt at it fails, so its job is a poison message.
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).unwrap();
    let blob: String = db
        .query_row(
            "SELECT front_blob FROM batch_items WHERE batch_id = ?1 AND position = 3",
            [&batch],
            |r| r.get(0),
        )
        .unwrap();
    let path = svc.blob_path(&blob);
    let original = std::fs::read(&path).unwrap();
    let mut damaged = original.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0xff;
    std::fs::write(&path, &damaged).unwrap();
    submit(&svc, &co.key, &batch).await;

    support::eventually(LONG, "the poison job reaches the dead-letter queue", || async {
        svc.ops(&["dead-letters", "list"])["deadLetters"]["jobs.batch"] == 1
    })
    .await;
    let (_, rest) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(rest["counts"]["succeeded"], 4, "the rest of the batch is processed: {rest}");
    assert_eq!(svc.ops(&["status"])["deadLetters"], 1);

    std::fs::write(&path, &original).unwrap();
    let replayed = svc.ops(&["dead-letters", "replay", "--queue", "jobs.batch"]);
    assert_eq!(replayed["replayed"]["jobs.batch"], 1);
    assert_exactly_once(&svc, &co.key, &batch, 5, &hook).await;
}

/// A Redis server of the test's own, so it can be stopped without touching other tests.
struct PrivateRedis {
    child: Option<std::process::Child>,
}

impl PrivateRedis {
    fn start(port: u16) -> PrivateRedis {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server must be installed");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "private redis-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        PrivateRedis { child: Some(child) }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

#[tokio::test]
async fn distributed_only_workers_pause_while_redis_is_down_and_lose_nothing() {
    let port = 6390 + (std::process::id() % 50) as u16;
    let mut redis = PrivateRedis::start(port);
    let url = format!("redis://127.0.0.1:{port}/0");
    let svc = start(&[("SCEAU_REDIS_URL", &url), ("SCEAU_WORKERS", "1")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[]).await;
    let batch = batch_of(&svc, &co.key, Some(&hook.url), 40, 160).await;
    submit(&svc, &co.key, &batch).await;
    svc.wait_batch(&co.key, &batch, LONG, |b| b["counts"]["succeeded"].as_u64() >= Some(3))
        .await;
    redis.stop();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (_, during) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(during["counts"]["errored"], 0, "no job fails because Redis is away: {during}");
    assert_eq!(during["counts"]["canceled"], 0);
    let _back = PrivateRedis::start(port);
    assert_exactly_once(&svc, &co.key, &batch, 40, &hook).await;
}

/// Workers on another host: their data dir is their own, empty of documents; every document and
/// image is an object in the bucket, and a batch goes from deposit to downloaded image.
#[tokio::test]
async fn distributed_only_a_worker_without_the_gateways_data_dir_processes_a_batch() {
    let svc = start(&[]).await;
    let co = svc.company();
    assert_ne!(svc.worker_data_dir(), svc.data_dir());
    let batch = batch_of(&svc, &co.key, None, 4, 64).await;
    let objects = common::test_fixtures::files_under(&svc.blob_dir());
    assert_eq!(objects.len(), 4, "one object per deposited document: {objects:?}");
    submit(&svc, &co.key, &batch).await;
    let done = svc.wait_batch(&co.key, &batch, LONG, |b| b["status"] == "ended").await;
    assert_eq!(done["counts"]["succeeded"], 4, "{done}");
    let consultation = done["items"][0]["consultationId"].as_str().expect("a consultation").to_owned();
    let image = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{consultation}/images/recto")))
        .bearer_auth(&co.key)
        .send()
        .await
        .unwrap();
    assert_eq!(image.status(), 200);
    assert_eq!(
        image.bytes().await.unwrap().len(),
        support::png(64, 0).len(),
        "the image read back from the bucket"
    );
    for dir in [svc.data_dir(), svc.worker_data_dir()] {
        assert!(!dir.join("blobs").exists(), "no blob directory in {}", dir.display());
    }
    let stored = common::test_fixtures::files_under(&svc.blob_dir());
    assert!(stored.len() >= 4, "the consultations' images are objects too: {stored:?}");
}

/// A bucket that stops answering is an outage: a deposit is refused 503 with Retry-After within
/// seconds and leaves nothing recorded; once the bucket is back, deposits and processing resume,
/// and the documents that were in flight during it are analysed, not dead-lettered.
#[tokio::test]
async fn distributed_only_a_bucket_that_does_not_answer_is_503_and_work_waits_it_out() {
    let mut svc = start(&[]).await;
    let co = svc.company();
    let batch = batch_of(&svc, &co.key, None, 1, 64).await;
    svc.s3().stop();
    let started = std::time::Instant::now();
    let refused = svc
        .http
        .post(svc.url(&format!("/api/v1/batches/{batch}/documents")))
        .bearer_auth(&co.key)
        .json(&json!({ "documentCategory": "identite", "document": support::b64(&support::png(64, 9)) }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "5");
    assert!(started.elapsed() < Duration::from_secs(20), "answered in {:?}", started.elapsed());
    let (_, shown) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(shown["counts"]["total"], 1, "the refused deposit is not recorded: {shown}");

    svc.s3().restart();
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &support::png(64, 10)).await.0, 201);
    submit(&svc, &co.key, &batch).await;
    let done = svc.wait_batch(&co.key, &batch, LONG, |b| b["status"] == "ended").await;
    assert_eq!(done["counts"]["succeeded"], 2, "{done}");

    // Documents in flight wait out an outage longer than their delivery attempts would last
    // (5 tries, 2 s apart): none is dead-lettered, all are analysed once the bucket is back.
    let batch = batch_of(&svc, &co.key, None, 3, 64).await;
    svc.s3().stop();
    submit(&svc, &co.key, &batch).await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    let (_, waiting) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(waiting["counts"]["succeeded"], 0, "the bucket is down: {waiting}");
    svc.s3().restart();
    let done = svc.wait_batch(&co.key, &batch, LONG, |b| b["status"] == "ended").await;
    assert_eq!(done["counts"]["succeeded"], 3, "{done}");
}
