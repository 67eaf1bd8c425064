//! Test mode (API.md, Test mode): a company's test keys act on test data kept apart from its live
//! data in both directions, on the workflows both modes share; test events go only to a workflow's
//! test URL, signed only with the test account's own secret (so a receiver that verifies with the
//! live secret refuses them), and say `livemode: false`; test results are never counted as acts; a
//! test journey's pages say TEST.

use crate::support;

use serde_json::{json, Value};
use std::time::Duration;
use support::journey::{self, Session};
use support::receiver::Receiver;
use support::{Company, Service};

/// A key of the company's in test mode, made by the operator's CLI.
fn test_key(svc: &Service, co: &Company, read_only: bool) -> String {
    let mut args = vec!["key", "create", "--company", co.id.as_str(), "--test"];
    if read_only {
        args.push("--read-only");
    }
    let made = svc.admin(&args);
    assert_eq!(made["mode"], "test", "{made}");
    made["key"].as_str().expect("key").to_owned()
}

/// A new test signing secret of the company (`whsec_test_…`), by the operator's CLI.
fn test_secret(svc: &Service, co: &Company) -> String {
    let rotated = svc.admin(&["company", "rotate-secret", &co.id, "--test"]);
    assert_eq!(rotated["mode"], "test", "{rotated}");
    let secret = rotated["webhookSecret"].as_str().expect("secret").to_owned();
    assert!(secret.starts_with("whsec_test_") && secret != co.secret, "{secret}");
    secret
}

/// Sets the workflow's test webhook URL (empty: removes it) by the operator's CLI.
fn set_test_url(svc: &Service, workflow: &str, url: &str) -> Value {
    svc.admin(&["workflow", "set-webhook", workflow, "--test-webhook-url", url])
}

/// The ids of a list's `data`.
fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {page}"))
        .iter()
        .map(|item| item["id"].as_str().expect("id").to_owned())
        .collect()
}

/// A batch of one blank PDF page, submitted and processed; its consultation id.
async fn processed_batch(svc: &Service, key: &str, hook: &str) -> (String, String) {
    let batch = svc.open_batch(key, Some(hook)).await;
    let (status, body) = svc.deposit(key, &batch, "administratif", &support::pdf(1)).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = svc.post(key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_eq!(status, 200, "{body}");
    let done = svc
        .wait_batch(key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    let consultation = done["items"][0]["consultationId"]
        .as_str()
        .unwrap_or_else(|| panic!("a consultation: {done}"))
        .to_owned();
    (batch, consultation)
}

#[tokio::test]
async fn test_and_live_data_are_kept_apart_in_both_directions() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let test = Company {
        id: co.id.clone(),
        key: test_key(&svc, &co, false),
        secret: co.secret.clone(),
    };
    assert!(test.key.starts_with("sk_test_"), "{}", test.key);
    let hook = Receiver::start(&co.secret, &[]).await;
    let secret_of_test = test_secret(&svc, &co);
    let test_hook = Receiver::start(&secret_of_test, &[]).await;
    let workflow = journey::workflow(&svc, &co, "administratif", Some(&hook.url));
    set_test_url(&svc, &workflow, &test_hook.url);
    let pdf = support::pdf(1);
    let files = [("document", pdf.as_slice(), "application/pdf")];

    // The same workflow, a journey in each mode; the test journey's page says TEST, the live one's not.
    let (live_session, live_result) = journey::complete(&svc, &co, &workflow, "dossier-live", &files).await;
    let (test_session, test_result) = journey::complete(&svc, &test, &workflow, "dossier-test", &files).await;
    let unopened: Session = journey::session(&svc, &test, &workflow, "dossier-test-2").await;
    let (_, page, _) = journey::open(&svc, &unopened.url, None).await;
    assert!(
        page.contains("data-testid=\"journey-test-mode\"") && page.contains("TEST"),
        "{page}"
    );
    let live_unopened = journey::session(&svc, &co, &workflow, "dossier-live-2").await;
    let (_, live_page, _) = journey::open(&svc, &live_unopened.url, None).await;
    assert!(!live_page.contains("journey-test-mode"));
    let (live_batch, live_batch_result) = processed_batch(&svc, &co.key, &hook.url).await;
    let (test_batch, test_batch_result) = processed_batch(&svc, &test.key, &test_hook.url).await;

    // Each mode reads its own, and the other's ids answer 404 as unknown ones do.
    for (key, own, other) in [
        (&co.key, [&live_result, &live_batch_result], [&test_result, &test_batch_result]),
        (&test.key, [&test_result, &test_batch_result], [&live_result, &live_batch_result]),
    ] {
        let (_, listed) = svc.get(key, "/api/v1/consultations?limit=100").await;
        let mut listed = ids(&listed);
        listed.sort();
        let mut expected: Vec<String> = own.iter().map(|id| id.to_string()).collect();
        expected.sort();
        assert_eq!(listed, expected, "the consultations listed in one mode");
        for id in own {
            assert_eq!(svc.get(key, &format!("/api/v1/consultations/{id}")).await.0, 200);
        }
        for id in other {
            for path in [
                format!("/api/v1/consultations/{id}"),
                format!("/api/v1/consultations/{id}/certificate"),
                format!("/api/v1/consultations/{id}/images/recto"),
            ] {
                let (status, body) = svc.get(key, &path).await;
                assert_eq!((status, body["error"].as_str()), (404, Some("not_found")), "{path}: {body}");
            }
        }
    }
    for (key, own_batch, other_batch, other_session) in [
        (&co.key, &live_batch, &test_batch, &test_session.id),
        (&test.key, &test_batch, &live_batch, &live_session.id),
    ] {
        let (_, batches) = svc.get(key, "/api/v1/batches").await;
        assert_eq!(ids(&batches), vec![own_batch.clone()]);
        assert_eq!(svc.get(key, &format!("/api/v1/batches/{other_batch}")).await.0, 404);
        assert_eq!(svc.get(key, &format!("/api/v1/verifications/{other_session}")).await.0, 404);
        let (status, body) = svc.post(key, &format!("/api/v1/batches/{other_batch}/cancel"), json!(null)).await;
        assert_eq!(status, 404, "{body}");
    }

    // Events: each mode's go to its own URL (the workflow's test URL, the test batch's URL),
    // signed with its own secret only; test ones say so too.
    let live_events = hook.wait_for(2, Duration::from_secs(30)).await;
    let test_events = test_hook.wait_for(2, Duration::from_secs(30)).await;
    let livemode = |events: &[support::receiver::Received], id: &str, other_secret: &str| {
        let event = events
            .iter()
            .find(|e| e.body["consultationId"] == id || e.body["batchId"] == id)
            .unwrap_or_else(|| panic!("an event for {id}: {:?}", events.iter().map(|e| &e.body).collect::<Vec<_>>()));
        assert!(event.signature_valid, "{}", event.body);
        assert!(
            !event.verifies_with(other_secret),
            "the other mode's secret verifies {}",
            event.body
        );
        event.body["livemode"].clone()
    };
    assert_eq!(livemode(&live_events, &live_result, &secret_of_test), json!(true));
    assert_eq!(livemode(&live_events, &live_batch, &secret_of_test), json!(true));
    assert_eq!(livemode(&test_events, &test_result, &co.secret), json!(false));
    assert_eq!(livemode(&test_events, &test_batch, &co.secret), json!(false));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        (hook.received().len(), test_hook.received().len()),
        (2, 2),
        "one event each, each at its URL"
    );

    // Only live results are acts: the live journey and the live batch's document.
    let month = chrono::Utc::now().format("%Y-%m").to_string();
    let usage = svc.admin(&["usage", "--company", &co.id, "--month", &month]);
    assert_eq!(usage["acts"], 2, "{usage}");
}

#[tokio::test]
async fn test_keys_follow_the_rules_of_keys_and_idempotency_keys_stay_in_their_mode() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let full = test_key(&svc, &co, false);
    let read_only = test_key(&svc, &co, true);
    assert!(read_only.starts_with("rk_test_"), "{read_only}");

    // A read-only test key reads test data and writes nothing.
    let batch = svc.open_batch(&full, None).await;
    assert_eq!(svc.get(&read_only, &format!("/api/v1/batches/{batch}")).await.0, 200);
    let (status, body) = svc.post(&read_only, "/api/v1/batches", json!({})).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("read_only_key")), "{body}");

    // One Idempotency-Key in each mode: two requests, two batches, neither a replay of the other.
    let open = |key: String| {
        let svc = &svc;
        async move {
            let r = svc
                .http
                .post(svc.url("/api/v1/batches"))
                .bearer_auth(key)
                .header("Idempotency-Key", "lot-du-jour")
                .json(&json!({ "externalRef": "lot" }))
                .send()
                .await
                .expect("POST");
            let replayed = r.headers().contains_key("idempotent-replayed");
            let body: Value = r.json().await.expect("JSON");
            (body["id"].as_str().expect("id").to_owned(), replayed)
        }
    };
    let (live, live_replayed) = open(co.key.clone()).await;
    let (test, test_replayed) = open(full.clone()).await;
    assert_ne!(live, test);
    assert!(!live_replayed && !test_replayed);
    assert_eq!(open(full.clone()).await, (test.clone(), true), "a replay within its mode");

    // A revoked test key is refused like any other.
    let prefix = &full[..16];
    svc.admin(&["key", "revoke", prefix]);
    let (status, body) = svc.get(&full, "/api/v1/batches").await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_api_key")), "{body}");
    assert!(!svc.log().contains(&full), "a key in the service's log");
}

/// A magic document of `test-documents/`.
fn magic(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("test-documents").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test]
async fn magic_documents_yield_each_verdict_and_each_item_error_in_test_mode_only() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let test = test_key(&svc, &co, false);
    let verdicts = ["conforme", "non_conforme", "suspect", "analyse_impossible"];
    let errors = ["unreadable_document", "unsupported_document", "engine_failure", "ia_desactivee"];
    let batch = svc.open_batch(&test, None).await;
    for name in verdicts.iter().chain(&errors) {
        let (status, body) = svc.deposit(&test, &batch, "identite", &magic(&format!("{name}.png"))).await;
        assert_eq!(status, 201, "{name}: {body}");
    }
    // sans_anomalie is a verdict of administrative documents.
    let (status, body) = svc.deposit(&test, &batch, "administratif", &magic("sans_anomalie.png")).await;
    assert_eq!(status, 201, "{body}");
    // Any other file is not analysed in test mode, which is not billed.
    let (status, body) = svc.deposit(&test, &batch, "identite", &support::png(64, 5)).await;
    assert_eq!(status, 201, "{body}");
    // The same file deposited with a live key is a document like any other, for the engine.
    let live_batch = svc.open_batch(&co.key, None).await;
    assert_eq!(svc.deposit(&co.key, &live_batch, "identite", &magic("conforme.png")).await.0, 201);
    for (key, batch) in [(&test, &batch), (&co.key, &live_batch)] {
        let (status, body) = svc.post(key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
        assert_eq!(status, 200, "{body}");
    }

    let done = svc
        .wait_batch(&test, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    let items = done["items"].as_array().expect("items");
    assert_eq!(items.len(), 10, "{done}");
    let other = items[9]["consultationId"].as_str().unwrap_or_else(|| panic!("{done}"));
    let (_, result) = svc.get(&test, &format!("/api/v1/consultations/{other}")).await;
    assert_eq!(
        (result["verdict"].as_str(), result["anomalies"][0]["code"].as_str()),
        (Some("analyse_impossible"), Some("not_analysed_in_test_mode")),
        "{result}"
    );
    for (item, name) in items.iter().zip(verdicts.iter().chain(&errors).chain(["sans_anomalie"].iter())) {
        if errors.contains(name) {
            assert_eq!(
                (item["status"].as_str(), item["error"].as_str()),
                (Some("errored"), Some(*name)),
                "{item}"
            );
            continue;
        }
        assert_eq!(item["status"], "succeeded", "{name}: {item}");
        let id = item["consultationId"].as_str().expect("consultation id");
        let (_, result) = svc.get(&test, &format!("/api/v1/consultations/{id}")).await;
        assert_eq!(result["verdict"], *name, "{result}");
        assert_eq!(result["hasRejectAnomaly"], json!(*name == "non_conforme"), "{result}");
    }
    let live = svc
        .wait_batch(&co.key, &live_batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    let id = live["items"][0]["consultationId"].as_str().unwrap_or_else(|| panic!("{live}"));
    let (_, result) = svc.get(&co.key, &format!("/api/v1/consultations/{id}")).await;
    assert_ne!(result["verdict"], "conforme", "a live key's magic document is analysed: {result}");
}

#[tokio::test]
async fn simulate_completes_a_test_session_with_its_webhook_and_is_refused_to_a_live_key() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let test = Company {
        id: co.id.clone(),
        key: test_key(&svc, &co, false),
        secret: co.secret.clone(),
    };
    // Its events go to the workflow's test URL, signed with the test secret.
    let hook = Receiver::start(&test_secret(&svc, &co), &[]).await;
    let workflow = journey::workflow(&svc, &co, "identite", None);
    set_test_url(&svc, &workflow, &hook.url);
    let simulate = |key: &str, session: &str, body: Value| {
        let path = format!("/api/v1/verifications/{session}/simulate");
        let (svc, key) = (&svc, key.to_owned());
        async move { svc.post(&key, &path, body).await }
    };

    // The workflow decides, as for a real journey: a suspect result is to be reviewed.
    let first = journey::session(&svc, &test, &workflow, "dossier-1").await;
    let (status, session) = simulate(&test.key, &first.id, json!({ "verdict": "suspect" })).await;
    assert_eq!((status, session["status"].as_str()), (200, Some("completed")), "{session}");
    let consultation = session["consultationId"].as_str().expect("consultationId").to_owned();
    let (_, result) = svc.get(&test.key, &format!("/api/v1/consultations/{consultation}")).await;
    assert_eq!(
        (
            result["verdict"].as_str(),
            result["decision"].as_str(),
            result["reviewStatus"].as_str()
        ),
        (Some("suspect"), Some("a_verifier"), Some("pending")),
        "{result}"
    );
    assert_eq!(result["externalRef"], "dossier-1");
    let events = hook.wait_for(1, Duration::from_secs(30)).await;
    let event = &events[0].body;
    assert!(events[0].signature_valid);
    assert_eq!(
        (
            event["event"].as_str(),
            event["consultationId"].as_str(),
            event["livemode"].as_bool()
        ),
        (Some("verification.completed"), Some(consultation.as_str()), Some(false)),
        "{event}"
    );
    assert_eq!(
        (event["verdict"].as_str(), event["decision"].as_str()),
        (Some("suspect"), Some("a_verifier"))
    );

    // Its link, used now, still says TEST.
    let (_, page, _) = journey::open(&svc, &first.url, None).await;
    assert!(page.contains("data-testid=\"journey-test-mode\""), "{page}");

    // Once only; a chosen decision is the one recorded.
    let (status, body) = simulate(&test.key, &first.id, json!({ "verdict": "conforme" })).await;
    assert_eq!((status, body["error"].as_str()), (409, Some("invalid_state")), "{body}");
    let second = journey::session(&svc, &test, &workflow, "dossier-2").await;
    let (status, body) = simulate(&test.key, &second.id, json!({ "verdict": "sonforme" })).await;
    assert_eq!((status, body["field"].as_str()), (400, Some("verdict")), "{body}");
    let (_, session) = simulate(&test.key, &second.id, json!({ "verdict": "conforme", "decision": "refuse" })).await;
    let id = session["consultationId"].as_str().expect("consultationId");
    let (_, result) = svc.get(&test.key, &format!("/api/v1/consultations/{id}")).await;
    assert_eq!(
        (result["verdict"].as_str(), result["decision"].as_str()),
        (Some("conforme"), Some("refuse"))
    );

    // A session whose files are submitted gets its own result, not a simulated one.
    let submitted = journey::session(&svc, &test, &workflow, "dossier-3").await;
    let (_, _, csrf) = journey::open(&svc, &submitted.url, None).await;
    let csrf = csrf.expect("a CSRF token");
    for side in ["front", "selfie"] {
        let (status, body) = journey::upload(&svc, &submitted.url, side, Some(&csrf), support::png(64, 9), "image/png").await;
        assert_eq!(status, 201, "{side}: {body}");
    }
    let (status, body) = journey::submit(&svc, &submitted.url, &csrf).await;
    assert_eq!(status, 202, "{body}");
    let (status, body) = simulate(&test.key, &submitted.id, json!({ "verdict": "conforme" })).await;
    assert_eq!((status, body["error"].as_str()), (409, Some("invalid_state")), "{body}");

    // A live key simulates nothing, not even its own sessions, whatever it sends.
    let live = journey::session(&svc, &co, &workflow, "dossier-live").await;
    for (session, body) in [
        (&live.id, json!({ "verdict": "conforme" })),
        (&second.id, json!({ "verdict": "conforme" })),
        (&live.id, json!({ "verdict": 3 })),
    ] {
        let (status, body) = simulate(&co.key, session, body).await;
        assert_eq!((status, body["error"].as_str()), (404, Some("not_found")), "{body}");
    }
    let (_, untouched) = svc.get(&co.key, &format!("/api/v1/verifications/{}", live.id)).await;
    assert_eq!(untouched["status"], "created");
}

/// Simulates a test session of `workflow` with a `conforme` result; its consultation id.
async fn simulated(svc: &Service, test: &Company, workflow: &str, external_ref: &str) -> String {
    let session = journey::session(svc, test, workflow, external_ref).await;
    let path = format!("/api/v1/verifications/{}/simulate", session.id);
    let (status, body) = svc.post(&test.key, &path, json!({ "verdict": "conforme" })).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("completed")), "{body}");
    body["consultationId"].as_str().expect("consultationId").to_owned()
}

// Issue 28, item 6: a receiver built to the specification alone (which has no `livemode`) verifies
// with the live secret, and must refuse every test event.
#[tokio::test]
async fn a_test_event_goes_only_to_the_test_url_and_never_verifies_with_the_live_secret() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    // The company's first test key comes with the test secret, printed this once.
    let first = svc.admin(&["key", "create", "--company", &co.id, "--test"]);
    let secret = first["testWebhookSecret"]
        .as_str()
        .expect("the test secret, made with the first test key")
        .to_owned();
    assert!(secret.starts_with("whsec_test_") && secret != co.secret, "{secret}");
    let test = Company {
        id: co.id.clone(),
        key: first["key"].as_str().expect("key").to_owned(),
        secret: co.secret.clone(),
    };
    // Two real receivers, both verifying with the live secret, as a live endpoint does.
    let live_hook = Receiver::start(&co.secret, &[]).await;
    let test_hook = Receiver::start(&co.secret, &[]).await;
    let made = svc.admin(&[
        "workflow",
        "create",
        "--company",
        &co.id,
        "--name",
        "KYC",
        "--category",
        "administratif",
        "--webhook-url",
        &live_hook.url,
        "--test-webhook-url",
        &test_hook.url,
    ]);
    let workflow = made["id"].as_str().expect("id").to_owned();
    assert_eq!(
        (made["webhookUrl"].as_str(), made["testWebhookUrl"].as_str()),
        (Some(live_hook.url.as_str()), Some(test_hook.url.as_str())),
        "{made}"
    );
    assert!(made.get("testWebhookSecret").is_none(), "shown once, with the key: {made}");
    let again = set_test_url(&svc, &workflow, &test_hook.url);
    assert!(again.get("testWebhookSecret").is_none(), "shown once: {again}");

    // A test key's result: its event arrives at the test URL only, verifies with the test secret
    // and with it alone; the live receiver gets nothing.
    let consultation = simulated(&svc, &test, &workflow, "dossier-test").await;
    let got = test_hook.wait_for(1, Duration::from_secs(30)).await;
    let event = &got[0];
    assert_eq!(
        (event.body["event"].as_str(), event.body["consultationId"].as_str()),
        (Some("verification.completed"), Some(consultation.as_str())),
        "{}",
        event.body
    );
    assert!(
        !event.signature_valid,
        "a test event verified with the live secret: {}",
        event.signature
    );
    assert!(!event.verifies_with(&co.secret));
    assert!(event.verifies_with(&secret), "the test secret signs it");
    assert_eq!(
        event.signature.split(' ').count(),
        1,
        "one secret, one signature: {}",
        event.signature
    );
    assert_eq!(event.body["livemode"], json!(false));

    // A live result still goes to the live URL, signed with the live secret only.
    let pdf = support::pdf(1);
    let files = [("document", pdf.as_slice(), "application/pdf")];
    let (_, live_result) = journey::complete(&svc, &co, &workflow, "dossier-live", &files).await;
    let got = live_hook.wait_for(1, Duration::from_secs(60)).await;
    assert_eq!(got.len(), 1, "the live URL got the live event alone: {got:?}");
    assert_eq!(
        got[0].body["consultationId"].as_str(),
        Some(live_result.as_str()),
        "{}",
        got[0].body
    );
    assert!(got[0].signature_valid && !got[0].verifies_with(&secret), "{}", got[0].signature);
    assert_eq!(got[0].body["livemode"], json!(true));

    // No test URL: a test event is kept as not sent, and goes nowhere, the live URL least of all.
    set_test_url(&svc, &workflow, "");
    let unsent = simulated(&svc, &test, &workflow, "dossier-sans-url").await;
    let listed = svc.admin(&["webhook", "list", "--company", &co.id]);
    let kept = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|e| e["status"] == "not_sent")
        .unwrap_or_else(|| panic!("a test event kept as not sent: {listed}"))
        .clone();
    assert_eq!(
        (kept["livemode"].as_bool(), kept["url"].as_str()),
        (Some(false), Some("")),
        "{kept}"
    );
    assert!(
        kept["lastError"].as_str().unwrap_or_default().contains("no test webhook URL"),
        "{kept}"
    );
    let replay = svc.admin_raw(&["webhook", "replay", kept["eventId"].as_str().expect("eventId")], false);
    let why = String::from_utf8_lossy(&replay.stderr);
    assert!(
        !replay.status.success() && why.contains("not_sent"),
        "nothing to replay it to: {why}"
    );

    // A rotated test secret: both test secrets sign through the overlap, the live one never.
    let rotated = test_secret(&svc, &co);
    set_test_url(&svc, &workflow, &test_hook.url);
    simulated(&svc, &test, &workflow, "dossier-rotation").await;
    let got = test_hook.wait_for(2, Duration::from_secs(30)).await;
    assert_eq!(got[1].signature.split(' ').count(), 2, "{}", got[1].signature);
    assert!(got[1].verifies_with(&rotated) && got[1].verifies_with(&secret));
    assert!(!got[1].signature_valid && !got[1].verifies_with(&co.secret));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(live_hook.received().len(), 1, "never a test event at the live URL");
    assert_eq!(
        test_hook.received().len(),
        2,
        "the event with no test URL was sent nowhere ({unsent})"
    );
}

/// The company's first test key comes with the test account's signing secret, shown that once:
/// a test batch's events are signed and delivered from the first test, never dead-lettered for
/// want of a secret nor signed with the live one.
#[tokio::test]
async fn the_first_test_key_comes_with_the_test_secret_that_signs_its_batches() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let first = svc.admin(&["key", "create", "--company", &co.id, "--test"]);
    let secret = first["testWebhookSecret"].as_str().unwrap_or_else(|| panic!("{first}")).to_owned();
    assert!(secret.starts_with("whsec_test_"), "{secret}");
    let second = svc.admin(&["key", "create", "--company", &co.id, "--test"]);
    assert!(second.get("testWebhookSecret").is_none(), "shown once: {second}");
    let live = svc.admin(&["key", "create", "--company", &co.id]);
    assert!(live.get("testWebhookSecret").is_none(), "{live}");

    let hook = Receiver::start(&secret, &[]).await;
    let key = first["key"].as_str().expect("key");
    processed_batch(&svc, key, &hook.url).await;
    let got = hook.wait_for(1, Duration::from_secs(30)).await;
    assert!(got[0].signature_valid, "signed with the secret shown: {}", got[0].signature);
    assert!(!got[0].verifies_with(&co.secret), "never with the live secret");
}
