//! The real-time lane shared among companies, end to end and in both modes: company A starts a
//! burst of journeys while every analysis slot is held (by an external analysis service that
//! answers nothing until the test lets it), then company B starts one. B's journey is analysed
//! among the first once slots free up, ahead of most of A's burst, not after it.

use crate::support;

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::journey::{self, WAIT};
use support::{Mode, Service};
use tokio::sync::watch;

/// An external analysis service that records the documents it is sent, in order, and answers
/// none until its gate opens.
#[derive(Clone)]
struct HeldService {
    fronts: Arc<Mutex<Vec<String>>>,
    gate: Arc<watch::Sender<bool>>,
}

async fn analyse(State(service): State<HeldService>, Json(request): Json<Value>) -> Json<Value> {
    let front = request["front"]["data"].as_str().unwrap_or_default().to_owned();
    service.fronts.lock().expect("fronts lock").push(front);
    let mut open = service.gate.subscribe();
    let _ = open.wait_for(|open| *open).await;
    Json(json!({ "selfie": { "checked": true, "match": true, "score": 0.9 }, "signals": [] }))
}

impl HeldService {
    async fn start() -> (HeldService, String) {
        let service = HeldService {
            fronts: Arc::default(),
            gate: Arc::new(watch::channel(false).0),
        };
        let app = axum::Router::new()
            .route("/analyse", axum::routing::post(analyse))
            .with_state(service.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/analyse", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        (service, url)
    }

    fn received(&self) -> usize {
        self.fronts.lock().expect("fronts lock").len()
    }

    async fn holds(&self, n: usize) {
        let started = Instant::now();
        while self.received() < n {
            assert!(started.elapsed() < WAIT, "the service got {} requests of {n}", self.received());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Opens the journey, uploads its files and submits it, without waiting for the result. The
/// burst goes over the journey limit per client address, so a refusal is retried as a browser's
/// page would, a second later.
async fn start_journey(svc: &Service, session: &journey::Session, front: &[u8], selfie: &[u8]) {
    let csrf = patiently(|| async {
        let (status, _, csrf) = journey::open(svc, &session.url, None).await;
        (status, json!(csrf))
    })
    .await
    .1;
    let csrf = csrf.as_str().expect("the page carries a CSRF token").to_owned();
    for (side, bytes) in [("front", front), ("selfie", selfie)] {
        let (s, body) = patiently(|| journey::upload(svc, &session.url, side, Some(&csrf), bytes.to_vec(), "image/png")).await;
        assert_eq!(s, 201, "{side}: {body}");
    }
    let (s, body) = patiently(|| journey::submit(svc, &session.url, &csrf)).await;
    assert_eq!(s, 202, "{body}");
}

/// The answer of `call`, sent again while it is 429.
async fn patiently<F: std::future::Future<Output = (u16, Value)>>(call: impl Fn() -> F) -> (u16, Value) {
    for _ in 0..60 {
        let answer = call().await;
        if answer.0 != 429 {
            return answer;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    call().await
}

#[tokio::test]
async fn a_journey_started_during_another_companys_burst_is_not_analysed_last() {
    let (service, url) = HeldService::start().await;
    let svc = Service::start(&[
        ("SCEAU_EXTERNAL_ENGINE_URL", url.as_str()),
        ("SCEAU_EXTERNAL_ENGINE_TIMEOUT_MS", "120000"),
    ])
    .await;
    // Every slot of the service: two in embedded mode, two workers of two in distributed mode.
    let slots = match svc.mode {
        Mode::Embedded => 2,
        Mode::Distributed => 4,
    };
    let (a, b) = (svc.company(), svc.company());
    let (wf_a, wf_b) = (
        journey::workflow(&svc, &a, "identite", None),
        journey::workflow(&svc, &b, "identite", None),
    );
    let selfie = support::png(200, 99);
    // What waits on the queue behind the slots: B's wait must not grow with it.
    let waiting = 24;
    let burst = slots + waiting;
    let mut sessions = Vec::new();
    let mut fronts = Vec::new();
    for i in 0..burst {
        let session = journey::session(&svc, &a, &wf_a, &format!("a-{i}")).await;
        let front = support::png(320, i as u8);
        start_journey(&svc, &session, &front, &selfie).await;
        fronts.push(support::b64(&front));
        sessions.push(session);
    }
    // A holds every slot; the rest of its burst waits on the queue.
    service.holds(slots).await;
    let session = journey::session(&svc, &b, &wf_b, "b-0").await;
    let front_b = support::png(320, 200);
    start_journey(&svc, &session, &front_b, &selfie).await;
    sessions.push(session);
    let b_front = support::b64(&front_b);

    service.gate.send_replace(true);
    for session in &sessions {
        support::eventually(WAIT, "every journey completes", || async {
            journey::status(&svc, &session.url).await == "completed"
        })
        .await;
    }
    let order = service.fronts.lock().expect("fronts lock").clone();
    assert_eq!(order.len(), burst + 1, "one analysis per journey");
    let place = order.iter().position(|f| *f == b_front).expect("B's document was analysed");
    let after_b = order[place + 1..].iter().filter(|f| fronts.contains(f)).count();
    eprintln!("B's journey analysed {}th of {}", place + 1, order.len());
    // Slots free up together and each worker has jobs of A already in hand (prefetched, or in
    // the overflow lane), so B is not strictly next; but it goes ahead of most of the burst.
    assert!(
        after_b >= waiting / 2,
        "B's journey goes ahead of A's burst: analysed {}th of {}, {after_b} of A's after it",
        place + 1,
        order.len()
    );
}
