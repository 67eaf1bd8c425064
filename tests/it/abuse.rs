//! Abuse from one address: wrong API keys are throttled per client address, the journey page is
//! rate-limited and costs no write for a link that does not exist, and `X-Forwarded-For` names the
//! client only when a trusted proxy sent it (SCEAU_TRUSTED_PROXIES).

use crate::support;

use serde_json::json;
use std::net::IpAddr;
use std::time::Duration;
use support::{journey, Service};

/// A well-formed key that no company holds.
fn wrong_key(good: &str) -> String {
    let (head, last) = good.split_at(good.len() - 1);
    format!("{head}{}", if last == "A" { "B" } else { "A" })
}

/// A client whose connections come from `local` (any 127.0.0.0/8 address reaches the service).
fn client_from(local: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(local.parse::<IpAddr>().expect("an address"))
        .build()
        .expect("a client")
}

/// `GET /api/v1/batches` with `key`, from `client`, forwarded for `forwarded` when given.
async fn list_batches(svc: &Service, client: &reqwest::Client, key: &str, forwarded: Option<&str>) -> reqwest::Response {
    let mut request = client.get(svc.url("/api/v1/batches")).bearer_auth(key);
    if let Some(chain) = forwarded {
        request = request.header("x-forwarded-for", chain);
    }
    request.send().await.expect("GET /api/v1/batches")
}

/// Sends wrong keys until the address is throttled; returns how many were answered 401 first.
async fn exhaust_with_wrong_keys(svc: &Service, client: &reqwest::Client, good: &str, forwarded: Option<&str>) -> usize {
    let wrong = wrong_key(good);
    for sent in 0..500 {
        let r = list_batches(svc, client, &wrong, forwarded).await;
        match r.status().as_u16() {
            401 => continue,
            429 => return sent,
            other => panic!("a wrong key answered {other}"),
        }
    }
    panic!("500 wrong keys from one address were never throttled");
}

async fn assert_throttled(r: reqwest::Response) {
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "Retry-After: {wait}");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"], "rate_limited", "{body}");
}

/// After 20 wrong keys, the address gets 429 even with a good key: a throttle that let good keys
/// through would still tell a guesser which guess was right. Other addresses are not affected.
#[tokio::test]
async fn wrong_api_keys_throttle_their_address_whatever_the_key() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let here = client_from("127.0.0.1");
    assert_eq!(list_batches(&svc, &here, &co.key, None).await.status(), 200);

    let failures = exhaust_with_wrong_keys(&svc, &here, &co.key, None).await;
    assert!(failures >= 20, "only {failures} wrong keys before the throttle");
    assert_throttled(list_batches(&svc, &here, &co.key, None).await).await;
    // Another address is untouched, and its good requests never count as failures.
    let there = client_from("127.0.0.2");
    for _ in 0..30 {
        assert_eq!(list_batches(&svc, &there, &co.key, None).await.status(), 200);
    }
    assert_eq!(list_batches(&svc, &there, &wrong_key(&co.key), None).await.status(), 401);
}

/// From an untrusted peer, `X-Forwarded-For` is ignored: naming another address changes nothing.
#[tokio::test]
async fn forwarded_for_is_ignored_from_an_untrusted_peer() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let here = client_from("127.0.0.1");
    exhaust_with_wrong_keys(&svc, &here, &co.key, Some("198.51.100.1")).await;
    assert_throttled(list_batches(&svc, &here, &co.key, Some("198.51.100.2")).await).await;
}

/// Behind a trusted proxy, two forwarded clients get separate limits, the right-most address is
/// the one that counts (a client cannot prepend its way out), and the audit log records it.
#[tokio::test]
async fn forwarded_for_names_the_client_behind_a_trusted_proxy() {
    let svc = Service::start(&[("SCEAU_TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    let co = svc.company();
    let proxy = client_from("127.0.0.1");
    let failures = exhaust_with_wrong_keys(&svc, &proxy, &co.key, Some("198.51.100.1")).await;
    assert!(failures >= 20, "{failures}");
    assert_throttled(list_batches(&svc, &proxy, &co.key, Some("198.51.100.1")).await).await;
    assert_throttled(list_batches(&svc, &proxy, &co.key, Some("198.51.100.2, 198.51.100.1")).await).await;
    assert_eq!(list_batches(&svc, &proxy, &co.key, Some("198.51.100.2")).await.status(), 200);
    assert_eq!(
        list_batches(&svc, &proxy, &co.key, Some("198.51.100.1, 198.51.100.2"))
            .await
            .status(),
        200
    );
    // An untrusted peer's header is still ignored: 127.0.0.2 is its own client.
    let other = client_from("127.0.0.2");
    assert_eq!(list_batches(&svc, &other, &co.key, Some("198.51.100.1")).await.status(), 200);

    // The audit log records the forwarded client.
    let batch = svc.open_batch(&co.key, None).await;
    let (s, body) = svc.deposit(&co.key, &batch, "identite", &support::png(48, 3)).await;
    assert_eq!(s, 201, "{body}");
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    let csl = done["items"][0]["consultationId"].as_str().expect("a consultation").to_owned();
    let image = proxy
        .get(svc.url(&format!("/api/v1/consultations/{csl}/images/recto")))
        .bearer_auth(&co.key)
        .header("x-forwarded-for", "203.0.113.77")
        .send()
        .await
        .expect("the image");
    assert_eq!(image.status(), 200);
    let audit = svc.admin(&["audit", "--company", &co.id]);
    assert_eq!(audit["data"][0]["action"], "image.download", "{audit}");
    assert_eq!(audit["data"][0]["ip"], "203.0.113.77", "{audit}");
}

/// The journey page is limited per address: a flood of link guesses ends in 429 pages with
/// Retry-After, and other addresses still get their pages.
#[tokio::test]
async fn the_journey_page_is_rate_limited_per_address() {
    let svc = Service::start(&[]).await;
    let here = client_from("127.0.0.1");
    let mut answers = Vec::new();
    for i in 0..400 {
        let r = here
            .get(svc.url(&format!("/v/NoSuchToken{i:04}")))
            .send()
            .await
            .expect("GET the page");
        let status = r.status().as_u16();
        if status == 429 {
            let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
            assert!((1..=60).contains(&wait), "Retry-After: {wait}");
            assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
            answers.push(status);
            break;
        }
        answers.push(status);
    }
    assert_eq!(answers.last(), Some(&429), "400 guesses were never limited");
    assert!(answers[..answers.len() - 1].iter().all(|s| *s == 404), "{answers:?}");
    assert!(answers.len() > 20, "limited after {} pages", answers.len());
    // The session endpoints share the address's allowance: spent, it lets through at most what
    // refilled meanwhile (one request each 200 ms), where an allowance of their own would let a
    // burst of 50 through.
    let mut polls = Vec::new();
    for _ in 0..5 {
        let status = here.get(svc.url("/v/NoSuchToken/status")).send().await.unwrap().status().as_u16();
        polls.push(status);
        if status == 429 {
            break;
        }
    }
    assert_eq!(polls.last(), Some(&429), "{polls:?}");
    let there = client_from("127.0.0.2");
    let page = there.get(svc.url("/v/NoSuchToken0000")).send().await.unwrap();
    assert_eq!(page.status(), 404);
}

/// Opening an unknown link, or reloading a started session's page, takes no write: while another
/// process holds the database's write lock, both pages still answer (a write would wait for the
/// lock and fail).
#[tokio::test]
async fn the_journey_page_writes_only_to_start_a_real_session() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let workflow = journey::workflow(&svc, &co, "administratif", None);
    let session = journey::session(&svc, &co, &workflow, "no-write").await;
    let (s, _, csrf) = journey::open(&svc, &session.url, None).await;
    assert_eq!(s, 200);

    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).expect("open the database");
    db.execute_batch("BEGIN IMMEDIATE").expect("take the write lock");
    let unknown = svc.http.get(svc.url("/v/NoSuchTokenAtAll")).send().await.unwrap();
    let reloaded = journey::open(&svc, &session.url, None).await;
    db.execute_batch("ROLLBACK").expect("release the write lock");
    assert_eq!(unknown.status(), 404, "{}", unknown.text().await.unwrap_or_default());
    assert_eq!(reloaded.0, 200, "{}", reloaded.1);
    assert_eq!(reloaded.2, csrf, "the reloaded page keeps its CSRF token");
}
