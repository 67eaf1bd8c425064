//! Black-box test support: boots the real `sceau` binary on port 0 with its own data dir, drives it
//! over real HTTP and through its real CLI, and receives webhooks on a real local server that
//! verifies Standard Webhooks signatures independently of the service's own signer.

pub mod browser;
pub mod children;
pub mod journey;
pub mod portal;
pub mod receiver;
pub mod s3;
pub mod smtp;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_sceau");

/// reqwest is built without a default crypto provider: install ring's once per test binary.
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(label: &str) -> Self {
        let mut random = [0u8; 8];
        getrandom(&mut random);
        let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let path = std::env::temp_dir().join(format!("sceau-test-{label}-{name}"));
        std::fs::create_dir_all(&path).expect("create temp dir");
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn getrandom(buf: &mut [u8]) {
    use ring::rand::SecureRandom;
    ring::rand::SystemRandom::new().fill(buf).expect("random");
}

/// Settings every test service gets: fast sweeps and retries, loopback webhooks allowed.
fn default_env(dir: &Path) -> Vec<(String, String)> {
    [
        ("SCEAU_DATA_DIR", dir.join("data").display().to_string()),
        ("SCEAU_LISTEN", "127.0.0.1:0".into()),
        ("SCEAU_METRICS_LISTEN", "127.0.0.1:0".into()),
        ("SCEAU_WEBHOOK_ALLOW_HOSTS", "127.0.0.1".into()),
        ("SCEAU_RETRY_SCHEDULE", "200ms,200ms,200ms".into()),
        ("SCEAU_SWEEP_INTERVAL_MS", "100".into()),
        ("SCEAU_WORKERS", "2".into()),
        ("RUST_LOG", "warn".into()),
        // The shared specimens carry a drawn silhouette where a card has its holder's photo: with
        // face match on, each identity sample would be `suspect` (`portrait_missing`). The tests
        // of face match turn it on (tests/it/face_match.rs, tests/it/browser.rs).
        ("SCEAU_FACE_MATCH", "false".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Which shape of the service the suite runs against (`SCEAU_TEST_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `sceau serve`: one process on SQLite.
    Embedded,
    /// `sceau gateway`, two `sceau worker`s and `sceau notifier` on RabbitMQ and Redis.
    Distributed,
}

pub fn mode() -> Mode {
    match std::env::var("SCEAU_TEST_MODE").as_deref() {
        Ok("distributed") => Mode::Distributed,
        _ => Mode::Embedded,
    }
}

/// What a process says on stdout that the harness waits for.
enum Announced {
    Listening(String),
    Metrics(String),
    /// A role without a listener has its backends and runs.
    Started,
}

/// A role spawned and not yet known to run.
struct Starting {
    lines: std::sync::mpsc::Receiver<Announced>,
    args: String,
}

/// The service under test: every process of it, on one data dir.
pub struct Service {
    /// Distributed mode: the S3 server holding the blobs (stopped before `dir` is removed).
    s3: Option<s3::S3Server>,
    pub dir: TempDir,
    pub base: String,
    /// Base URL of the gateway's metrics listener (`/metrics` is not on `base`).
    pub metrics_base: String,
    pub env: Vec<(String, String)>,
    pub mode: Mode,
    processes: Vec<(String, Child)>,
    vhost: Option<String>,
    pub http: reqwest::Client,
}

/// A RabbitMQ virtual host of its own, so concurrent services never share a queue.
///
/// One `rabbitmqctl eval` creates it and lets `guest` in: each `rabbitmqctl` boots an Erlang VM
/// (0.5 s of CPU), and the distributed suite starts a hundred services. The two plain commands
/// remain for a broker whose internal functions differ.
fn create_vhost() -> String {
    let mut random = [0u8; 6];
    getrandom(&mut random);
    let name: String = format!("sceau-test-{}", random.iter().map(|b| format!("{b:02x}")).collect::<String>());
    let both = format!(
        "ok = rabbit_vhost:add(<<\"{name}\">>, <<\"guest\">>), \
         rabbit_auth_backend_internal:set_permissions(<<\"guest\">>, <<\"{name}\">>, <<\".*\">>, <<\".*\">>, <<\".*\">>, <<\"guest\">>)."
    );
    if rabbitmqctl(&["eval", &both]).is_ok_and(|out| out.trim() == "ok") {
        return name;
    }
    for args in [
        vec!["add_vhost", &name],
        vec!["set_permissions", "-p", &name, "guest", ".*", ".*", ".*"],
    ] {
        if let Err(error) = rabbitmqctl(&args) {
            panic!("rabbitmqctl {args:?}: {error}");
        }
    }
    name
}

/// Runs `rabbitmqctl`; its standard output, or why it failed.
fn rabbitmqctl(args: &[&str]) -> Result<String, String> {
    let out = Command::new("rabbitmqctl")
        .args(args)
        .output()
        .expect("rabbitmqctl must be installed for the distributed suite");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

impl Service {
    /// Starts a service with the default test settings plus `extra`, in the suite's mode.
    pub async fn start(extra: &[(&str, &str)]) -> Service {
        Self::start_in(mode(), extra).await
    }

    /// Starts a service in a given mode (tests of what only one mode has).
    pub async fn start_in(mode: Mode, extra: &[(&str, &str)]) -> Service {
        let dir = TempDir::new("svc");
        let mut env = default_env(&dir.0);
        let mut vhost = None;
        let mut s3 = None;
        if mode == Mode::Distributed {
            let name = create_vhost();
            env.push(("SCEAU_AMQP_URL".into(), format!("amqp://guest:guest@127.0.0.1:5672/{name}")));
            env.push(("SCEAU_REDIS_URL".into(), "redis://127.0.0.1:6379/0".into()));
            env.push(("SCEAU_REDIS_PREFIX".into(), format!("{name}:")));
            vhost = Some(name);
            // As on separate hosts: blobs in a bucket, the master key handed to every role as a
            // secret, and each worker in a data dir of its own (see `spawn`).
            let server = s3::S3Server::start(&dir.0.join("s3"));
            env.extend(server.env());
            env.push(("SCEAU_MASTER_KEY_FILE".into(), dir.0.join("master.key").display().to_string()));
            s3 = Some(server);
        }
        for (k, v) in extra {
            env.retain(|(key, _)| key != k);
            env.push((k.to_string(), v.to_string()));
        }
        init_tls();
        let mut service = Service {
            s3,
            dir,
            base: String::new(),
            metrics_base: String::new(),
            env,
            mode,
            processes: Vec::new(),
            vhost,
            http: reqwest::Client::builder()
                .pool_idle_timeout(gateway::server::CLIENT_POOL_IDLE)
                .build()
                .expect("client"),
        };
        service.boot().await;
        service
    }

    /// Starts (or restarts) every process on the same data dir.
    pub async fn boot(&mut self) {
        match self.mode {
            Mode::Embedded => {
                self.base = self.spawn("serve", &["serve"]);
            }
            Mode::Distributed => {
                self.base = self.spawn("gateway", &["gateway"]);
                let workers = self
                    .env
                    .iter()
                    .find(|(k, _)| k == "SCEAU_WORKERS")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| "2".into());
                // Started side by side; a test begins once each has its backends (a bucket cut
                // off before a worker opened it would stop that worker, not test an outage).
                let starting = [
                    self.spawn_started("worker", &["worker", "--concurrency", &workers]),
                    self.spawn_started("worker", &["worker", "--concurrency", &workers]),
                    self.spawn_started("notifier", &["notifier"]),
                ];
                for started in starting {
                    self.wait_started(started);
                }
            }
        }
    }

    /// Spawns a role that listens and waits for its "listening on" and "metrics on" lines; keeps
    /// the metrics URL and returns the main one.
    pub fn spawn(&mut self, role: &str, args: &[&str]) -> String {
        let lines = self.launch(role, args);
        let (mut base, mut metrics) = (None, None);
        while base.is_none() || metrics.is_none() {
            match lines.recv_timeout(Duration::from_secs(30)) {
                Ok(Announced::Listening(addr)) => base = Some(addr),
                Ok(Announced::Metrics(addr)) => metrics = Some(addr),
                Ok(Announced::Started) => {}
                Err(_) => panic!("sceau {args:?} did not start; log: {}", self.log()),
            }
        }
        self.metrics_base = metrics.unwrap_or_default();
        base.unwrap_or_default()
    }

    /// Spawns a role without a listener (worker, notifier); [`Self::wait_started`] waits for it.
    fn spawn_started(&mut self, role: &str, args: &[&str]) -> Starting {
        Starting {
            lines: self.launch(role, args),
            args: args.join(" "),
        }
    }

    /// Waits for a role's "started" line: it has its backends and runs.
    fn wait_started(&self, starting: Starting) {
        loop {
            match starting.lines.recv_timeout(Duration::from_secs(30)) {
                Ok(Announced::Started) => return,
                Ok(_) => {}
                Err(_) => panic!("sceau {} did not start; log: {}", starting.args, self.log()),
            }
        }
    }

    /// Starts the process and reads what it announces on stdout.
    fn launch(&mut self, role: &str, args: &[&str]) -> std::sync::mpsc::Receiver<Announced> {
        let mut cmd = Command::new(BIN);
        cmd.args(args).envs(self.env.iter().map(|(k, v)| (k, v)));
        if role == "worker" && self.mode == Mode::Distributed {
            // Nothing of the gateway's data dir: documents come from the bucket.
            cmd.env("SCEAU_DATA_DIR", self.worker_data_dir());
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::from(self.log_file()));
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn sceau {args:?}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let announced = if let Some(addr) = line.strip_prefix("sceau listening on ") {
                    Announced::Listening(addr.to_owned())
                } else if let Some(addr) = line.strip_prefix("sceau metrics on ") {
                    Announced::Metrics(addr.to_owned())
                } else if line.starts_with("sceau ") && line.ends_with(" started") {
                    Announced::Started
                } else {
                    continue;
                };
                let _ = tx.send(announced);
            }
        });
        self.processes.push((role.to_owned(), child));
        rx
    }

    fn log_path(&self) -> PathBuf {
        self.dir.0.join("service.log")
    }

    fn log_file(&self) -> std::fs::File {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("log file")
    }

    /// The process ids of every running process of the service (all roles).
    pub fn pids(&self) -> Vec<(String, u32)> {
        self.processes.iter().map(|(role, child)| (role.clone(), child.id())).collect()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// kill -9 of every process: no chance to finish anything.
    pub fn kill_hard(&mut self) {
        for (_, mut child) in self.processes.drain(..) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Takes the first running process of `role` out of the service.
    fn take_one(&mut self, role: &str) -> Child {
        let i = self
            .processes
            .iter()
            .position(|(r, _)| r == role)
            .unwrap_or_else(|| panic!("no {role} running"));
        self.processes.remove(i).1
    }

    /// kill -9 of the first process of `role`.
    pub fn kill_one(&mut self, role: &str) {
        let mut child = self.take_one(role);
        let _ = child.kill();
        let _ = child.wait();
    }

    /// SIGTERM to the first process of `role`; its exit status.
    pub fn stop_one(&mut self, role: &str) -> std::process::ExitStatus {
        let mut child = self.take_one(role);
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        child.wait().expect("wait")
    }

    /// Starts one more worker process (distributed mode).
    pub fn add_worker(&mut self, concurrency: &str) {
        let started = self.spawn_started("worker", &["worker", "--concurrency", concurrency]);
        self.wait_started(started);
    }

    /// The value of one of the service's settings.
    pub fn env_value(&self, key: &str) -> String {
        self.env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).unwrap_or_default()
    }

    /// The RabbitMQ virtual host of this service (distributed mode).
    pub fn vhost(&self) -> &str {
        self.vhost.as_deref().expect("a distributed service")
    }

    /// Runs `sceau ops <args> --json` and returns its JSON.
    pub fn ops(&self, args: &[&str]) -> Value {
        self.cli_json("ops", args)
    }

    /// SIGTERM to every process; their exit statuses.
    pub fn stop(&mut self) -> Vec<std::process::ExitStatus> {
        let processes: Vec<_> = self.processes.drain(..).collect();
        for (_, child) in &processes {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        }
        processes.into_iter().map(|(_, mut child)| child.wait().expect("wait")).collect()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.0.join("data")
    }

    /// The data dir of the distributed workers, apart from the gateway's.
    pub fn worker_data_dir(&self) -> PathBuf {
        self.dir.0.join("worker-data")
    }

    /// Where the service's sealed blobs are on disk: the data dir's `blobs/`, or in distributed
    /// mode the directory of the S3 server's bucket (one file per object, `<shard>/<name>`), unless
    /// the test chose a blob URL of its own.
    pub fn blob_dir(&self) -> PathBuf {
        let chosen = self.env_value("SCEAU_BLOB_URL");
        match &self.s3 {
            Some(server) if chosen.starts_with("s3://") => server.bucket_dir(),
            _ => match chosen.strip_prefix("file://") {
                Some(path) => PathBuf::from(path),
                None => self.data_dir().join("blobs"),
            },
        }
    }

    /// The S3 server of a distributed service.
    pub fn s3(&mut self) -> &mut s3::S3Server {
        self.s3.as_mut().expect("a distributed service keeps its blobs in S3")
    }

    /// The sealed file of one blob.
    pub fn blob_path(&self, blob: &str) -> PathBuf {
        self.blob_dir().join(&blob[..2]).join(blob)
    }

    /// The master key file the service uses.
    pub fn master_key_path(&self) -> PathBuf {
        match self.env_value("SCEAU_MASTER_KEY_FILE") {
            file if !file.is_empty() => PathBuf::from(file),
            _ => self.data_dir().join("master.key"),
        }
    }

    /// Runs `sceau admin <args> --json` and returns its JSON, panicking on failure.
    pub fn admin(&self, args: &[&str]) -> Value {
        self.cli_json("admin", args)
    }

    /// Runs `sceau <group> <args> --json` with the service's settings and parses its JSON.
    fn cli_json(&self, group: &str, args: &[&str]) -> Value {
        let out = Command::new(BIN)
            .arg(group)
            .args(args)
            .arg("--json")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run sceau");
        assert!(
            out.status.success(),
            "sceau {group} {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "sceau {group} {args:?} printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    pub fn admin_raw(&self, args: &[&str], json: bool) -> std::process::Output {
        let mut cmd = Command::new(BIN);
        cmd.arg("admin").args(args).envs(self.env.iter().map(|(k, v)| (k, v)));
        if json {
            cmd.arg("--json");
        }
        cmd.output().expect("run sceau admin")
    }

    /// A company with the group licence and a full API key.
    pub fn company(&self) -> Company {
        let c = self.admin(&["company", "create", "--name", "Test SA", "--licence", "group"]);
        let id = c["id"].as_str().expect("id").to_owned();
        let key = self.admin(&["key", "create", "--company", &id]);
        Company {
            id,
            secret: c["webhookSecret"].as_str().expect("secret").to_owned(),
            key: key["key"].as_str().expect("key").to_owned(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn get(&self, key: &str, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).bearer_auth(key).send().await.expect("GET");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, key: &str, path: &str, body: Value) -> (u16, Value) {
        let r = self
            .http
            .post(self.url(path))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("POST");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// Opens a batch and returns its id.
    pub async fn open_batch(&self, key: &str, webhook: Option<&str>) -> String {
        let (status, body) = self
            .post(key, "/api/v1/batches", json!({ "externalRef": "lot-1", "webhookUrl": webhook }))
            .await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().expect("batch id").to_owned()
    }

    pub async fn deposit(&self, key: &str, batch: &str, category: &str, file: &[u8]) -> (u16, Value) {
        self.post(
            key,
            &format!("/api/v1/batches/{batch}/documents"),
            json!({ "documentCategory": category, "document": b64(file) }),
        )
        .await
    }

    /// Every consultation id of the company, walking the list with its cursor.
    pub async fn consultation_ids(&self, key: &str) -> Vec<String> {
        let mut ids = Vec::new();
        let mut path = "/api/v1/consultations?limit=100".to_owned();
        loop {
            let (_, page) = self.get(key, &path).await;
            ids.extend(
                page["data"]
                    .as_array()
                    .expect("data")
                    .iter()
                    .map(|c| c["id"].as_str().expect("id").to_owned()),
            );
            match page["nextCursor"].as_str() {
                Some(c) => path = format!("/api/v1/consultations?limit=100&cursor={c}"),
                None => return ids,
            }
        }
    }

    /// Polls the batch until `done` says so, or panics after `timeout`.
    pub async fn wait_batch(&self, key: &str, batch: &str, timeout: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let (_, b) = self.get(key, &format!("/api/v1/batches/{batch}")).await;
            if done(&b) {
                return b;
            }
            assert!(
                start.elapsed() < timeout,
                "batch never reached the expected state: {b}\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill_hard();
        if let Some(vhost) = &self.vhost {
            // Not waited for: the test's result does not depend on it, and it takes a second.
            let _ = Command::new("rabbitmqctl")
                .args(["delete_vhost", vhost])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
        }
    }
}

pub struct Company {
    pub id: String,
    pub key: String,
    pub secret: String,
}

pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A real PNG of about `side`×`side` pixels of noise (incompressible, so about 3·side² bytes).
pub fn png(side: u32, seed: u8) -> Vec<u8> {
    let mut img = image::RgbImage::new(side, side);
    let mut state = u32::from(seed).wrapping_mul(2654435761).wrapping_add(1);
    for p in img.pixels_mut() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        *p = image::Rgb([state as u8, (state >> 8) as u8, (state >> 16) as u8]);
    }
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).expect("encode png");
    out.into_inner()
}

/// A small valid JPEG.
pub fn jpeg(side: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(side, side, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 128]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Jpeg).expect("encode jpeg");
    out.into_inner()
}

/// A valid PDF with `pages` empty pages.
pub fn pdf(pages: usize) -> Vec<u8> {
    common::test_fixtures::blank_pdf(pages)
}

/// Polls `check` until it holds, or panics with `what` after `timeout`.
pub async fn eventually<F: std::future::Future<Output = bool>>(timeout: Duration, what: &str, mut check: impl FnMut() -> F) {
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < timeout, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
