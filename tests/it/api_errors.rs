//! One test per error code of API.md, on the real service: status, code, and that a refused
//! request leaves nothing behind.

use crate::support;

use serde_json::{json, Value};
use std::time::Duration;
use support::Service;

fn assert_error(status: u16, body: &Value, want_status: u16, code: &str) {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["error"], code, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
}

async fn batch_count(svc: &Service, key: &str) -> usize {
    svc.get(key, "/api/v1/batches").await.1["data"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn invalid_request() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let raw = svc
        .http
        .post(svc.url("/api/v1/batches"))
        .bearer_auth(&co.key)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let status = raw.status().as_u16();
    assert_error(status, &raw.json().await.unwrap(), 400, "invalid_request");
    assert_eq!(batch_count(&svc, &co.key).await, 0);

    let (s, b) = svc.get(&co.key, "/api/v1/consultations?limit=101").await;
    assert_error(s, &b, 400, "invalid_request");
    assert_eq!(b["field"], "limit");
    let (s, b) = svc.get(&co.key, "/api/v1/consultations?verdict=parfait").await;
    assert_error(s, &b, 400, "invalid_request");
    assert_eq!(b["field"], "verdict");
    let (s, b) = svc.get(&co.key, "/api/v1/consultations?createdAfter=yesterday").await;
    assert_eq!((s, b["field"].as_str()), (400, Some("createdAfter")));
    let (s, b) = svc.get(&co.key, "/api/v1/batches?limit=0").await;
    assert_eq!((s, b["field"].as_str()), (400, Some("limit")));
    let (s, b) = svc
        .post(&co.key, "/api/v1/batches", json!({ "externalRef": "x".repeat(256) }))
        .await;
    assert_eq!((s, b["field"].as_str()), (400, Some("externalRef")));

    // Unknown postal code and CEDEX code: refused before anything is stored.
    let batch = svc.open_batch(&co.key, None).await;
    for code in ["99999", "75700", "7500", "7500a"] {
        let (s, b) = svc
            .post(
                &co.key,
                &format!("/api/v1/batches/{batch}/documents"),
                json!({ "documentCategory": "identite", "document": support::b64(&support::png(8, 1)), "agencyPostalCode": code }),
            )
            .await;
        assert_error(s, &b, 400, "invalid_request");
        assert_eq!(b["field"], "agencyPostalCode");
    }
    let (_, detail) = svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await;
    assert_eq!(detail["counts"]["total"], 0);
    let (s, b) = svc
        .post(
            &co.key,
            &format!("/api/v1/batches/{batch}/documents"),
            json!({ "documentCategory": "passport", "document": "AAAA" }),
        )
        .await;
    assert_eq!((s, b["field"].as_str()), (400, Some("documentCategory")));
    let (s, b) = svc
        .post(
            &co.key,
            "/api/v1/verifications",
            json!({ "workflowId": "WFL-20260101-000000000000", "expiresInMinutes": 4 }),
        )
        .await;
    assert_eq!((s, b["field"].as_str()), (400, Some("expiresInMinutes")));
    let (s, b) = svc.post(&co.key, "/api/v1/verifications", json!({})).await;
    assert_eq!((s, b["field"].as_str()), (400, Some("workflowId")));
}

#[tokio::test]
async fn invalid_document() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let path = format!("/api/v1/batches/{batch}/documents");
    let cases = [
        json!({ "documentCategory": "identite", "document": "not base64 at all!" }),
        json!({ "documentCategory": "identite", "document": support::b64(&support::pdf(1)) }),
        json!({ "documentCategory": "administratif", "document": support::b64(&support::pdf(2)) }),
        json!({ "documentCategory": "identite", "document": support::b64(b"just some text renamed .jpg") }),
        json!({ "documentCategory": "administratif", "document": support::b64(&support::pdf(1)), "documentVerso": support::b64(&support::pdf(1)) }),
    ];
    for case in cases {
        let (s, b) = svc.post(&co.key, &path, case).await;
        assert_error(s, &b, 400, "invalid_document");
    }
    assert_eq!(svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await.1["counts"]["total"], 0);
    // Data-URL prefix and line breaks are tolerated.
    let folded: String = support::b64(&support::png(16, 2))
        .as_bytes()
        .chunks(76)
        .map(|c| format!("{}\r\n", String::from_utf8_lossy(c)))
        .collect();
    let (s, b) = svc
        .post(
            &co.key,
            &path,
            json!({ "documentCategory": "identite", "document": format!("data:image/png;base64,{folded}") }),
        )
        .await;
    assert_eq!(s, 201, "{b}");
}

#[tokio::test]
async fn invalid_api_key_and_read_only_key() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let none = svc.http.get(svc.url("/api/v1/workflows")).send().await.unwrap();
    let s = none.status().as_u16();
    assert_error(s, &none.json().await.unwrap(), 401, "invalid_api_key");
    for key in [
        "garbage",
        "sk_live_0000000000000000000000000000000000000000",
        &co.key[..co.key.len() - 1],
    ] {
        let (s, b) = svc.get(key, "/api/v1/workflows").await;
        assert_error(s, &b, 401, "invalid_api_key");
    }
    let read_only = svc.admin(&["key", "create", "--company", &co.id, "--read-only"]);
    let rk = read_only["key"].as_str().unwrap();
    assert!(rk.starts_with("rk_live_"));
    assert_eq!(svc.get(rk, "/api/v1/workflows").await.0, 200);
    let (s, b) = svc.post(rk, "/api/v1/batches", json!({})).await;
    assert_error(s, &b, 403, "read_only_key");
    assert_eq!(batch_count(&svc, rk).await, 0);

    svc.admin(&["key", "revoke", &co.key[..16]]);
    let (s, b) = svc.get(&co.key, "/api/v1/workflows").await;
    assert_error(s, &b, 401, "invalid_api_key");
}

#[tokio::test]
async fn ia_desactivee_at_deposit_and_at_processing() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let (s, _) = svc.deposit(&co.key, &batch, "administratif", &support::pdf(1)).await;
    assert_eq!(s, 201);
    svc.admin(&["company", "set", &co.id, "--ai", "off"]);
    let (s, b) = svc.deposit(&co.key, &batch, "administratif", &support::pdf(1)).await;
    assert_error(s, &b, 403, "ia_desactivee");
    // Identity documents are still accepted.
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &support::png(8, 3)).await.0, 201);
    // The document deposited before the switch ends errored without analysis.
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["status"] == "ended")
        .await;
    assert_eq!(done["items"][0]["status"], "errored");
    assert_eq!(done["items"][0]["error"], "ia_desactivee");
    assert_eq!(done["items"][1]["status"], "succeeded");
}

#[tokio::test]
async fn browser_request_forbidden_and_preflight() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let wf = svc.get(&co.key, "/api/v1/workflows").await.1["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = svc
        .http
        .post(svc.url("/api/v1/verifications"))
        .bearer_auth(&co.key)
        .header("origin", "https://evil.example")
        .json(&json!({ "workflowId": wf }))
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    assert_error(s, &r.json().await.unwrap(), 403, "browser_request_forbidden");
    let pre = svc
        .http
        .request(reqwest::Method::OPTIONS, svc.url("/api/v1/verifications"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status(), 403);
    assert!(pre.headers().keys().all(|h| !h.as_str().starts_with("access-control-")));
    assert!(pre.headers().contains_key("x-request-id"));
}

#[tokio::test]
async fn not_found() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    for path in [
        "/api/v1/consultations/CSL-20260101-000000000000",
        "/api/v1/consultations/nonsense",
        "/api/v1/consultations/CSL-20260101-000000000000/certificate",
        "/api/v1/consultations/CSL-20260101-000000000000/images/recto",
        "/api/v1/batches/BAT-00000000-00000000",
        "/api/v1/verifications/VRF-20260101-000000000000",
    ] {
        let (s, b) = svc.get(&co.key, path).await;
        assert_error(s, &b, 404, "not_found");
    }
    let (s, b) = svc
        .post(
            &co.key,
            "/api/v1/verifications",
            json!({ "workflowId": "WFL-20260101-000000000000" }),
        )
        .await;
    assert_error(s, &b, 404, "not_found");
    let (s, b) = svc.post(&co.key, "/api/v1/batches/BAT-00000000-00000000/submit", json!(null)).await;
    assert_error(s, &b, 404, "not_found");
}

#[tokio::test]
async fn invalid_state_and_batch_empty() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let (s, b) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_error(s, &b, 409, "batch_empty");
    svc.deposit(&co.key, &batch, "identite", &support::png(8, 4)).await;
    assert_eq!(
        svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await.0,
        200
    );
    let (s, b) = svc.deposit(&co.key, &batch, "identite", &support::png(8, 5)).await;
    assert_error(s, &b, 409, "invalid_state");
    let (s, b) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    assert_error(s, &b, 409, "invalid_state");
    svc.wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["status"] == "ended")
        .await;
    let (s, b) = svc.post(&co.key, &format!("/api/v1/batches/{batch}/cancel"), json!(null)).await;
    assert_error(s, &b, 409, "invalid_state");

    let other = svc.open_batch(&co.key, None).await;
    let (s, canceled) = svc.post(&co.key, &format!("/api/v1/batches/{other}/cancel"), json!(null)).await;
    assert_eq!((s, canceled["status"].as_str()), (200, Some("canceled")));
    let (s, b) = svc.post(&co.key, &format!("/api/v1/batches/{other}/cancel"), json!(null)).await;
    assert_error(s, &b, 409, "invalid_state");
}

#[tokio::test]
async fn document_too_large_and_payload_too_large() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let mut big = support::png(8, 6);
    big.resize(10_000_001, 0);
    let (s, b) = svc.deposit(&co.key, &batch, "identite", &big).await;
    assert_error(s, &b, 413, "document_too_large");
    big.truncate(9_999_000);
    // Exactly under the limit is accepted (a PNG header followed by padding: decodes badly, later).
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &big).await.0, 201);

    let body = format!("{{\"documentCategory\":\"identite\",\"document\":\"{}\"}}", "A".repeat(30_000_100));
    let r = svc
        .http
        .post(svc.url(&format!("/api/v1/batches/{batch}/documents")))
        .bearer_auth(&co.key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    assert_error(s, &r.json().await.unwrap(), 413, "payload_too_large");
}

#[tokio::test]
async fn too_many_open_batches() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    for _ in 0..3 {
        svc.open_batch(&co.key, None).await;
    }
    let (s, b) = svc.post(&co.key, "/api/v1/batches", json!({})).await;
    assert_error(s, &b, 429, "too_many_open_batches");
    assert_eq!(batch_count(&svc, &co.key).await, 3);
}

#[tokio::test]
async fn batch_full_and_document_quota_exceeded() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let doc = support::png(4, 9);
    let mut batches = Vec::new();
    for _ in 0..2 {
        let batch = svc.open_batch(&co.key, None).await;
        for i in 0..200 {
            let (s, b) = svc.deposit(&co.key, &batch, "identite", &doc).await;
            assert_eq!((s, b["position"].as_u64()), (201, Some(i + 1)), "{b}");
        }
        let (s, b) = svc.deposit(&co.key, &batch, "identite", &doc).await;
        assert_error(s, &b, 429, "batch_full");
        batches.push(batch);
    }
    let third = svc.open_batch(&co.key, None).await;
    let (s, b) = svc.deposit(&co.key, &third, "identite", &doc).await;
    assert_error(s, &b, 429, "document_quota_exceeded");
    // Canceled documents release their files and stop counting.
    svc.post(&co.key, &format!("/api/v1/batches/{}/cancel", batches[0]), json!(null))
        .await;
    support::eventually(Duration::from_secs(15), "canceled documents stop counting", || async {
        svc.deposit(&co.key, &third, "identite", &doc).await.0 == 201
    })
    .await;
}

#[tokio::test]
async fn volume_quota_exceeded() {
    let doc = support::png(40, 1);
    let limit = (doc.len() * 5 / 2).to_string();
    let svc = Service::start(&[("SCEAU_VOLUME_LIMIT_BYTES", &limit)]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &doc).await.0, 201);
    assert_eq!(svc.deposit(&co.key, &batch, "identite", &doc).await.0, 201);
    let (s, b) = svc.deposit(&co.key, &batch, "identite", &doc).await;
    assert_error(s, &b, 429, "volume_quota_exceeded");
    assert_eq!(svc.get(&co.key, &format!("/api/v1/batches/{batch}")).await.1["counts"]["total"], 2);
}

#[tokio::test]
async fn rate_limited() {
    let svc = Service::start(&[("SCEAU_REALTIME_RATE_PER_MINUTE", "6")]).await;
    let co = svc.company();
    let wf = svc.get(&co.key, "/api/v1/workflows").await.1["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut limited = None;
    for _ in 0..10 {
        let r = svc
            .http
            .post(svc.url("/api/v1/verifications"))
            .bearer_auth(&co.key)
            .json(&json!({ "workflowId": wf }))
            .send()
            .await
            .unwrap();
        if r.status() == 429 {
            let retry: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
            limited = Some((retry, r.json::<Value>().await.unwrap()));
            break;
        }
        assert_eq!(r.status(), 201);
    }
    let (retry, body) = limited.expect("the real-time rate limit never applied");
    assert!(retry >= 1);
    assert_error(429, &body, 429, "rate_limited");
    // Batch operations do not consume the real-time limit.
    assert_eq!(svc.post(&co.key, "/api/v1/batches", json!({})).await.0, 201);
}

#[tokio::test]
async fn internal_error_leaks_nothing() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    svc.deposit(&co.key, &batch, "identite", &support::png(16, 3)).await;
    svc.post(&co.key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(&co.key, &batch, Duration::from_secs(30), |b| b["status"] == "ended")
        .await;
    let csl = done["items"][0]["consultationId"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Corrupt the stored image: decryption fails, the client gets a bare 500.
    let db = rusqlite::Connection::open(svc.data_dir().join("sceau.db")).unwrap();
    let blob: String = db
        .query_row("SELECT blob FROM consultation_images WHERE consultation_id = ?1", [&csl], |r| {
            r.get(0)
        })
        .unwrap();
    let path = svc.blob_path(&blob);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let r = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{csl}/images/recto")))
        .bearer_auth(&co.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    let id = r.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: Value = r.json().await.unwrap();
    assert_error(500, &body, 500, "internal_error");
    assert!(!body.to_string().contains("blob") && !body.to_string().contains("authentication"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(svc.log().contains(&id), "the error is logged with its request id: {}", svc.log());
}

/// Where serde and JSON Schema disagree, the API answers as its schema says: a body is an
/// object (never an array of the fields in order), an integer may be written `355.0`, and an
/// empty `cursor` is the first page.
#[tokio::test]
async fn bodies_and_numbers_as_the_schema_says() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let raw = |path: &str, body: &str| {
        svc.http
            .post(svc.url(path))
            .bearer_auth(&co.key)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
    };
    let refused = raw("/api/v1/batches", r#"["an array of the fields in order", null]"#)
        .await
        .unwrap();
    let status = refused.status().as_u16();
    assert_error(status, &refused.json().await.unwrap(), 400, "invalid_request");
    assert_eq!(batch_count(&svc, &co.key).await, 0, "nothing was created");
    let batch = svc.open_batch(&co.key, None).await;
    let body = format!(r#"  ["identite", "{}", null, null, null]"#, support::b64(&support::png(8, 1)));
    let refused = raw(&format!("/api/v1/batches/{batch}/documents"), &body).await.unwrap();
    let status = refused.status().as_u16();
    assert_error(status, &refused.json().await.unwrap(), 400, "invalid_request");

    let workflow = support::journey::workflow(&svc, &co, "identite", None);
    let (s, b) = svc
        .post(
            &co.key,
            "/api/v1/verifications",
            json!({ "workflowId": workflow, "expiresInMinutes": 355.0 }),
        )
        .await;
    assert_eq!(s, 201, "355.0 is an integer to JSON Schema: {b}");
    let (s, b) = svc
        .post(
            &co.key,
            "/api/v1/verifications",
            json!({ "workflowId": workflow, "expiresInMinutes": 355.5 }),
        )
        .await;
    assert_eq!(s, 400, "{b}");

    let (s, b) = svc.get(&co.key, "/api/v1/consultations?cursor=").await;
    assert_eq!(s, 200, "an empty cursor is the first page: {b}");
}
