//! The engine's optional programs and its trust list, as an operator meets them: `sceau doctor`, the
//! start-up lines of a missing program or an expired list, `/readyz`'s capabilities, and
//! `sceau admin trust import` (the shipped list accepted, a tampered or older one refused).

use crate::support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use support::{Mode, Service, TempDir, BIN};

const SHIPPED_LIST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/worker/data/2ddoc/ants-tsl.xml");

fn shipped_list() -> String {
    std::fs::read_to_string(SHIPPED_LIST).expect("the shipped trust list")
}

/// A directory for `PATH` holding links to the named programs only.
fn path_with(programs: &[&str]) -> TempDir {
    let dir = TempDir::new("path");
    for program in programs {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .expect("sh");
        let target = String::from_utf8_lossy(&found.stdout).trim().to_string();
        assert!(
            !target.is_empty(),
            "{program} must be installed for this test (scripts/system-deps)"
        );
        std::os::unix::fs::symlink(&target, dir.0.join(program)).expect("link");
    }
    dir
}

fn doctor(svc: &Service, extra_env: &[(&str, &str)], json: bool) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("doctor").envs(svc.env.iter().map(|(k, v)| (k, v)));
    cmd.envs(extra_env.iter().copied());
    if json {
        cmd.arg("--json");
    }
    cmd.output().expect("run sceau doctor")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn imported_path(svc: &Service) -> PathBuf {
    svc.data_dir().join("trust/ants-tsl.xml")
}

fn write_list(dir: &Path, name: &str, xml: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, xml).expect("write list");
    path
}

async fn readyz(svc: &Service) -> Value {
    let r = svc.http.get(svc.url("/readyz")).send().await.expect("readyz");
    assert_eq!(r.status(), 200);
    r.json().await.expect("readyz is JSON")
}

#[tokio::test]
async fn doctor_reports_a_good_install() {
    let svc = Service::start(&[]).await;
    let out = doctor(&svc, &[], false);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for line in [
        "ok   tesseract",
        "ok   pdftoppm",
        "ok   xmlsec1",
        "ok   data directory",
        "ok   master key",
        "ok   trust list",
    ] {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
    assert!(text.contains("languages fra"), "{text}");
    assert!(text.contains("sequence 23, issued 2026-05-11"), "{text}");
    assert!(text.contains("0 failure(s)"), "{text}");
    // The isolation of the sandbox children on this kernel (6.x, with Landlock), each feature named;
    // the kernel does not apply RLIMIT_NPROC to root, and doctor says so.
    for line in [
        "ok   sandbox no_new_privs",
        "ok   sandbox seccomp",
        "ok   sandbox landlock",
        "ok   sandbox network",
    ] {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
    let root = std::fs::read_to_string("/proc/self/status")
        .expect("status")
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    let nproc = if root {
        "WARN sandbox process limit"
    } else {
        "ok   sandbox process limit"
    };
    assert!(text.contains(nproc), "no `{nproc}` in:\n{text}");

    let json: Value = serde_json::from_slice(&doctor(&svc, &[], true).stdout).expect("doctor --json");
    let checks = json["checks"].as_array().expect("checks");
    let broker = if svc.mode == support::Mode::Distributed {
        "reachable"
    } else {
        "not configured"
    };
    let rabbit = checks.iter().find(|c| c["name"] == "rabbitmq").expect("rabbitmq check");
    assert!(rabbit["detail"].as_str().unwrap_or("").contains(broker), "{rabbit}");
    assert_ne!(json["status"], "fail", "{json}");
}

#[tokio::test]
async fn doctor_fails_on_a_shared_data_directory() {
    let svc = Service::start(&[]).await;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(svc.data_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = doctor(&svc, &[], false);
    let text = stdout(&out);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("FAIL data directory") && text.contains("chmod 700"), "{text}");
}

#[tokio::test]
async fn a_missing_program_is_named_by_doctor_and_at_start() {
    let path = path_with(&["tesseract", "xmlsec1"]);
    let path_var = path.0.display().to_string();
    let mut svc = Service::start(&[("PATH", &path_var)]).await;
    let out = doctor(&svc, &[], false);
    let text = stdout(&out);
    assert!(out.status.success(), "a missing optional program is a warning: {text}");
    assert!(text.contains("ok   tesseract"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("WARN pdftoppm"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("vectors") && line.contains("apt-get install poppler-utils"), "{line}");

    support::eventually(Duration::from_secs(20), "the start-up line", || async {
        svc.log().contains("missing program")
    })
    .await;
    let log = svc.log();
    let start_lines: Vec<_> = log.lines().filter(|l| l.contains("missing program")).collect();
    assert!(
        !start_lines.is_empty()
            && start_lines
                .iter()
                .all(|l| l.contains("pdftoppm") && l.contains("apt-get install poppler-utils")),
        "one line per missing program at start: {log}"
    );
    assert!(!log.contains("missing program tesseract"), "{log}");

    let ready = readyz(&svc).await;
    let programs = ready["engine"]["programs"].as_array().expect("programs");
    let pdftoppm = programs.iter().find(|p| p["program"] == "pdftoppm").expect("pdftoppm");
    assert_eq!(pdftoppm["available"], false, "{ready}");
    svc.stop();
}

#[tokio::test]
async fn readyz_carries_the_engine_capabilities() {
    let svc = Service::start(&[]).await;
    let ready = readyz(&svc).await;
    assert_eq!(ready["status"], "ready", "{ready}");
    let programs = ready["engine"]["programs"].as_array().expect("programs");
    for name in ["tesseract", "pdftoppm", "xmlsec1"] {
        let p = programs
            .iter()
            .find(|p| p["program"] == name)
            .unwrap_or_else(|| panic!("{name}: {ready}"));
        assert_eq!(p["available"], true, "{ready}");
    }
    let list = &ready["engine"]["trustList"];
    assert_eq!(
        (list["origin"].as_str(), list["sequence"].as_u64()),
        (Some("shipped"), Some(23)),
        "{ready}"
    );
    assert_eq!(list["issued"], "2026-05-11T14:00:00Z");
    assert_eq!(ready["engine"]["trustListExpired"], false);
}

/// Analyses one batch document, so that analysis children are alive; their pids.
async fn children_after_a_document(svc: &Service, key: &str) -> Vec<u32> {
    let batch = svc.open_batch(key, None).await;
    let (status, body) = svc.deposit(key, &batch, "identite", &support::png(64, 7)).await;
    assert_eq!(status, 201, "{body}");
    svc.post(key, &format!("/api/v1/batches/{batch}/submit"), serde_json::json!(null))
        .await;
    let ended = svc
        .wait_batch(key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    assert_eq!(ended["counts"]["succeeded"], 1, "{ended}");
    support::children::analysis_children(svc).iter().map(|c| c.pid).collect()
}

#[tokio::test]
async fn an_imported_list_shows_at_once_and_is_used_after_a_restart() {
    let mut svc = Service::start(&[]).await;
    let co = svc.company();
    let before = children_after_a_document(&svc, &co.key).await;
    assert!(!before.is_empty(), "an analysis child is alive after a document");
    let dir = TempDir::new("tsl");
    let file = write_list(&dir.0, "tsl_signed.xml", &shipped_list());
    let imported = svc.admin(&["trust", "import", file.to_str().unwrap()]);
    assert_eq!(imported["trustList"]["sequence"], 23, "{imported}");
    assert_eq!(imported["trustList"]["issued"], "2026-05-11T14:00:00Z");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(imported_path(&svc)).expect("imported file").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read_to_string(imported_path(&svc)).unwrap(), shipped_list());
    // The running gateway reports the list it now uses, without a restart.
    let list = &readyz(&svc).await["engine"]["trustList"];
    assert_eq!(
        (list["origin"].as_str(), list["sequence"].as_u64()),
        (Some("imported"), Some(23)),
        "{list}"
    );
    if svc.mode == Mode::Distributed {
        // The workers share no directory with the gateway: the list reaches theirs through the
        // blob store.
        let copy = svc.worker_data_dir().join("trust/ants-tsl.xml");
        support::eventually(Duration::from_secs(20), "the workers' copy of the list", || async {
            std::fs::read_to_string(&copy).is_ok_and(|xml| xml == shipped_list())
        })
        .await;
    }
    // Each child loaded the list when it started: those alive before the import are retired, and
    // the next document is analysed by a child that loads the imported one.
    support::eventually(Duration::from_secs(20), "the children renewed", || async {
        let alive = support::children::analysis_children(&svc);
        !alive.iter().any(|child| before.contains(&child.pid))
    })
    .await;
    let after = children_after_a_document(&svc, &co.key).await;
    assert!(after.iter().all(|pid| !before.contains(pid)), "{before:?} {after:?}");

    svc.stop();
    svc.boot().await;
    let list = &readyz(&svc).await["engine"]["trustList"];
    assert_eq!(list["origin"], "imported", "{list}");
    assert_eq!(list["issued"], "2026-05-11T14:00:00Z");
    let shown = svc.admin(&["trust", "show"]);
    assert_eq!(
        (shown["origin"].as_str(), shown["expired"].as_bool()),
        (Some("imported"), Some(false)),
        "{shown}"
    );
}

#[tokio::test]
async fn a_tampered_list_is_refused_and_nothing_changes() {
    let svc = Service::start(&[]).await;
    let dir = TempDir::new("tsl");
    let xml = shipped_list();
    // One base64 character inside the first CA certificate, and, separately, one digit of the issue date.
    let at = xml.find("<tsl:X509Certificate>").expect("a certificate") + "<tsl:X509Certificate>".len() + 200;
    let mut bytes = xml.clone().into_bytes();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    let tampered_certificate = String::from_utf8(bytes).unwrap();
    let tampered_date = xml.replacen("2026-05-11T14:00:00Z", "2026-05-12T14:00:00Z", 1);
    for (name, tampered) in [("certificate", tampered_certificate), ("date", tampered_date)] {
        let file = write_list(&dir.0, "tampered.xml", &tampered);
        let out = svc.admin_raw(&["trust", "import", file.to_str().unwrap()], true);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "tampered {name} accepted");
        assert!(err.contains("signature does not verify"), "{name}: {err}");
        assert!(!imported_path(&svc).exists(), "{name}: nothing written");
        let left: Vec<_> = std::fs::read_dir(svc.data_dir().join("trust"))
            .map(|d| d.count())
            .into_iter()
            .collect();
        assert!(left.iter().all(|&n| n == 0), "no staged file left: {left:?}");
    }
    assert_eq!(readyz(&svc).await["engine"]["trustList"]["origin"], "shipped");
}

#[tokio::test]
async fn a_list_older_than_the_one_in_use_is_refused() {
    let mut svc = Service::start(&[]).await;
    svc.stop();
    // A list of sequence 24 already in use (as a past import left it); the shipped sequence 23 is older.
    let newer = shipped_list().replacen("<tsl:TSLSequenceNumber>23<", "<tsl:TSLSequenceNumber>24<", 1);
    std::fs::create_dir_all(svc.data_dir().join("trust")).unwrap();
    std::fs::write(imported_path(&svc), &newer).unwrap();
    let dir = TempDir::new("tsl");
    let file = write_list(&dir.0, "tsl_signed.xml", &shipped_list());
    let out = svc.admin_raw(&["trust", "import", file.to_str().unwrap()], true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an older list accepted");
    assert!(err.contains("older than the one in use") && err.contains("sequence 24"), "{err}");
    assert_eq!(std::fs::read_to_string(imported_path(&svc)).unwrap(), newer, "nothing changed");
}

#[tokio::test]
async fn an_expired_list_is_a_warning_at_start() {
    let mut svc = Service::start(&[]).await;
    svc.stop();
    // The list in use is past its next update (an import long ago, never renewed).
    let expired = shipped_list().replacen("<tsl:dateTime>2027-05-11T14:00:00Z<", "<tsl:dateTime>2026-06-01T00:00:00Z<", 1);
    assert_ne!(expired, shipped_list(), "the next update was replaced");
    // Each host reads the list imported into its own data dir: in distributed mode the workers'
    // too (they share no directory with the gateway).
    for data in [svc.data_dir(), svc.worker_data_dir()] {
        std::fs::create_dir_all(data.join("trust")).unwrap();
        std::fs::write(data.join("trust/ants-tsl.xml"), &expired).unwrap();
    }
    svc.boot().await;
    // In distributed mode the workers print it, and the gateway does not wait for them.
    support::eventually(Duration::from_secs(20), "the expiry warning", || async {
        svc.log().contains("trust list in use")
    })
    .await;
    let log = svc.log();
    let warning = log
        .lines()
        .find(|l| l.contains("trust list in use"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        warning.contains("expired on 2026-06-01") && warning.contains("admin trust import"),
        "{warning}"
    );
    assert_eq!(readyz(&svc).await["engine"]["trustListExpired"], true);
    let out = doctor(&svc, &[], false);
    assert!(stdout(&out).contains("WARN trust list"), "{}", stdout(&out));
}
