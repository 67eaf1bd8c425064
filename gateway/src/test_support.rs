//! `spawn_app`: the gateway's router on port 0, in this process, on a fresh store, blob store and
//! master key, with a company and its API key; and a plain HTTP/1.1 client for it. Fast tests of
//! the gateway's core go through real HTTP without starting the binary (zero-to-production's
//! pattern). The edge's PDF sandbox is not available here (it is the `sceau` binary's own
//! subcommand): a test that needs it belongs to `tests/`.

use crate::client_addr::TrustedProxies;
use crate::rate_limit::{EdgeLimits, RateLimiter};
use crate::state::AppState;
use common::blobs::BlobStore;
use common::crypto::envelope::MasterKeys;
use common::sandbox::{DeadlineClock, Sandbox, SandboxCommand};
use common::store::test_support::TempStore;
use common::store::{api_keys, companies, RepoError};
use domain::ids::CompanyId;
use domain::vocabulary::Licence;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// A running gateway and what a test needs to call it and look behind it.
pub struct TestApp {
    pub addr: SocketAddr,
    pub store: TempStore,
    pub blobs: BlobStore,
    pub company: CompanyId,
    /// A full-access API key of `company`.
    pub key: String,
    shutdown: CancellationToken,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Starts the gateway on `127.0.0.1:0` with a company of the group licence and its key.
pub async fn spawn_app() -> TestApp {
    let store = TempStore::new("app");
    let keys = Arc::new(MasterKeys::load_or_create(&store.dir().join("master.key")).expect("master key"));
    let blobs = BlobStore::new(store.dir().join("blobs"), keys.clone()).expect("blob store");
    let now = chrono::Utc::now();
    let sealing = keys.clone();
    let (company, key) = store
        .write(move |tx| {
            let company = companies::create(tx, "Acme", Licence::Group, &sealing, now)?.company.id;
            let spec = api_keys::KeySpec {
                read_only: false,
                mode: domain::vocabulary::Mode::Live,
                scopes: domain::key_scopes::KeyScopes::all(),
            };
            let key = api_keys::create(tx, &company, spec, None, now)?;
            Ok::<_, RepoError>((company, key.secret))
        })
        .await
        .expect("a company and its key");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("port 0");
    let addr = listener.local_addr().expect("bound address");
    let state = AppState {
        store: store.handle(),
        blobs: blobs.clone(),
        keys,
        public_base: format!("http://{addr}"),
        volume_limit: common::config::DEFAULT_VOLUME_LIMIT,
        batch_window: domain::batch::WINDOW,
        request_timeout: common::config::DEFAULT_REQUEST_TIMEOUT,
        webhook_allow_hosts: Arc::new(Vec::new()),
        realtime_limiter: Arc::new(RateLimiter::per_minute(1000)),
        edge_limits: Arc::new(EdgeLimits::new(crate::rate_limit::KEY_FAILURES_PER_MINUTE)),
        trusted_proxies: Arc::new(TrustedProxies::new(Vec::new())),
        outbox_wake: Arc::new(tokio::sync::Notify::new()),
        passwords: Arc::new(crate::password_pool::PasswordPool::for_this_machine().expect("password hashing threads")),
        sandbox: Sandbox::new(
            SandboxCommand {
                program: "/nonexistent/sceau".into(),
                args: Vec::new(),
                clock: DeadlineClock::Wall,
                settings: Vec::new(),
            },
            1,
        ),
        edge_turns: Arc::new(crate::edge_turns::EdgeTurns::default()),
        face_match: common::config::Config::default().face_match,
        mailer: None,
        // No engine runs beside the gateway's unit tests: nothing found, the list unknown.
        capabilities: Arc::new(common::capabilities::Capabilities {
            programs: Vec::new(),
            trust_list: common::capabilities::TrustListSummary {
                origin: common::capabilities::TrustListOrigin::Shipped,
                sequence: 0,
                issued: chrono::DateTime::UNIX_EPOCH,
                next_update: None,
            },
            trust_list_expired: false,
        }),
    };
    let shutdown = CancellationToken::new();
    tokio::spawn(crate::serve_http(listener, state, shutdown.clone()));
    TestApp {
        addr,
        store,
        blobs,
        company,
        key,
        shutdown,
    }
}

impl TestApp {
    /// `method path` with the app's key and `body` (JSON when given); the status and the JSON
    /// answer (`Null` when it is not JSON).
    pub async fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        self.raw(method, path, &[("authorization", &format!("Bearer {}", self.key))], body.as_bytes())
            .await
    }

    /// One HTTP/1.1 request with exactly these headers (plus host, length and close).
    pub async fn raw(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, Value) {
        let mut stream = tokio::net::TcpStream::connect(self.addr).await.expect("connect");
        let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n", self.addr);
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() {
            head.push_str(&format!("content-type: application/json\r\ncontent-length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await.expect("send head");
        stream.write_all(body).await.expect("send body");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("read answer");
        let text = String::from_utf8_lossy(&answer);
        let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status line");
        let json = text
            .split_once("\r\n\r\n")
            .and_then(|(_, body)| serde_json::from_str(body).ok())
            .unwrap_or(Value::Null);
        (status, json)
    }
}
