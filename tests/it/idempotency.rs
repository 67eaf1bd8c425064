//! `Idempotency-Key` on the API's POSTs (`API.md`, Idempotency), through the real binary: a retry
//! replays the first answer and does nothing twice, another request with the key is refused, a
//! request still in flight holds its key, and keys of different companies never meet.

use crate::support;

use serde_json::{json, Value};
use support::Service;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// POST `body` to `path` with `key` as Idempotency-Key: status, `Idempotent-Replayed`, body.
async fn post_with_key(svc: &Service, api_key: &str, path: &str, key: &str, body: &Value) -> (u16, Option<String>, Value) {
    let response = svc
        .http
        .post(svc.url(path))
        .bearer_auth(api_key)
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, replayed, response.json().await.unwrap_or(Value::Null))
}

/// POST without a body to `path` with `key` as Idempotency-Key: status and `Idempotent-Replayed`.
async fn post_without_body(svc: &Service, api_key: &str, path: &str, key: &str) -> (u16, Option<String>) {
    let response = svc
        .http
        .post(svc.url(path))
        .bearer_auth(api_key)
        .header("Idempotency-Key", key)
        .send()
        .await
        .unwrap();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), replayed)
}

#[tokio::test]
async fn a_retry_replays_the_first_answer_and_creates_nothing_twice() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = svc.admin(&["workflow", "create", "--company", &co.id, "--name", "KYC", "--category", "identite"]);
    let request = json!({ "workflowId": wf["id"], "externalRef": "dossier-7" });

    let (s, replayed, first) = post_with_key(&svc, &co.key, "/api/v1/verifications", "create-dossier-7", &request).await;
    assert_eq!((s, replayed), (201, None), "{first}");
    let (s, replayed, again) = post_with_key(&svc, &co.key, "/api/v1/verifications", "create-dossier-7", &request).await;
    assert_eq!((s, replayed.as_deref()), (201, Some("true")));
    assert_eq!(again, first, "the same session, link included");

    // The same key with another body, or on another path, is refused and does nothing.
    let other = json!({ "workflowId": wf["id"], "externalRef": "dossier-8" });
    let (s, _, refused) = post_with_key(&svc, &co.key, "/api/v1/verifications", "create-dossier-7", &other).await;
    assert_eq!((s, refused["error"].as_str()), (422, Some("idempotency_key_reused")));
    let (s, _, refused) = post_with_key(&svc, &co.key, "/api/v1/batches", "create-dossier-7", &json!({})).await;
    assert_eq!((s, refused["error"].as_str()), (422, Some("idempotency_key_reused")));

    // A batch opened twice with one key is one batch (the fourth would be refused otherwise).
    for _ in 0..5 {
        let (s, _, batch) = post_with_key(&svc, &co.key, "/api/v1/batches", "open-batch-1", &json!({})).await;
        assert_eq!(s, 201, "{batch}");
    }
    let (_, batches) = svc.get(&co.key, "/api/v1/batches").await;
    assert_eq!(batches["data"].as_array().unwrap().len(), 1, "{batches}");

    // A request without a body (a submit) is remembered too.
    let batch = ours_batch(&svc, &co.key).await;
    let submit = format!("/api/v1/batches/{batch}/submit");
    svc.deposit(&co.key, &batch, "identite", &support::png(64, 1)).await;
    let first = post_without_body(&svc, &co.key, &submit, "submit-1").await;
    assert_eq!(first.0, 200);
    let again = post_without_body(&svc, &co.key, &submit, "submit-1").await;
    assert_eq!(again, (200, Some("true".to_owned())));

    // Another company's identical key is its own.
    let other_co = svc.company();
    let (s, replayed, theirs) = post_with_key(&svc, &other_co.key, "/api/v1/batches", "open-batch-1", &json!({})).await;
    assert_eq!((s, replayed), (201, None), "{theirs}");
    let (_, ours) = svc.get(&co.key, "/api/v1/batches").await;
    assert_ne!(theirs["id"], ours["data"][0]["id"]);

    // Without a key nothing is remembered: two requests, two sessions.
    let (_, a) = svc.post(&co.key, "/api/v1/verifications", request.clone()).await;
    let (_, b) = svc.post(&co.key, "/api/v1/verifications", request).await;
    assert_ne!(a["id"], b["id"]);
}

async fn ours_batch(svc: &Service, key: &str) -> String {
    let (_, batches) = svc.get(key, "/api/v1/batches").await;
    batches["data"][0]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_malformed_key_is_refused_and_a_failed_request_is_not_remembered() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    for key in ["", &"k".repeat(256)] {
        let (s, _, refused) = post_with_key(&svc, &co.key, "/api/v1/batches", key, &json!({})).await;
        assert_eq!((s, refused["field"].as_str()), (400, Some("Idempotency-Key")), "{key:?}: {refused}");
    }
    // A wrong API key answers 401 before any key is claimed.
    let (s, _, refused) = post_with_key(
        &svc,
        "sk_live_0000000000000000000000000000000000000000",
        "/api/v1/batches",
        "k",
        &json!({}),
    )
    .await;
    assert_eq!((s, refused["error"].as_str()), (401, Some("invalid_api_key")));
    // A refusal answered from the request is replayed like a success (Stripe's semantics).
    let unknown = json!({ "workflowId": "WFL-20260101-000000000000" });
    let (s, _, first) = post_with_key(&svc, &co.key, "/api/v1/verifications", "unknown-wf", &unknown).await;
    assert_eq!(s, 404, "{first}");
    let (s, replayed, _) = post_with_key(&svc, &co.key, "/api/v1/verifications", "unknown-wf", &unknown).await;
    assert_eq!((s, replayed.as_deref()), (404, Some("true")));
}

#[tokio::test]
async fn a_request_in_flight_holds_its_key() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let body = b"{}";
    let address = svc.base.trim_start_matches("http://").to_owned();
    // The first request's headers arrive, its body does not yet: it holds the key. It asks to be told
    // when its body is wanted (`Expect: 100-continue`): the server reads a body only once the key is
    // claimed, so `100 Continue` says the claim is made.
    let mut slow = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /api/v1/batches HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\nIdempotency-Key: slow-1\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        co.key,
        body.len()
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut interim = [0u8; 25];
    slow.read_exact(&mut interim).await.unwrap();
    assert!(
        interim.starts_with(b"HTTP/1.1 100 Continue"),
        "{}",
        String::from_utf8_lossy(&interim)
    );
    let (s, _, conflict) = post_with_key(&svc, &co.key, "/api/v1/batches", "slow-1", &json!({})).await;
    assert_eq!((s, conflict["error"].as_str()), (409, Some("idempotency_key_in_use")));

    // The first finishes; its answer is then the key's, and a retry gets it.
    slow.write_all(body).await.unwrap();
    let mut answer = String::new();
    slow.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let first: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let (s, replayed, again) = post_with_key(&svc, &co.key, "/api/v1/batches", "slow-1", &json!({})).await;
    assert_eq!((s, replayed.as_deref()), (201, Some("true")));
    assert_eq!(again["id"], first["id"]);
}

#[tokio::test]
async fn a_request_whose_client_hangs_up_still_finishes_and_its_retry_gets_the_answer() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    // A deposit of a few megabytes, sent whole, and the connection closed at once: the client was
    // killed, or gave up waiting. The server must still do the work once and remember its answer.
    let body = serde_json::to_vec(&json!({
        "documentCategory": "identite",
        "document": support::b64(&support::png(1200, 3)),
    }))
    .unwrap();
    let address = svc.base.trim_start_matches("http://").to_owned();
    let path = format!("/api/v1/batches/{batch}/documents");
    let mut gone = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\nIdempotency-Key: hung-up-1\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        co.key,
        body.len()
    );
    gone.write_all(head.as_bytes()).await.unwrap();
    gone.write_all(&body).await.unwrap();
    drop(gone);

    // The retry waits while the first is in flight, then gets its answer: never a second deposit.
    let parsed: Value = serde_json::from_slice(&body).unwrap();
    let started = std::time::Instant::now();
    let (status, replayed, answer) = loop {
        let (status, replayed, answer) = post_with_key(&svc, &co.key, &path, "hung-up-1", &parsed).await;
        if status != 409 || started.elapsed() > std::time::Duration::from_secs(20) {
            break (status, replayed, answer);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!((status, replayed.as_deref()), (201, Some("true")), "{answer}");
    assert_eq!(answer["position"], 1, "{answer}");
    let (_, read) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(read["counts"]["total"], 1, "deposited once: {read}");
}
