//! The client side of `scripts/bench --webhooks`: how many webhooks a second the running service
//! delivers to one local receiver, beside a plain HTTP client posting the same signed bodies to
//! the same receiver in the same run (the reference: what HTTP alone allows at that concurrency).
//!
//!   cargo bench --bench webhooks -- DATABASE COMPANY_ID WEBHOOK_SECRET COUNT
//!
//! The receiver checks every signature (Standard Webhooks, the company's secret) and counts each
//! event once. The reference posts COUNT bodies on as many kept-alive connections as the notifier
//! may hold to one destination (its per-destination cap). Then COUNT `verification.completed` events are written
//! in one transaction through the store's own `events::emit` (the event row and its outbox row,
//! as a recorded result writes them) into the service's database while it runs, and the notifier
//! does its whole work: the relay takes the outbox to the queue, the notifier signs, posts and
//! reports each attempt, the recorder records it. The rate is COUNT over the time from the first
//! delivery received to the last attempt recorded (`delivered` in `webhook_events`). Prints one
//! JSON line.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::Utc;
use common::store::events;
use domain::ids::{CompanyId, ConsultationId, EventId, WorkflowId};
use domain::vocabulary::{Decision, Verdict};
use domain::webhook::{ConsultationOutcome, EventBody, WebhookEvent};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest the notifier is given to deliver everything before the run is called failed.
const DEADLINE: Duration = Duration::from_secs(600);

/// What the receiver saw.
#[derive(Default)]
struct Seen {
    ids: HashSet<String>,
    /// Deliveries received, repeats included.
    deliveries: usize,
    refused: usize,
    first: Option<Instant>,
    last: Option<Instant>,
}

#[derive(Clone)]
struct Receiver {
    secret: Arc<String>,
    seen: Arc<Mutex<Seen>>,
}

impl Receiver {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().expect("the receiver's lock")
    }
}

/// Checks the delivery as a receiver must, and counts it.
async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let (id, timestamp, signature) = (header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"));
    let valid = timestamp
        .parse::<i64>()
        .ok()
        .is_some_and(|t| common::crypto::webhook_signature::verify(&receiver.secret, &id, t, &body, &signature).unwrap_or(false));
    let now = Instant::now();
    let mut seen = receiver.seen();
    if !valid {
        seen.refused += 1;
        return StatusCode::UNAUTHORIZED;
    }
    seen.deliveries += 1;
    seen.ids.insert(id);
    seen.first.get_or_insert(now);
    seen.last = Some(now);
    StatusCode::NO_CONTENT
}

/// A `verification.completed` event as a journey's result sends it.
fn event(i: usize, workflow: &WorkflowId) -> WebhookEvent {
    WebhookEvent::VerificationCompleted(ConsultationOutcome {
        consultation_id: ConsultationId::generate(Utc::now()),
        workflow_id: workflow.clone(),
        external_ref: Some(format!("CLI-{i:07}")),
        verdict: Verdict::Conforme,
        decision: Some(Decision::Conforme),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [database, company, secret, count] = args.as_slice() else {
        return Err("usage: webhooks DATABASE COMPANY_ID WEBHOOK_SECRET COUNT".into());
    };
    let company: CompanyId = company.parse()?;
    let count: usize = count.parse()?;
    let connections = notifier::NotifierConfig::default().per_destination;
    let receiver = Receiver {
        secret: Arc::new(secret.clone()),
        seen: Arc::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hooks/sceau", listener.local_addr()?);
    let app = axum::Router::new()
        .route("/hooks/sceau", axum::routing::post(receive))
        .with_state(receiver.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.expect("the receiver stopped") });
    let workflow = WorkflowId::generate(Utc::now());

    // The reference: the same signed bodies, posted by a bare client.
    let bodies: Vec<(String, String)> = (0..count)
        .map(|i| {
            let id = EventId::generate(Utc::now());
            let body = EventBody {
                event_id: id.clone(),
                occurred_at: Utc::now(),
                livemode: true,
                event: event(i, &workflow),
            };
            Ok((id.to_string(), serde_json::to_string(&body)?))
        })
        .collect::<Result<_, serde_json::Error>>()?;
    let reference = reference(&url, secret, Arc::new(bodies), connections).await?;
    {
        let seen = receiver.seen();
        if seen.ids.len() != count || seen.refused != 0 {
            return Err(format!(
                "the reference's deliveries: {} of {count}, {} refused",
                seen.ids.len(),
                seen.refused
            )
            .into());
        }
    }
    *receiver.seen() = Seen::default();

    // The service's turn: the events written as a recorded result writes them.
    let mut conn = rusqlite::Connection::open(database)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    let written = Instant::now();
    let tx = conn.transaction()?;
    for i in 0..count {
        events::emit(&tx, &company, &url, event(i, &workflow), None, Utc::now())?;
    }
    tx.commit()?;
    let committed = Instant::now();
    let recorded = loop {
        let delivered: i64 = conn.query_row(
            "SELECT count(*) FROM webhook_events WHERE company_id = ?1 AND status = 'delivered'",
            [company.as_str()],
            |r| r.get(0),
        )?;
        if delivered >= count as i64 {
            break Instant::now();
        }
        if written.elapsed() > DEADLINE {
            return Err(format!("{delivered} of {count} events delivered after {DEADLINE:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let seen = receiver.seen();
    let first = seen.first.ok_or("nothing received")?;
    let last = seen.last.ok_or("nothing received")?;
    let rate = count as f64 / recorded.duration_since(first).as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "events": count,
            "connections": connections,
            "write_seconds": committed.duration_since(written).as_secs_f64(),
            "first_delivery_after_commit_seconds": first.saturating_duration_since(committed).as_secs_f64(),
            "delivery_seconds": last.duration_since(first).as_secs_f64(),
            "recorded_after_last_delivery_seconds": recorded.duration_since(last).as_secs_f64(),
            "per_second": rate,
            "reference_per_second": reference,
            "ratio": rate / reference,
            "received": seen.ids.len(),
            "repeated": seen.deliveries - seen.ids.len(),
            "refused": seen.refused,
        })
    );
    Ok(())
}

/// Deliveries a second of a bare client: `connections` kept-alive connections, each posting its
/// next body, signed as the notifier signs it, as soon as the last is answered.
async fn reference(
    url: &str,
    secret: &str,
    bodies: Arc<Vec<(String, String)>>,
    connections: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().pool_max_idle_per_host(connections).build()?;
    let next = Arc::new(AtomicUsize::new(0));
    let secrets = Arc::new(vec![secret.to_owned()]);
    let start = Instant::now();
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..connections.max(1) {
        let (client, bodies, next, secrets, url) = (client.clone(), bodies.clone(), next.clone(), secrets.clone(), url.to_owned());
        senders.spawn(async move {
            while let Some((id, body)) = bodies.get(next.fetch_add(1, Ordering::Relaxed)) {
                let timestamp = Utc::now().timestamp();
                let signature = common::crypto::webhook_signature::signature_header(&secrets, id, timestamp, body.as_bytes())
                    .map_err(|e| e.to_string())?;
                let response = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("webhook-id", id.as_str())
                    .header("webhook-timestamp", timestamp.to_string())
                    .header("webhook-signature", signature)
                    .body(body.clone())
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if !response.status().is_success() {
                    return Err(format!("the receiver answered {}", response.status()));
                }
            }
            Ok::<_, String>(())
        });
    }
    while let Some(sent) = senders.join_next().await {
        sent??;
    }
    Ok(bodies.len() as f64 / start.elapsed().as_secs_f64())
}
