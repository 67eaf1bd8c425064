//! A real webhook receiver on 127.0.0.1:0. It checks every delivery's Standard Webhooks signature
//! with its own HMAC (ring), records what it got, and answers with the statuses it is told to.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use base64::Engine as _;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Received {
    pub id: String,
    pub timestamp: i64,
    pub signature_valid: bool,
    /// The `webhook-signature` header as sent (two `v1,` entries during a secret rotation).
    pub signature: String,
    pub body: Value,
    /// The body as sent, for checking the signature with another secret.
    pub raw: String,
}

impl Received {
    /// Whether the delivery's signature verifies with `secret`, as a receiver built to the
    /// Standard Webhooks specification alone checks it.
    pub fn verifies_with(&self, secret: &str) -> bool {
        verify(secret, &self.id, &self.timestamp.to_string(), self.raw.as_bytes(), &self.signature)
    }
}

#[derive(Default)]
struct Inner {
    secret: String,
    received: Vec<Received>,
    /// Statuses to answer, in order; 200 once exhausted.
    script: VecDeque<u16>,
    /// A holding receiver: requests open now, the most ever open at once, and requests ended
    /// (answered, or dropped by the sender).
    open: usize,
    max_open: usize,
    ended: usize,
}

#[derive(Clone)]
pub struct Receiver {
    inner: Arc<Mutex<Inner>>,
    pub url: String,
    /// A holding receiver answers once this turns true.
    gate: Gate,
}

/// Opens a holding receiver.
type Gate = Arc<tokio::sync::watch::Sender<bool>>;

/// How a holding receiver's requests stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub open: usize,
    pub max_open: usize,
    pub ended: usize,
}

/// Counts a held request as open until it is answered or dropped.
struct Open(Arc<Mutex<Inner>>);

impl Open {
    fn enter(inner: Arc<Mutex<Inner>>) -> Open {
        {
            let mut i = inner.lock().expect("receiver lock");
            i.open += 1;
            i.max_open = i.max_open.max(i.open);
        }
        Open(inner)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut i = self.0.lock().expect("receiver lock");
        i.open -= 1;
        i.ended += 1;
    }
}

/// Records the delivery, then holds the request open until the gate opens.
async fn receive_held(State((inner, gate)): State<(Arc<Mutex<Inner>>, Gate)>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let _open = Open::enter(inner.clone());
    let status = receive(State(inner), headers, body).await;
    let mut opened = gate.subscribe();
    let _ = opened.wait_for(|open| *open).await;
    status
}

/// The key is the base64 after the whole prefix, `whsec_test_` or `whsec_` (API.md, Webhooks).
fn verify(secret: &str, id: &str, ts: &str, body: &[u8], header: &str) -> bool {
    let Some(key) = secret
        .strip_prefix("whsec_test_")
        .or_else(|| secret.strip_prefix("whsec_"))
        .and_then(|k| base64::engine::general_purpose::STANDARD.decode(k).ok())
    else {
        return false;
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key);
    let mut signed = format!("{id}.{ts}.").into_bytes();
    signed.extend_from_slice(body);
    let expected = base64::engine::general_purpose::STANDARD.encode(ring::hmac::sign(&key, &signed).as_ref());
    header.split(' ').any(|s| s.strip_prefix("v1,") == Some(expected.as_str()))
}

async fn receive(State(inner): State<Arc<Mutex<Inner>>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let h = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let (id, ts, sig) = (h("webhook-id"), h("webhook-timestamp"), h("webhook-signature"));
    let mut inner = inner.lock().expect("receiver lock");
    let signature_valid = verify(&inner.secret, &id, &ts, &body, &sig);
    let status = inner.script.pop_front().unwrap_or(200);
    inner.received.push(Received {
        id,
        timestamp: ts.parse().unwrap_or(0),
        signature_valid,
        signature: sig,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: String::from_utf8_lossy(&body).into_owned(),
    });
    StatusCode::from_u16(status).unwrap_or(StatusCode::OK)
}

impl Receiver {
    /// Starts a receiver that verifies with `secret` and answers `script` first.
    pub async fn start(secret: &str, script: &[u16]) -> Receiver {
        let inner = Arc::new(Mutex::new(Inner {
            secret: secret.to_owned(),
            script: script.iter().copied().collect(),
            ..Default::default()
        }));
        let app = axum::Router::new().route("/hook", post(receive)).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver {
            inner,
            url,
            gate: Arc::new(tokio::sync::watch::channel(true).0),
        }
    }

    /// Starts a receiver that records each delivery on arrival and answers none until
    /// [`Receiver::release`]: a receiver that hangs.
    pub async fn start_holding(secret: &str) -> Receiver {
        let inner = Arc::new(Mutex::new(Inner {
            secret: secret.to_owned(),
            ..Default::default()
        }));
        let gate = Arc::new(tokio::sync::watch::channel(false).0);
        let app = axum::Router::new()
            .route("/hook", post(receive_held))
            .with_state((inner.clone(), gate.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { inner, url, gate }
    }

    /// Lets a holding receiver answer everything, now and from now on.
    pub fn release(&self) {
        self.gate.send_replace(true);
    }

    pub fn held(&self) -> Held {
        let i = self.inner.lock().expect("receiver lock");
        Held {
            open: i.open,
            max_open: i.max_open,
            ended: i.ended,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.lock().expect("receiver lock").received.clone()
    }

    /// Waits until `n` deliveries arrived.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let start = Instant::now();
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(start.elapsed() < timeout, "expected {n} deliveries, got {}: {got:?}", got.len());
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}
