//! Webhooks end to end: test events from the CLI, retries with one webhook-id, dead letters and
//! their replay, secret rotation, and the SSRF guard. Review events are in `review.rs`.

use crate::support;

use serde_json::json;
use std::time::Duration;
use support::receiver::Receiver;
use support::Service;

const WAIT: Duration = Duration::from_secs(20);

/// An identity workflow of the company whose events go to `url`.
fn workflow_with_hook(svc: &Service, company: &str, url: &str) -> serde_json::Value {
    svc.admin(&[
        "workflow",
        "create",
        "--company",
        company,
        "--name",
        "Onboarding",
        "--category",
        "identite",
        "--webhook-url",
        url,
    ])
}

#[tokio::test]
async fn test_event_is_retried_with_the_same_id_until_delivered() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[500, 503]).await;
    let wf = workflow_with_hook(&svc, &co.id, &hook.url);
    let wf_id = wf["id"].as_str().unwrap();
    let sent = svc.admin(&["workflow", "test-webhook", wf_id]);
    let got = hook.wait_for(3, WAIT).await;
    assert!(
        got.iter().all(|r| r.id == sent["eventId"].as_str().unwrap()),
        "one webhook-id on every attempt"
    );
    assert!(got.iter().all(|r| r.signature_valid));
    let body = &got[2].body;
    assert_eq!(body["event"], "verification.test");
    assert_eq!(body["externalRef"], "TEST");
    assert_eq!(body["workflowId"], wf_id);
    for field in ["eventId", "occurredAt", "consultationId", "verdict", "decision"] {
        assert!(body.get(field).is_some(), "{field} missing from {body}");
    }
    support::eventually(WAIT, "the delivery is recorded", || async {
        let e = &svc.admin(&["webhook", "list", "--company", &co.id])["data"][0];
        e["status"] == "delivered" && e["attempts"] == 3
    })
    .await;
}

#[tokio::test]
async fn failed_events_are_dead_lettered_and_replayed_from_the_cli() {
    let svc = Service::start(&[("SCEAU_RETRY_SCHEDULE", "100ms,100ms")]).await;
    let co = svc.company();
    let hook = Receiver::start(&co.secret, &[500, 500, 500]).await;
    let wf = workflow_with_hook(&svc, &co.id, &hook.url);
    let sent = svc.admin(&["workflow", "test-webhook", wf["id"].as_str().unwrap()]);
    let event_id = sent["eventId"].as_str().unwrap().to_owned();
    hook.wait_for(3, WAIT).await;
    support::eventually(WAIT, "the event is dead-lettered", || async {
        let dead = svc.admin(&["webhook", "dead-letters", "--company", &co.id]);
        dead["data"].as_array().unwrap().len() == 1
            && dead["data"][0]["eventId"] == event_id.as_str()
            && dead["data"][0]["lastStatusCode"] == 500
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(hook.received().len(), 3, "no attempt after the last one");
    svc.admin(&["webhook", "replay", &event_id]);
    let got = hook.wait_for(4, WAIT).await;
    assert_eq!(got[3].id, event_id, "a replay keeps the eventId");
    assert!(got[3].signature_valid);
    // Once delivered it is not a dead letter any more.
    support::eventually(WAIT, "the replay is delivered", || async {
        svc.admin(&["webhook", "list", "--company", &co.id])["data"][0]["status"] == "delivered"
    })
    .await;
    let refused = svc.admin_raw(&["webhook", "replay", &event_id], false);
    assert!(!refused.status.success());
    assert_eq!(String::from_utf8_lossy(&refused.stderr).lines().count(), 1, "one clear line");
}

#[tokio::test]
async fn during_a_rotation_both_secrets_sign() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let rotated = svc.admin(&["company", "rotate-secret", &co.id]);
    let new_secret = rotated["webhookSecret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, co.secret);
    let old = Receiver::start(&co.secret, &[]).await;
    let new = Receiver::start(&new_secret, &[]).await;
    for hook in [&old, &new] {
        let wf = workflow_with_hook(&svc, &co.id, &hook.url);
        svc.admin(&["workflow", "test-webhook", wf["id"].as_str().unwrap()]);
        let got = hook.wait_for(1, WAIT).await;
        assert!(got[0].signature_valid);
    }
}

#[tokio::test]
async fn private_destinations_are_refused_unless_allow_listed() {
    let svc = Service::start(&[("SCEAU_WEBHOOK_ALLOW_HOSTS", "")]).await;
    let co = svc.company();
    for url in [
        "http://127.0.0.1:9/hook",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest",
        "ftp://example.com/x",
        "not a url",
    ] {
        let (s, b) = svc.post(&co.key, "/api/v1/batches", json!({ "webhookUrl": url })).await;
        assert_eq!((s, b["field"].as_str()), (400, Some("webhookUrl")), "{url}: {b}");
    }
    assert_eq!(
        svc.post(
            &co.key,
            "/api/v1/batches",
            json!({ "webhookUrl": "https://hooks.example.com/sceau" })
        )
        .await
        .0,
        201
    );
    let refused = svc.admin_raw(
        &[
            "workflow",
            "create",
            "--company",
            &co.id,
            "--name",
            "W",
            "--category",
            "identite",
            "--webhook-url",
            "http://192.168.1.1/x",
        ],
        false,
    );
    assert!(!refused.status.success());
}

/// Every event row carries its URL: a webhook URL is at most 2,048 characters wherever it is set.
#[tokio::test]
async fn webhook_urls_longer_than_2048_characters_are_refused() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let base = "https://hooks.example.com/";
    let at_limit = format!("{base}{}", "a".repeat(2048 - base.len()));
    let over = format!("{at_limit}a");

    let (s, b) = svc.post(&co.key, "/api/v1/batches", json!({ "webhookUrl": at_limit })).await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = svc.post(&co.key, "/api/v1/batches", json!({ "webhookUrl": over })).await;
    assert_eq!(
        (s, b["error"].as_str(), b["field"].as_str()),
        (400, Some("invalid_request"), Some("webhookUrl")),
        "{b}"
    );

    let create = |url: &str| {
        svc.admin_raw(
            &[
                "workflow",
                "create",
                "--company",
                &co.id,
                "--name",
                "W",
                "--category",
                "identite",
                "--webhook-url",
                url,
            ],
            false,
        )
    };
    assert!(create(&at_limit).status.success());
    let refused = create(&over);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("longer than 2048 characters"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[tokio::test]
async fn a_hanging_receiver_does_not_hold_up_another_companys_webhooks() {
    let svc = Service::start(&[]).await;
    let (a, b) = (svc.company(), svc.company());
    let hanging = Receiver::start_holding(&a.secret).await;
    let fast = Receiver::start(&b.secret, &[]).await;
    let wf_a = workflow_with_hook(&svc, &a.id, &hanging.url);
    let wf_b = workflow_with_hook(&svc, &b.id, &fast.url);
    // More of A's events than the notifier has delivery slots, then B's.
    for _ in 0..10 {
        svc.admin(&["workflow", "test-webhook", wf_a["id"].as_str().unwrap()]);
    }
    hanging.wait_for(1, WAIT).await;
    let sent: Vec<String> = (0..3)
        .map(|_| {
            svc.admin(&["workflow", "test-webhook", wf_b["id"].as_str().unwrap()])["eventId"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let got = fast.wait_for(sent.len(), WAIT).await;
    let held = hanging.held();
    assert_eq!(held.ended, 0, "B's events all arrived while A's requests were still open: {held:?}");
    assert!(
        held.open >= 1 && held.max_open <= 2,
        "A's destination holds at most its share: {held:?}"
    );
    let mut ids: Vec<String> = got.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    let mut sent = sent;
    sent.sort();
    assert_eq!(ids, sent);

    // Released, A's receiver gets every event it was sent.
    hanging.release();
    support::eventually(Duration::from_secs(90), "A's events are all delivered", || async {
        let list = svc.admin(&["webhook", "list", "--company", &a.id]);
        let events = list["data"].as_array().unwrap();
        events.len() == 10 && events.iter().all(|e| e["status"] == "delivered")
    })
    .await;
}
