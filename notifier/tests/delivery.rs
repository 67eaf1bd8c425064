//! Black-box tests of the notifier: a real HTTP receiver on 127.0.0.1 that checks signatures on
//! its own (HMAC recomputed here, not by the crate's signer), and an in-memory queue standing in
//! for the real backends, which are tested in `common`.

use async_trait::async_trait;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::Utc;
use common::messages::{DeliveryAttempt, DeliveryOutcome, EventDelivery, RecorderMessage, RecorderV1};
use common::queue::{Delivery, Queue, QueueError, Topic};
use domain::ids::{CompanyId, EventId};
use notifier::{NotifierConfig, NotifierError, SecretError, SecretSource};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------------------------
// In-memory queue: a test double of the trait, with delays and in-flight tracking.

struct Entry {
    topic: Topic,
    payload: Vec<u8>,
    visible_at: Instant,
    attempts: u32,
    tag: u64,
}

#[derive(Default)]
struct QueueState {
    ready: VecDeque<Entry>,
    in_flight: HashMap<u64, Entry>,
    next_tag: u64,
}

#[derive(Default)]
struct MemoryQueue {
    state: Mutex<QueueState>,
}

impl MemoryQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().expect("queue lock poisoned")
    }

    /// Messages of `topic` not yet acked, waiting or in flight.
    fn unsettled(&self, topic: Topic) -> usize {
        let state = self.lock();
        state.ready.iter().filter(|e| e.topic == topic).count() + state.in_flight.values().filter(|e| e.topic == topic).count()
    }

    fn try_take(&self, topics: &[Topic]) -> Option<Delivery> {
        let mut state = self.lock();
        let now = Instant::now();
        let position = topics
            .iter()
            .find_map(|topic| state.ready.iter().position(|e| e.topic == *topic && e.visible_at <= now))?;
        let mut entry = state.ready.remove(position)?;
        entry.attempts += 1;
        let delivery = Delivery {
            topic: entry.topic,
            payload: entry.payload.clone(),
            attempts: entry.attempts,
            tag: entry.tag,
        };
        state.in_flight.insert(entry.tag, entry);
        Some(delivery)
    }
}

#[async_trait]
impl Queue for MemoryQueue {
    async fn publish(&self, topic: Topic, payload: Vec<u8>, delay: Duration) -> Result<(), QueueError> {
        let mut state = self.lock();
        state.next_tag += 1;
        let tag = state.next_tag;
        state.ready.push_back(Entry {
            topic,
            payload,
            visible_at: Instant::now() + delay,
            attempts: 0,
            tag,
        });
        Ok(())
    }

    async fn receive(&self, topics: &[Topic]) -> Result<Delivery, QueueError> {
        loop {
            if let Some(delivery) = self.try_take(topics) {
                return Ok(delivery);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    async fn ack(&self, delivery: &Delivery) -> Result<(), QueueError> {
        self.lock().in_flight.remove(&delivery.tag);
        Ok(())
    }

    async fn nack(&self, delivery: &Delivery, delay: Duration) -> Result<(), QueueError> {
        let mut state = self.lock();
        if let Some(mut entry) = state.in_flight.remove(&delivery.tag) {
            entry.visible_at = Instant::now() + delay;
            state.ready.push_back(entry);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Secrets: one company with a rotation in progress (current and previous secret).

fn secret_from(byte: u8) -> String {
    format!("whsec_{}", STANDARD.encode([byte; 32]))
}

struct FixedSecrets {
    company: CompanyId,
    secrets: Vec<String>,
}

#[async_trait]
impl SecretSource for FixedSecrets {
    async fn signing_secrets(&self, company: &CompanyId) -> Result<Vec<String>, SecretError> {
        if *company == self.company {
            Ok(self.secrets.clone())
        } else {
            Err(SecretError::Missing)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The receiver: records every request and verifies signatures independently of the crate.

#[derive(Debug, Clone)]
struct Hit {
    path: String,
    at: Instant,
    webhook_id: Option<String>,
    timestamp: Option<String>,
    content_type: Option<String>,
    body: String,
    /// One entry per known secret: whether the signature header holds a valid signature by it.
    valid_by_secret: Vec<bool>,
    signature_count: usize,
}

struct Receiver {
    secrets: Vec<String>,
    /// Statuses `/hook` answers in turn; `fallback` once exhausted.
    script: Mutex<VecDeque<u16>>,
    fallback: u16,
    hits: Mutex<Vec<Hit>>,
    /// `/hang` holds every request open until this turns true.
    gate: tokio::sync::watch::Sender<bool>,
}

impl Receiver {
    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().expect("hits lock").clone()
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// HMAC-SHA256 over "<id>.<ts>.<body>" with the secret's decoded key, written here with ring
/// directly so the test does not trust the signer it checks.
fn expected_signature(secret: &str, id: &str, ts: &str, body: &[u8]) -> String {
    let key_b64 = secret.strip_prefix("whsec_").expect("test secret prefix");
    let key_bytes = STANDARD.decode(key_b64).expect("test secret base64");
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key_bytes);
    let mut signed = Vec::new();
    signed.extend_from_slice(id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(ts.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    STANDARD.encode(ring::hmac::sign(&key, &signed).as_ref())
}

async fn receive_hook(State(receiver): State<Arc<Receiver>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let webhook_id = header(&headers, "webhook-id");
    let timestamp = header(&headers, "webhook-timestamp");
    let signatures: Vec<String> = header(&headers, "webhook-signature")
        .map(|h| h.split(' ').map(str::to_owned).collect())
        .unwrap_or_default();
    let valid_by_secret = receiver
        .secrets
        .iter()
        .map(|secret| match (&webhook_id, &timestamp) {
            (Some(id), Some(ts)) => {
                let expected = format!("v1,{}", expected_signature(secret, id, ts, &body));
                signatures.contains(&expected)
            }
            _ => false,
        })
        .collect();
    let path = uri.path().to_owned();
    receiver.hits.lock().expect("hits lock").push(Hit {
        path: path.clone(),
        at: Instant::now(),
        webhook_id,
        timestamp,
        content_type: header(&headers, "content-type"),
        body: String::from_utf8_lossy(&body).into_owned(),
        valid_by_secret,
        signature_count: signatures.len(),
    });
    match path.as_str() {
        "/redirect" => (StatusCode::FOUND, [("location", "/landing")]).into_response(),
        "/hang" => {
            let mut open = receiver.gate.subscribe();
            let _ = open.wait_for(|open| *open).await;
            StatusCode::OK.into_response()
        }
        "/slow" => {
            tokio::time::sleep(Duration::from_millis(700)).await;
            StatusCode::OK.into_response()
        }
        "/hook" => {
            let code = receiver
                .script
                .lock()
                .expect("script lock")
                .pop_front()
                .unwrap_or(receiver.fallback);
            StatusCode::from_u16(code).expect("test status").into_response()
        }
        _ => StatusCode::OK.into_response(),
    }
}

async fn start_receiver(secrets: Vec<String>, script: &[u16], fallback: u16) -> (Arc<Receiver>, SocketAddr) {
    let receiver = Arc::new(Receiver {
        secrets,
        script: Mutex::new(script.iter().copied().collect()),
        fallback,
        hits: Mutex::new(Vec::new()),
        gate: tokio::sync::watch::channel(false).0,
    });
    let app = axum::Router::new().fallback(receive_hook).with_state(Arc::clone(&receiver));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
    let addr = listener.local_addr().expect("receiver address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (receiver, addr)
}

// ---------------------------------------------------------------------------------------------
// The notifier under test.

struct Harness {
    queue: Arc<MemoryQueue>,
    company: CompanyId,
    secrets: Vec<String>,
    shutdown: CancellationToken,
    task: JoinHandle<Result<(), NotifierError>>,
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn start_notifier(retry_schedule: Vec<Duration>, allow_hosts: &[&str], timeout: Duration) -> Harness {
    let queue = Arc::new(MemoryQueue::default());
    let company = CompanyId::generate(Utc::now());
    let secrets = vec![secret_from(7), secret_from(9)];
    let source = Arc::new(FixedSecrets {
        company: company.clone(),
        secrets: secrets.clone(),
    });
    let config = NotifierConfig {
        retry_schedule,
        allow_hosts: allow_hosts.iter().map(|h| (*h).to_owned()).collect(),
        timeout,
        concurrency: 2,
        ..NotifierConfig::default()
    };
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(notifier::run(
        Arc::clone(&queue) as Arc<dyn Queue>,
        source,
        config,
        shutdown.clone(),
    ));
    Harness {
        queue,
        company,
        secrets,
        shutdown,
        task,
    }
}

impl Harness {
    async fn publish_event(&self, url: String) -> EventDelivery {
        self.publish_event_for(self.company.clone(), url).await
    }

    async fn publish_event_for(&self, company_id: CompanyId, url: String) -> EventDelivery {
        let event_id = EventId::generate(Utc::now());
        let body = format!(r#"{{"eventId":"{event_id}","type":"verification.completed","data":{{"note":"é ✓"}}}}"#);
        let event = EventDelivery {
            event_id,
            company_id,
            url,
            body,
            attempt: 1,
            deferrals: 0,
            request_id: None,
        };
        let payload = serde_json::to_vec(&event).expect("encode event");
        self.queue
            .publish(Topic::Events, payload, Duration::ZERO)
            .await
            .expect("publish event");
        event
    }

    /// The attempts reported to the recorder for `event`, up to its final outcome.
    async fn attempts_until_final(&self, event: &EventDelivery) -> Vec<DeliveryAttempt> {
        let mut attempts = Vec::new();
        let deadline = Duration::from_secs(15);
        loop {
            let delivery = tokio::time::timeout(deadline, self.queue.receive(&[Topic::Results]))
                .await
                .expect("no final outcome in time")
                .expect("receive result");
            self.queue.ack(&delivery).await.expect("ack result");
            for attempt in reported(&delivery) {
                assert_eq!(attempt.event_id, event.event_id);
                let done = attempt.outcome != DeliveryOutcome::Retrying;
                attempts.push(attempt);
                if done {
                    return attempts;
                }
            }
        }
    }

    /// Stops the notifier and checks it stops cleanly, leaving no event unsettled.
    async fn stop(self) {
        self.shutdown.cancel();
        let ended = tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("notifier did not stop");
        ended.expect("notifier task").expect("notifier run");
        assert_eq!(self.queue.unsettled(Topic::Events), 0, "events left on the queue");
    }
}

/// The attempts a report to the recorder carries, in order.
fn reported(delivery: &Delivery) -> Vec<DeliveryAttempt> {
    let message: RecorderMessage = serde_json::from_slice(&delivery.payload).expect("decode result");
    match message {
        RecorderMessage::V1(RecorderV1::DeliveryAttempts { attempts }) => attempts,
        other => panic!("unexpected recorder message {other:?}"),
    }
}

fn outcomes(attempts: &[DeliveryAttempt]) -> Vec<DeliveryOutcome> {
    attempts.iter().map(|a| a.outcome).collect()
}

fn assert_signed_delivery(hit: &Hit, event: &EventDelivery) {
    assert_eq!(hit.webhook_id.as_deref(), Some(event.event_id.as_str()));
    assert_eq!(hit.content_type.as_deref(), Some("application/json"));
    assert_eq!(hit.body, event.body, "body must be sent byte for byte");
    assert_eq!(hit.signature_count, 2, "one signature per secret during a rotation");
    assert_eq!(hit.valid_by_secret, vec![true, true], "both signatures must verify");
    let ts: i64 = hit
        .timestamp
        .as_deref()
        .and_then(|t| t.parse().ok())
        .expect("numeric webhook-timestamp");
    assert!((Utc::now().timestamp() - ts).abs() < 60, "timestamp is Unix seconds of now");
}

// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn delivers_a_signed_event() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[], 200).await;
    let notifier = start_notifier(vec![ms(50)], &["127.0.0.1"], Duration::from_secs(5));
    assert_eq!(receiver.secrets, notifier.secrets);

    let event = notifier.publish_event(format!("http://{addr}/hook")).await;
    let attempts = notifier.attempts_until_final(&event).await;

    assert_eq!(outcomes(&attempts), vec![DeliveryOutcome::Delivered]);
    assert_eq!(attempts[0].attempt, 1);
    assert_eq!(attempts[0].status_code, Some(200));
    assert_eq!(attempts[0].error, None);
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1);
    assert_signed_delivery(&hits[0], &event);
    notifier.stop().await;
}

#[tokio::test]
async fn retries_on_the_schedule_with_the_same_webhook_id() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[500, 500, 200], 200).await;
    let notifier = start_notifier(vec![ms(50), ms(50), ms(50)], &["127.0.0.1"], Duration::from_secs(5));

    let event = notifier.publish_event(format!("http://{addr}/hook")).await;
    let attempts = notifier.attempts_until_final(&event).await;

    assert_eq!(
        outcomes(&attempts),
        vec![DeliveryOutcome::Retrying, DeliveryOutcome::Retrying, DeliveryOutcome::Delivered]
    );
    assert_eq!(attempts.iter().map(|a| a.attempt).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(
        attempts.iter().map(|a| a.status_code).collect::<Vec<_>>(),
        vec![Some(500), Some(500), Some(200)]
    );
    assert_eq!(attempts[0].error.as_deref(), Some("the receiver answered 500"));
    let hits = receiver.hits();
    assert_eq!(hits.len(), 3);
    for hit in &hits {
        assert_signed_delivery(hit, &event);
    }
    for pair in hits.windows(2) {
        assert!(pair[1].at - pair[0].at >= ms(50), "retry came before its delay");
    }
    notifier.stop().await;
}

#[tokio::test]
async fn gone_stops_at_once() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[410], 200).await;
    let notifier = start_notifier(vec![ms(20), ms(20)], &["127.0.0.1"], Duration::from_secs(5));

    let event = notifier.publish_event(format!("http://{addr}/hook")).await;
    let attempts = notifier.attempts_until_final(&event).await;

    assert_eq!(outcomes(&attempts), vec![DeliveryOutcome::Gone]);
    assert_eq!(attempts[0].status_code, Some(410));
    tokio::time::sleep(ms(200)).await;
    assert_eq!(receiver.hits().len(), 1, "no attempt after 410 Gone");
    notifier.stop().await;
}

#[tokio::test]
async fn dead_after_the_last_attempt() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[], 503).await;
    let schedule = vec![ms(20), ms(20), ms(20)];
    let notifier = start_notifier(schedule.clone(), &["127.0.0.1"], Duration::from_secs(5));

    let event = notifier.publish_event(format!("http://{addr}/hook")).await;
    let attempts = notifier.attempts_until_final(&event).await;

    assert_eq!(attempts.len(), schedule.len() + 1);
    assert_eq!(
        outcomes(&attempts),
        vec![
            DeliveryOutcome::Retrying,
            DeliveryOutcome::Retrying,
            DeliveryOutcome::Retrying,
            DeliveryOutcome::Dead
        ]
    );
    assert!(attempts.iter().all(|a| a.status_code == Some(503)));
    tokio::time::sleep(ms(200)).await;
    assert_eq!(receiver.hits().len(), schedule.len() + 1);
    notifier.stop().await;
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[], 200).await;
    let notifier = start_notifier(vec![ms(20)], &["127.0.0.1"], Duration::from_secs(5));

    let event = notifier.publish_event(format!("http://{addr}/redirect")).await;
    let attempts = notifier.attempts_until_final(&event).await;

    assert_eq!(outcomes(&attempts), vec![DeliveryOutcome::Retrying, DeliveryOutcome::Dead]);
    assert!(attempts.iter().all(|a| a.status_code == Some(302)));
    let error = attempts[0].error.as_deref().unwrap_or_default();
    assert!(error.contains("redirect"), "{error}");
    let hits = receiver.hits();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.path == "/redirect"), "the Location was followed: {hits:?}");
    notifier.stop().await;
}

#[tokio::test]
async fn internal_destinations_are_refused_without_a_request() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[], 200).await;
    // Nothing allow-listed: the receiver on loopback is off limits.
    let notifier = start_notifier(vec![ms(20), ms(20)], &[], Duration::from_secs(5));
    let port = addr.port();

    let cases = [
        (format!("https://127.0.0.1:{port}/hook"), "loopback"),
        (format!("https://localhost:{port}/hook"), "loopback"),
        (format!("https://[::ffff:127.0.0.1]:{port}/hook"), "loopback"),
        (format!("http://127.0.0.1:{port}/hook"), "https"),
        (format!("https://169.254.169.254:{port}/latest"), "metadata"),
    ];
    for (url, expected) in cases {
        let event = notifier.publish_event(url.clone()).await;
        let attempts = notifier.attempts_until_final(&event).await;
        assert_eq!(outcomes(&attempts), vec![DeliveryOutcome::Dead], "{url}");
        assert_eq!(attempts[0].status_code, None);
        let error = attempts[0].error.as_deref().unwrap_or_default();
        assert!(error.starts_with("The webhook URL"), "{url}: {error}");
        assert!(error.contains(expected), "{url}: {error}");
        assert!(!error.contains(&port.to_string()), "the error must not echo the URL: {error}");
    }
    tokio::time::sleep(ms(200)).await;
    assert!(receiver.hits().is_empty(), "a refused destination was contacted");
    notifier.stop().await;
}

#[tokio::test]
async fn slow_receivers_time_out_and_are_retried() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[], 200).await;
    let notifier = start_notifier(vec![ms(20)], &["127.0.0.1"], ms(300));

    let event = notifier.publish_event(format!("http://{addr}/slow")).await;
    let attempts = notifier.attempts_until_final(&event).await;

    assert_eq!(outcomes(&attempts), vec![DeliveryOutcome::Retrying, DeliveryOutcome::Dead]);
    assert_eq!(attempts[0].status_code, None);
    assert_eq!(attempts[0].error.as_deref(), Some("the receiver did not answer within 300ms"));
    assert_eq!(receiver.hits().len(), 2);
    notifier.stop().await;
}

#[tokio::test]
async fn unknown_companies_and_undecodable_messages_do_not_block_the_queue() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[], 200).await;
    let notifier = start_notifier(vec![ms(20)], &["127.0.0.1"], Duration::from_secs(5));

    notifier
        .queue
        .publish(Topic::Events, b"{not json".to_vec(), Duration::ZERO)
        .await
        .expect("publish garbage");
    let orphan = notifier
        .publish_event_for(CompanyId::generate(Utc::now()), format!("http://{addr}/hook"))
        .await;
    let attempts = notifier.attempts_until_final(&orphan).await;
    assert_eq!(outcomes(&attempts), vec![DeliveryOutcome::Dead]);
    assert_eq!(attempts[0].error.as_deref(), Some("the company has no webhook signing secret"));

    let event = notifier.publish_event(format!("http://{addr}/hook")).await;
    let attempts = notifier.attempts_until_final(&event).await;
    assert_eq!(outcomes(&attempts), vec![DeliveryOutcome::Delivered]);
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1, "only the valid event reaches the receiver");
    assert_signed_delivery(&hits[0], &event);
    notifier.stop().await;
}

#[tokio::test]
async fn shutdown_finishes_the_attempt_in_flight() {
    let (receiver, addr) = start_receiver(vec![secret_from(7), secret_from(9)], &[], 200).await;
    let notifier = start_notifier(vec![ms(20)], &["127.0.0.1"], Duration::from_secs(5));

    let event = notifier.publish_event(format!("http://{addr}/slow")).await;
    // Wait until the receiver has the request, then ask the notifier to stop mid-attempt.
    let started = Instant::now();
    while receiver.hits().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(10), "the attempt never started");
        tokio::time::sleep(ms(10)).await;
    }
    let queue = Arc::clone(&notifier.queue);
    let shutdown = notifier.shutdown.clone();
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), notifier.task)
        .await
        .expect("notifier did not stop")
        .expect("notifier task")
        .expect("notifier run");

    // The attempt completed, was reported, and its event acked rather than left for a repeat.
    assert_eq!(queue.unsettled(Topic::Events), 0);
    let delivery = queue.try_take(&[Topic::Results]).expect("the attempt was reported");
    let [attempt] = reported(&delivery).try_into().expect("one attempt reported");
    assert_eq!(attempt.event_id, event.event_id);
    assert_eq!(attempt.outcome, DeliveryOutcome::Delivered);
    assert_eq!(receiver.hits().len(), 1);
}

/// Every company has the same secrets: for tests with several companies.
struct SharedSecrets(Vec<String>);

#[async_trait]
impl SecretSource for SharedSecrets {
    async fn signing_secrets(&self, _: &CompanyId) -> Result<Vec<String>, SecretError> {
        Ok(self.0.clone())
    }
}

/// The final outcome of `count` events, in the order they were reported.
async fn final_attempts(queue: &MemoryQueue, count: usize) -> Vec<DeliveryAttempt> {
    let mut finals = Vec::new();
    while finals.len() < count {
        let delivery = tokio::time::timeout(Duration::from_secs(60), queue.receive(&[Topic::Results]))
            .await
            .expect("no final outcome in time")
            .expect("receive result");
        queue.ack(&delivery).await.expect("ack result");
        finals.extend(reported(&delivery).into_iter().filter(|a| a.outcome != DeliveryOutcome::Retrying));
    }
    finals
}

#[tokio::test]
async fn a_hanging_receiver_holds_only_its_share_of_the_delivery_slots() {
    let secrets = vec![secret_from(7), secret_from(9)];
    let (slow, slow_addr) = start_receiver(secrets.clone(), &[], 200).await;
    let (fast, fast_addr) = start_receiver(secrets.clone(), &[], 200).await;
    let queue = Arc::new(MemoryQueue::default());
    let config = NotifierConfig {
        retry_schedule: vec![ms(50)],
        allow_hosts: vec!["127.0.0.1".into()],
        // Longer than the test: company A's receiver answers only when the test opens its gate.
        timeout: Duration::from_secs(120),
        concurrency: 4,
        per_destination: 2,
        ..NotifierConfig::default()
    };
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(notifier::run(
        Arc::clone(&queue) as Arc<dyn Queue>,
        Arc::new(SharedSecrets(secrets)),
        config,
        shutdown.clone(),
    ));
    let harness = Harness {
        queue: Arc::clone(&queue),
        company: CompanyId::generate(Utc::now()),
        secrets: Vec::new(),
        shutdown,
        task,
    };
    let (a, b) = (CompanyId::generate(Utc::now()), CompanyId::generate(Utc::now()));

    // Company A's events first, more of them than there are delivery slots, then company B's.
    let mut slow_events = Vec::new();
    for _ in 0..6 {
        slow_events.push(harness.publish_event_for(a.clone(), format!("http://{slow_addr}/hang")).await);
    }
    let mut fast_events = Vec::new();
    for _ in 0..3 {
        fast_events.push(harness.publish_event_for(b.clone(), format!("http://{fast_addr}/hook")).await);
    }

    // B's receiver gets all its events while A's requests are still held open.
    let started = Instant::now();
    while fast.hits().len() < fast_events.len() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "B's events were not delivered while A's receiver hangs: {} of {} (A holds {} requests)",
            fast.hits().len(),
            fast_events.len(),
            slow.hits().len()
        );
        tokio::time::sleep(ms(10)).await;
    }
    assert!(!*slow.gate.borrow(), "A's receiver has answered nothing yet");
    assert_eq!(slow.hits().len(), 2, "A's destination holds its share of the slots, no more");
    let mut delivered_ids: Vec<String> = fast.hits().iter().filter_map(|h| h.webhook_id.clone()).collect();
    delivered_ids.sort();
    let mut fast_ids: Vec<String> = fast_events.iter().map(|e| e.event_id.to_string()).collect();
    fast_ids.sort();
    assert_eq!(delivered_ids, fast_ids);

    // Once A's receiver answers, its deferred events are delivered too, each as its first attempt.
    slow.gate.send_replace(true);
    let finals = final_attempts(&queue, slow_events.len() + fast_events.len()).await;
    assert!(finals.iter().all(|f| f.outcome == DeliveryOutcome::Delivered), "{finals:?}");
    assert!(finals.iter().all(|f| f.attempt == 1), "a deferral is not an attempt: {finals:?}");
    let mut slow_hits: Vec<String> = slow.hits().iter().filter_map(|h| h.webhook_id.clone()).collect();
    slow_hits.sort();
    let mut slow_ids: Vec<String> = slow_events.iter().map(|e| e.event_id.to_string()).collect();
    slow_ids.sort();
    assert_eq!(slow_hits, slow_ids, "each of A's events sent once");
    harness.stop().await;
}
