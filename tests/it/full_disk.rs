//! A full disk is an outage, not a bug: the service's data dir is a small tmpfs, filled with a
//! ballast file; deposits and journey uploads then answer 503 `service_unavailable` with
//! Retry-After (never 500), the service stays up, no file is left without its row, and once the
//! ballast is deleted the next deposit is taken and processed without a restart.

use crate::support;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{journey, Service, TempDir};

/// A tmpfs mounted for the test's life, unmounted on drop (after the service using it is gone).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).expect("create the mount point");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(dir)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "the full-disk test needs to mount a tmpfs (root or CAP_SYS_ADMIN): mount said: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Tmpfs(dir.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success());
        if !unmounted {
            // Still busy (a process not reaped yet): detach it, the kernel frees it when unused.
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Writes `path` until the file system refuses, then gives `leave` bytes back.
fn fill(path: &Path, leave: u64) {
    let mut file = std::fs::File::create(path).expect("create the ballast");
    let chunk = vec![0x5au8; 64 * 1024];
    let mut written = 0u64;
    loop {
        match file.write(&chunk) {
            Ok(0) => break,
            Ok(n) => written += n as u64,
            Err(e) if e.raw_os_error() == Some(28) => break,
            Err(e) => panic!("ballast: {e}"),
        }
    }
    file.set_len(written.saturating_sub(leave)).expect("shrink the ballast");
    file.sync_all().expect("sync the ballast");
}

/// Every file under the blob directory, by name.
fn blob_files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(blob_files(&path));
        } else {
            out.insert(entry.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

/// Every blob the database refers to.
fn blob_rows(data: &Path) -> BTreeSet<String> {
    let db = rusqlite::Connection::open_with_flags(data.join("sceau.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open the database");
    let mut out = BTreeSet::new();
    for sql in [
        "SELECT front_blob FROM batch_items WHERE front_blob IS NOT NULL",
        "SELECT back_blob FROM batch_items WHERE back_blob IS NOT NULL",
        "SELECT blob FROM verification_uploads",
        "SELECT blob FROM consultation_images WHERE purged_at IS NULL",
    ] {
        let mut stmt = db.prepare(sql).expect(sql);
        let names = stmt.query_map([], |r| r.get::<_, String>(0)).expect(sql);
        out.extend(names.map(|n| n.expect(sql)));
    }
    out
}

fn assert_unavailable(status: u16, retry_after: Option<String>, body: &Value) {
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"], "service_unavailable", "{body}");
    let wait: u64 = retry_after.expect("Retry-After").parse().expect("Retry-After in seconds");
    assert!(wait >= 1, "{wait}");
}

/// A deposit with its status, Retry-After and body.
async fn deposit(svc: &Service, key: &str, batch: &str, file: &[u8]) -> (u16, Option<String>, Value) {
    let r = svc
        .http
        .post(svc.url(&format!("/api/v1/batches/{batch}/documents")))
        .bearer_auth(key)
        .json(&json!({ "documentCategory": "identite", "document": support::b64(file) }))
        .send()
        .await
        .expect("POST a deposit");
    let status = r.status().as_u16();
    let retry = r.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    (status, retry, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_full_disk_answers_503_and_work_resumes_once_space_is_back() {
    let scratch = TempDir::new("full-disk");
    let data = scratch.0.join("data");
    // Declared before the service, so dropped after it: the processes are gone before the unmount.
    let _tmpfs = Tmpfs::mount(&data, "8m");
    let data_dir = data.display().to_string();
    // The blobs on the small file system too, in both modes (the distributed workers read them
    // from there).
    let blob_url = format!("file://{data_dir}/blobs");
    let svc = Service::start(&[("SCEAU_DATA_DIR", &data_dir), ("SCEAU_BLOB_URL", &blob_url)]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let (s, _, body) = deposit(&svc, &co.key, &batch, &support::png(120, 1)).await;
    assert_eq!(s, 201, "{body}");
    let workflow = journey::workflow(&svc, &co, "identite", None);
    let session = journey::session(&svc, &co, &workflow, "full-disk").await;
    let (_, _, csrf) = journey::open(&svc, &session.url, None).await;
    let csrf = csrf.expect("the page's CSRF token");

    // About 1.5 MB left: a few deposits of 250 KB fit, then none.
    let ballast = data.join("ballast");
    fill(&ballast, 1_500_000);
    let document = support::png(290, 2);
    let mut statuses = Vec::new();
    for i in 0..40u8 {
        let (status, retry, body) = deposit(&svc, &co.key, &batch, &support::png(290, 10 + i)).await;
        statuses.push(status);
        match status {
            201 => continue,
            503 => {
                assert_unavailable(status, retry, &body);
                if statuses.iter().filter(|s| **s == 503).count() == 3 {
                    break;
                }
            }
            _ => panic!("a deposit on a full disk answered {status}: {body}\n{}", svc.log()),
        }
    }
    eprintln!("deposits on the filling disk: {statuses:?}");
    assert!(statuses.contains(&503), "the disk never filled: {statuses:?}");
    let r = svc
        .http
        .post(format!("{}/files/front", session.url))
        .header("content-type", "image/png")
        .header("sec-fetch-site", "same-origin")
        .header("x-csrf-token", &csrf)
        .body(document.clone())
        .send()
        .await
        .expect("POST the journey file");
    let (status, retry) = (
        r.status().as_u16(),
        r.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned()),
    );
    assert_unavailable(status, retry, &r.json().await.unwrap_or(Value::Null));

    // Up, and nothing half-written: every file has its row and every row its file.
    let health = svc.http.get(svc.url("/healthz")).send().await.expect("healthz");
    assert_eq!(health.status(), 200);
    assert_eq!(
        blob_files(&data.join("blobs")),
        blob_rows(&data),
        "files and rows differ on a full disk"
    );

    // Space comes back: the next deposit and upload are taken, and the batch is processed.
    std::fs::remove_file(&ballast).expect("delete the ballast");
    let (s, _, body) = deposit(&svc, &co.key, &batch, &document).await;
    assert_eq!(s, 201, "{body}\n{}", svc.log());
    let (s, body) = journey::upload(&svc, &session.url, "front", Some(&csrf), document, "image/png").await;
    assert_eq!(s, 201, "{body}");
    let deposited = statuses.iter().filter(|s| **s == 201).count() + 2;
    let (s, body) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_eq!(s, 200, "{body}");
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(120), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["counts"]["total"], deposited, "{done}");
    assert_eq!(done["counts"]["succeeded"], deposited, "{done}");
    support::eventually(Duration::from_secs(20), "the processed deposits' files are released", || async {
        blob_files(&data.join("blobs")) == blob_rows(&data)
    })
    .await;
}
