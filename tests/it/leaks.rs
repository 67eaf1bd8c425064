//! Nothing Sceau guards leaks where an operator or an intruder can read without a key: the logs
//! never carry a journey token, the database never holds a webhook secret in clear, and the data
//! directory and master key are the service's alone.

use crate::support;

use support::journey::{open, session, status, workflow};
use support::{Mode, Service};

/// The journey token of a `verificationUrl` (`…/v/<token>`).
fn token_of(url: &str) -> &str {
    url.rsplit("/v/").next().expect("a journey link")
}

#[tokio::test]
async fn request_logs_carry_the_route_template_never_the_journey_token() {
    let svc = Service::start(&[("RUST_LOG", "debug")]).await;
    let co = svc.company();
    let wf = workflow(&svc, &co, "identite", None);
    let session = session(&svc, &co, &wf, "log-1").await;
    let token = token_of(&session.url).to_owned();
    assert!(token.len() >= 16, "a real token: {token}");

    let (page, _, _) = open(&svc, &session.url, None).await;
    assert_eq!(page, 200);
    assert_eq!(status(&svc, &session.url).await, "started");

    let log = svc.log();
    assert!(log.contains("/v/{token}"), "the access log names the route template: {log}");
    assert!(!log.contains(&token), "the journey token appears in the logs");
}

/// The bytes SQLite keeps of the database: the file itself and its write-ahead log.
fn database_bytes(svc: &Service) -> Vec<u8> {
    ["sceau.db", "sceau.db-wal"]
        .iter()
        .flat_map(|name| std::fs::read(svc.data_dir().join(name)).unwrap_or_default())
        .collect()
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn webhook_secrets_are_sealed_in_the_database() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let rotated = svc.admin(&["company", "rotate-secret", &co.id]);
    let new_secret = rotated["webhookSecret"].as_str().expect("the new secret").to_owned();

    let bytes = database_bytes(&svc);
    assert!(bytes.len() > 4096, "the database was read");
    for secret in [&co.secret, &new_secret] {
        let key = secret.strip_prefix("whsec_").expect("a whsec_ secret");
        assert!(!holds(&bytes, key), "a webhook secret is stored in clear");
    }
}

/// Every directory and file under `dir`, with its permission bits.
fn modes(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the data dir").map_while(Result::ok) {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        found.push((path.clone(), meta.permissions().mode() & 0o777));
        if meta.is_dir() {
            found.extend(modes(&path));
        }
    }
    found
}

#[tokio::test]
async fn the_data_directory_and_every_file_in_it_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let (s, body) = svc.deposit(&co.key, &batch, "identite", &support::png(64, 1)).await;
    assert_eq!(s, 201, "{body}");

    let data = svc.data_dir();
    let dir_mode = std::fs::metadata(&data).expect("the data dir").permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o700, "the data directory");
    let found = modes(&data);
    for name in ["sceau.db", "sceau.db-wal", "sceau.db-shm"] {
        assert!(found.iter().any(|(p, _)| p.ends_with(name)), "{name} is in the data dir: {found:?}");
    }
    let key_mode = std::fs::metadata(svc.master_key_path())
        .expect("the master key")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(key_mode, 0o600, "the master key");
    if svc.mode == Mode::Embedded {
        // Distributed, the blobs are objects in the S3 server's bucket, and the master key a
        // secret outside the data dir.
        assert!(found.iter().any(|(p, _)| p.ends_with("master.key")), "{found:?}");
        assert!(
            found.iter().filter(|(p, _)| p.starts_with(data.join("blobs"))).count() >= 2,
            "an encrypted file was written: {found:?}"
        );
    }
    for (path, mode) in &found {
        let expected = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(*mode, expected, "{} is {mode:o}", path.display());
    }
}

/// Runs `sceau <role>` on a data dir whose master key is `mode`; its exit status and stderr, or
/// `None` when it was still running after 30 s (it accepted the key).
fn start_with_key_mode(role: &str, mode: u32) -> Option<(std::process::ExitStatus, String)> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let dir = support::TempDir::new("keymode");
    let data = dir.0.join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    let key = data.join("master.key");
    std::fs::write(&key, format!("k1:{}\n", support::b64(&[7u8; 32]))).expect("write the key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).expect("chmod");
    // The distributed roles are refused before they reach for a broker, so none need run.
    let brokers = [
        ("SCEAU_AMQP_URL", "amqp://guest:guest@127.0.0.1:1/%2f"),
        ("SCEAU_REDIS_URL", "redis://127.0.0.1:1/0"),
    ];
    let mut child = std::process::Command::new(support::BIN)
        .arg(role)
        .env("SCEAU_DATA_DIR", &data)
        .env("SCEAU_LISTEN", "127.0.0.1:0")
        .env("SCEAU_METRICS_LISTEN", "127.0.0.1:0")
        .envs(brokers.into_iter().filter(|_| role != "serve"))
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn sceau");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut stderr)
                .expect("read stderr");
            return Some((status, stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn every_role_refuses_a_master_key_readable_or_writable_by_others() {
    for (role, mode) in [("serve", 0o644), ("gateway", 0o640), ("worker", 0o604), ("notifier", 0o620)] {
        let (status, stderr) =
            start_with_key_mode(role, mode).unwrap_or_else(|| panic!("`sceau {role}` started with a master key of mode {mode:o}"));
        assert!(!status.success(), "{role}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{role}: one clear line: {stderr}");
        assert!(
            lines[0].contains("master.key") && lines[0].contains("group or others") && lines[0].contains("chmod 600"),
            "{role}: {stderr}"
        );
    }
}
