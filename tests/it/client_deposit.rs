//! `sceau client deposit` through the real binary: a folder of 450 generated documents of about
//! 100 KB deposited in three batches, the client killed (SIGKILL) about a third of the way and run
//! again, which resumes without depositing anything twice and ends with a correct CSV; a third run
//! deposits nothing more. Also its clear refusals (no folder, no key), a company limit waited out,
//! and the stop on a key that a crashed service left claimed.

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{Service, TempDir, BIN};

const FILES: usize = 450;
const STATE: &str = ".sceau-deposit.jsonl";

/// `n` noise PNGs of about 100 KB (183² pixels), named in deposit order.
fn documents(dir: &Path, n: usize) {
    for i in 0..n {
        std::fs::write(dir.join(format!("doc-{i:03}.png")), support::png(183, i as u8)).unwrap();
    }
}

/// Deposit events the state file records.
fn deposits_recorded(state: &Path) -> usize {
    std::fs::read_to_string(state)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(r#""event":"deposited""#))
        .count()
}

fn deposit_command(svc: &Service, key: &str, dir: &Path, out: &Path) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(["client", "deposit"])
        .arg(dir)
        .args(["--category", "identite", "--wait", "--out"])
        .arg(out)
        .env("SCEAU_API_KEY", key)
        .env("SCEAU_URL", &svc.base);
    command
}

/// What a kill leaves at worst: the request of the next file done by the service (which runs a
/// request to its end though its client is gone) but not recorded. Made here for sure, for the file
/// after the last recorded one, posted under its key exactly as the client posts it: the resumed
/// run must get that answer replayed, not deposit the file a second time.
async fn unrecorded_deposit(svc: &Service, key: &str, state: &Path, recorded: usize) {
    let lines = std::fs::read_to_string(state).unwrap();
    let mut lines = lines.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let run = lines.next().unwrap()["run"].as_str().unwrap().to_owned();
    let batches: Vec<String> = lines
        .filter(|l| l["event"] == "batch_created")
        .map(|l| l["id"].as_str().unwrap().to_owned())
        .collect();
    let index = recorded + 1;
    assert!(index < 200, "killed at {recorded}: the file is meant for the first batch");
    let name = format!("doc-{index:03}.png");
    let document = support::b64(&std::fs::read(state.with_file_name(&name)).unwrap());
    // The client's body to the byte (its fields in that order): the key's fingerprint covers it.
    let body = format!(r#"{{"documentCategory":"identite","document":"{document}","externalRef":"{name}"}}"#);
    let response = reqwest::Client::new()
        .post(svc.url(&format!("/api/v1/batches/{}/documents", batches[0])))
        .bearer_auth(key)
        .header("Idempotency-Key", format!("{run}:doc:{index}"))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201, "{}", response.text().await.unwrap());
}

/// GET `path` (POST `body` when there is one).
async fn call(svc: &Service, key: &str, path: &str, body: Option<serde_json::Value>) -> (u16, serde_json::Value) {
    let http = &svc.http;
    let request = match body {
        Some(body) => http.post(svc.url(path)).json(&body),
        None => http.get(svc.url(path)),
    };
    let response = request.bearer_auth(key).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or_default())
}

/// The company's batches and the items they hold in all.
async fn held(svc: &Service, key: &str) -> (Vec<serde_json::Value>, u64) {
    let (status, batches) = call(svc, key, "/api/v1/batches?limit=100", None).await;
    assert_eq!(status, 200, "{batches}");
    let batches = batches["data"].as_array().unwrap().clone();
    let total = batches.iter().map(|b| b["counts"]["total"].as_u64().unwrap()).sum();
    (batches, total)
}

#[tokio::test]
async fn a_folder_of_450_documents_is_deposited_in_three_batches_through_a_kill_and_a_resume() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    // Images due for purge as soon as analysed: the 400 non-purged documents limit frees as it goes.
    svc.admin(&["company", "set", &co.id, "--retention-days", "0", "--yes"]);
    let folder = TempDir::new("deposit");
    documents(&folder.0, FILES);
    let out = svc.dir.0.join("results.csv");
    let state = folder.0.join(STATE);
    let started = Instant::now();

    // The first run, killed once about a third of the files are recorded deposited.
    let mut first = deposit_command(&svc, &co.key, &folder.0, &out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while deposits_recorded(&state) < 150 {
        assert!(first.try_wait().unwrap().is_none(), "the first run ended before it was killed");
        assert!(started.elapsed() < Duration::from_secs(60), "150 deposits took over a minute");
        std::thread::sleep(Duration::from_millis(5));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let at_kill = deposits_recorded(&state);
    assert!(at_kill < FILES, "killed at {at_kill}");
    assert!(!out.exists(), "no report from a killed run");
    unrecorded_deposit(&svc, &co.key, &state, at_kill).await;

    // The second run resumes and finishes.
    let second = deposit_command(&svc, &co.key, &folder.0, &out).output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}\n{}", svc.log());
    assert!(stderr.contains("resuming run"), "{stderr}");
    assert!(stderr.contains("450 files: 450 succeeded in 3 batches"), "{stderr}");
    let elapsed = started.elapsed();

    // The CSV: one row per file, in the folder's order, each analysed.
    let mut reader = csv::Reader::from_path(&out).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(
        header,
        [
            "file",
            "batch_id",
            "item_id",
            "status",
            "error",
            "verdict",
            "decision",
            "consultation_id"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), FILES);
    let mut items = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(&row[0], format!("doc-{i:03}.png"));
        assert!(row[1].starts_with("BAT-"), "{row:?}");
        assert!(row[2].starts_with("BTI-") && items.insert(row[2].to_owned()), "{row:?}");
        assert_eq!((&row[3], &row[4]), ("succeeded", ""), "{row:?}");
        assert!(!row[5].is_empty(), "a verdict: {row:?}");
        assert!(row[7].starts_with("CSL-"), "{row:?}");
    }
    // Batches of 200, 200 and 50, in the folder's order.
    let batch_of = |i: usize| rows[i][1].to_owned();
    assert_eq!(
        (batch_of(0), batch_of(200), batch_of(400)),
        (batch_of(199), batch_of(399), batch_of(449))
    );

    // The service holds exactly 450 items over exactly three batches: nothing deposited twice.
    let (batches, total) = held(&svc, &co.key).await;
    assert_eq!((batches.len(), total), (3, FILES as u64), "{batches:?}");
    assert!(batches.iter().all(|b| b["status"] == "ended"), "{batches:?}");
    let (_, sample) = call(&svc, &co.key, &format!("/api/v1/consultations/{}", &rows[449][7]), None).await;
    assert_eq!(sample["externalRef"], "doc-449.png");

    // A run on the finished folder deposits nothing more and reports the same.
    let lines = std::fs::read_to_string(&state).unwrap().lines().count();
    let report = std::fs::read(&out).unwrap();
    let third = deposit_command(&svc, &co.key, &folder.0, &out).output().unwrap();
    assert!(third.status.success(), "{}", String::from_utf8_lossy(&third.stderr));
    assert_eq!(std::fs::read_to_string(&state).unwrap().lines().count(), lines);
    assert_eq!(std::fs::read(&out).unwrap(), report);
    assert_eq!(held(&svc, &co.key).await.1, FILES as u64);
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&state).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    // The API key is in no output and not in the state file.
    let third_stderr = String::from_utf8_lossy(&third.stderr);
    assert!(!std::fs::read_to_string(&state).unwrap().contains(&co.key));
    assert!(!stderr.contains(&co.key) && !third_stderr.contains(&co.key));
    assert!(!String::from_utf8_lossy(&report).contains(&co.key));
    eprintln!("450 documents deposited, killed at {at_kill}, resumed and reported in {elapsed:?}; the resumed run said:\n{stderr}");
}

/// Refused before anything is sent: no folder, no key, a service in clear on another machine (the
/// key and the documents would cross the network readable), a link out of the folder.
#[test]
fn no_folder_no_key_plain_http_or_a_link_out_is_a_clear_error() {
    let folder = TempDir::new("deposit-refusals");
    let run = |dir: &Path, key: Option<&str>| {
        let mut command = Command::new(BIN);
        command
            .args(["client", "deposit"])
            .arg(dir)
            .args(["--category", "identite"])
            .env("SCEAU_URL", "http://127.0.0.1:9");
        match key {
            Some(key) => command.env("SCEAU_API_KEY", key),
            None => command.env_remove("SCEAU_API_KEY"),
        };
        let out = command.output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let missing = folder.0.join("nowhere");
    let stderr = run(&missing, Some("sk_test_x"));
    assert!(
        stderr.contains(&format!("cannot read the folder {}", missing.display())),
        "{stderr}"
    );

    std::fs::write(folder.0.join("a.png"), support::png(8, 1)).unwrap();
    let stderr = run(&folder.0, None);
    assert!(stderr.contains("SCEAU_API_KEY is not set"), "{stderr}");
    assert!(!folder.0.join(STATE).exists(), "nothing started without a key");

    let plain = Command::new(BIN)
        .args(["client", "deposit"])
        .arg(&folder.0)
        .args(["--category", "identite"])
        .env("SCEAU_URL", "http://sceau.example.com")
        .env("SCEAU_API_KEY", "sk_test_x")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(!plain.status.success());
    assert!(stderr.contains("SCEAU_URL must use https"), "{stderr}");

    let outside = TempDir::new("deposit-outside");
    std::fs::write(outside.0.join("passwd"), b"root:x:0:0").unwrap();
    std::os::unix::fs::symlink(outside.0.join("passwd"), folder.0.join("b.png")).unwrap();
    let stderr = run(&folder.0, Some("sk_test_x"));
    assert!(stderr.contains("\"b.png\" is a link to a file outside the folder"), "{stderr}");
}

/// Opens a batch and fills it with `n` small documents: documents of the company the client does
/// not know about.
async fn blocker(svc: &Service, key: &str, n: usize) -> String {
    let batch = svc.open_batch(key, None).await;
    for i in 0..n {
        let (status, body) = svc.deposit(key, &batch, "identite", &support::png(8, i as u8)).await;
        assert_eq!(status, 201, "{body}");
    }
    batch
}

#[tokio::test]
async fn the_document_limit_is_waited_out_a_run_that_gives_up_resumes_and_a_bad_file_is_refused() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    svc.admin(&["company", "set", &co.id, "--retention-days", "0", "--yes"]);
    // 396 documents held by two open batches of another tool: the client may hold 4 at a time.
    let blockers = [blocker(&svc, &co.key, 200).await, blocker(&svc, &co.key, 196).await];
    let folder = TempDir::new("deposit-limit");
    for i in 0..10 {
        std::fs::write(folder.0.join(format!("doc-{i}.png")), support::png(16, i)).unwrap();
    }
    std::fs::write(folder.0.join("zz-notes.txt"), b"not a document").unwrap();
    let state = svc.dir.0.join("state.jsonl");
    let report = svc.dir.0.join("report.json");
    let run = |dir: &Path, quota_wait: &str| {
        Command::new(BIN)
            .args(["client", "deposit"])
            .arg(dir)
            .args(["--category", "identite", "--wait", "--json", "--quota-wait", quota_wait, "--state"])
            .arg(&state)
            .arg("--out")
            .arg(&report)
            .env("SCEAU_API_KEY", &co.key)
            .env("SCEAU_URL", &svc.base)
            .output()
            .unwrap()
    };

    // The 5th deposit meets the limit: the batch holding 4 is submitted, its documents analysed and
    // purged, and the deposits go on in another batch.
    let first = run(&folder.0, "1m");
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(!first.status.success(), "a refused file is a failure: {stderr}");
    assert!(stderr.contains("zz-notes.txt: refused (invalid_document)"), "{stderr}");
    assert!(stderr.contains("1 file(s) refused"), "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(rows.len(), 11);
    for (i, row) in rows[..10].iter().enumerate() {
        assert_eq!(row["file"], format!("doc-{i}.png"));
        assert_eq!(row["status"], "succeeded", "{row}");
        assert!(row["consultationId"].as_str().unwrap().starts_with("CSL-"), "{row}");
    }
    assert_eq!(
        (&rows[10]["status"], &rows[10]["error"]),
        (&"refused".into(), &"invalid_document".into())
    );
    assert!(rows[..4].iter().all(|r| r["batchId"] == rows[0]["batchId"]), "{rows:?}");
    assert_ne!(rows[4]["batchId"], rows[0]["batchId"], "{rows:?}");
    let (batches, total) = held(&svc, &co.key).await;
    assert_eq!(total, 396 + 10, "{batches:?}");

    // The other tool fills the limit (our documents are purged): a run that waits 2 s gives up, saying it can be resumed.
    for i in 0..4 {
        let document = serde_json::json!({ "documentCategory": "identite", "document": support::b64(&support::png(8, i)) });
        let path = format!("/api/v1/batches/{}/documents", blockers[1]);
        let (status, body) = call(&svc, &co.key, &path, Some(document)).await;
        assert_eq!(status, 201, "{body}");
    }
    let more = TempDir::new("deposit-limit-more");
    for i in 0..3 {
        std::fs::write(more.0.join(format!("late-{i}.png")), support::png(16, 20 + i)).unwrap();
    }
    std::fs::remove_file(&state).unwrap();
    let waited = Instant::now();
    let given_up = run(&more.0, "2s");
    let stderr = String::from_utf8_lossy(&given_up.stderr);
    assert!(!given_up.status.success());
    assert!(stderr.contains("gave up after 2.0 s"), "{stderr}");
    assert!(stderr.contains("document_quota_exceeded"), "{stderr}");
    assert!(stderr.contains("run the same command again"), "{stderr}");
    assert!(!stderr.contains(&co.key), "{stderr}");
    assert!(waited.elapsed() < Duration::from_secs(10), "{:?}", waited.elapsed());
    assert_eq!(deposits_recorded(&state), 0);

    // Once the other tool's batches are submitted, analysed and purged, the run resumes and ends.
    for batch in &blockers {
        let path = format!("/api/v1/batches/{batch}/submit");
        let (status, body) = call(&svc, &co.key, &path, Some(serde_json::json!({}))).await;
        assert_eq!(status, 200, "{body}");
    }
    let resumed = run(&more.0, "1m");
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{stderr}");
    assert!(stderr.contains("resuming run"), "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r["status"] == "succeeded"), "{rows:?}");
    assert_eq!(held(&svc, &co.key).await.1, 400 + 10 + 3);
}

/// The one case a key stays held: the service crashed (or was killed) mid-request, after claiming
/// the key and before answering; it frees such a claim only after 10 minutes. Planted here as that
/// crash leaves it, a claim with no answer in `sceau.db`, for the run's first step: the run waits
/// 10 s for it, then stops saying so and that it can be resumed; once the claim is gone, it resumes.
#[tokio::test]
async fn a_key_left_claimed_by_a_crashed_service_stops_the_run_resumable() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let folder = TempDir::new("deposit-held");
    for i in 0..2 {
        std::fs::write(folder.0.join(format!("doc-{i}.png")), support::png(16, i)).unwrap();
    }
    let run = uuid::Uuid::new_v4().to_string();
    let header = serde_json::json!({ "run": run, "category": "identite", "files": ["doc-0.png", "doc-1.png"] });
    std::fs::write(folder.0.join(STATE), format!("{header}\n")).unwrap();
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).unwrap();
    db.busy_timeout(Duration::from_secs(10)).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    db.execute(
        "INSERT INTO idempotency_keys (company_id, mode, key, created_at_ms) VALUES (?1, 'live', ?2, ?3)",
        rusqlite::params![co.id, format!("{run}:batch:0"), now],
    )
    .unwrap();
    let out = svc.dir.0.join("held.csv");

    let stopped = deposit_command(&svc, &co.key, &folder.0, &out).output().unwrap();
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("opening batch #1: the service still holds this step's idempotency key"),
        "{stderr}"
    );
    assert!(stderr.contains("run the same command again"), "{stderr}");
    assert_eq!(held(&svc, &co.key).await.0.len(), 0, "nothing opened");

    // The service frees the claim after 10 minutes: the run then resumes and ends.
    db.execute("DELETE FROM idempotency_keys WHERE key = ?1", [format!("{run}:batch:0")])
        .unwrap();
    let resumed = deposit_command(&svc, &co.key, &folder.0, &out).output().unwrap();
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(held(&svc, &co.key).await.1, 2);
}
