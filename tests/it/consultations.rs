//! Reading results: the keyset cursor over several pages, the six filters, images, the
//! certificate, retention, and company isolation (another company's ids answer 404 everywhere).

use crate::support;

use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;
use support::Service;

/// A processed batch of `n` identity documents (externalRef `doc-<i>`) plus one administrative one.
async fn processed_batch(svc: &Service, key: &str, n: usize) -> (String, Value) {
    let batch = svc.open_batch(key, None).await;
    for i in 0..n {
        let body = json!({ "documentCategory": "identite", "document": support::b64(&support::png(8, i as u8)), "externalRef": format!("doc-{i}") });
        assert_eq!(svc.post(key, &format!("/api/v1/batches/{batch}/documents"), body).await.0, 201);
    }
    let admin = json!({ "documentCategory": "administratif", "document": support::b64(&support::pdf(1)), "externalRef": "admin-doc" });
    assert_eq!(svc.post(key, &format!("/api/v1/batches/{batch}/documents"), admin).await.0, 201);
    svc.post(key, &format!("/api/v1/batches/{batch}/submit"), json!(null)).await;
    let done = svc
        .wait_batch(key, &batch, Duration::from_secs(60), |b| b["status"] == "ended")
        .await;
    (batch, done)
}

#[tokio::test]
async fn cursor_walks_every_page_once_and_filters_apply() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let (_, done) = processed_batch(&svc, &co.key, 24).await;
    assert_eq!(done["counts"]["succeeded"], 25);

    let mut seen = Vec::new();
    let mut created = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/consultations?limit=10&cursor={c}"),
            None => "/api/v1/consultations?limit=10".to_owned(),
        };
        let (s, page) = svc.get(&co.key, &path).await;
        assert_eq!(s, 200, "{page}");
        pages += 1;
        for c in page["data"].as_array().unwrap() {
            seen.push(c["id"].as_str().unwrap().to_owned());
            created.push(c["createdAt"].as_str().unwrap().to_owned());
            assert!(
                c.get("images").is_none() && c.get("document").is_none(),
                "no document data in lists"
            );
        }
        // A result recorded while walking does not disturb the pages already handed out.
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 25);
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 25, "no consultation twice");
    // Most recent first.
    assert!(created.windows(2).all(|w| w[0] >= w[1]), "{created:?}");

    let count = |path: String| {
        let svc = &svc;
        let key = co.key.clone();
        async move {
            let (s, b) = svc.get(&key, &path).await;
            assert_eq!(s, 200, "{path}: {b}");
            b["data"].as_array().unwrap().len()
        }
    };
    assert_eq!(count("/api/v1/consultations?limit=100&externalRef=doc-7".into()).await, 1);
    // 24 images of 8 x 8 pixels (far too small to carry a document) and one blank page (nothing to
    // verify): none can be concluded on.
    assert_eq!(count("/api/v1/consultations?limit=100&verdict=suspect".into()).await, 0);
    assert_eq!(count("/api/v1/consultations?limit=100&verdict=analyse_impossible".into()).await, 25);
    assert_eq!(count("/api/v1/consultations?limit=100&verdict=conforme".into()).await, 0);
    assert_eq!(count("/api/v1/consultations?limit=100&decision=refuse".into()).await, 0);
    let workflows = svc.get(&co.key, "/api/v1/workflows").await.1;
    let admin_wf = workflows["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["documentCategory"] == "administratif")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(count(format!("/api/v1/consultations?limit=100&workflowId={admin_wf}")).await, 1);
    assert_eq!(
        count("/api/v1/consultations?limit=100&createdAfter=2000-01-01T00:00:00Z".into()).await,
        25
    );
    assert_eq!(
        count("/api/v1/consultations?limit=100&createdAfter=2999-01-01T00:00:00Z".into()).await,
        0
    );
    let (s, b) = svc.get(&co.key, "/api/v1/consultations?cursor=bm9wZQ").await;
    assert_eq!((s, b["field"].as_str()), (400, Some("cursor")));
}

#[tokio::test]
async fn certificate_is_a_valid_pdf_and_images_are_purged_after_retention() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let (_, done) = processed_batch(&svc, &co.key, 1).await;
    let csl = done["items"][0]["consultationId"].as_str().unwrap().to_owned();

    let r = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{csl}/certificate")))
        .bearer_auth(&co.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/pdf");
    let pdf = r.bytes().await.unwrap();
    let doc = lopdf::Document::load_mem(&pdf).expect("a valid PDF");
    assert_eq!(doc.get_pages().len(), 1);
    let again = svc
        .http
        .get(svc.url(&format!("/api/v1/consultations/{csl}/certificate")))
        .bearer_auth(&co.key)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(pdf, again, "the same consultation gives the same certificate");

    let (s, b) = svc.get(&co.key, &format!("/api/v1/consultations/{csl}/images/verso")).await;
    assert_eq!((s, b["error"].as_str()), (404, Some("not_found")), "no back image was deposited");
    let (s, b) = svc.get(&co.key, &format!("/api/v1/consultations/{csl}/images/face")).await;
    assert_eq!((s, b["field"].as_str()), (400, Some("side")));

    let image = format!("/api/v1/consultations/{csl}/images/recto");
    // Lowering retention says what it would delete, and deletes nothing until confirmed.
    let unconfirmed = svc.admin_raw(&["company", "set", &co.id, "--retention-days", "0"], false);
    assert!(!unconfirmed.status.success(), "a retention that deletes images needs --yes");
    let err = String::from_utf8_lossy(&unconfirmed.stderr);
    let named: u64 = err
        .split("deletes ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(named > 0 && err.contains("--yes"), "the refusal names what would go: {err}");
    assert_eq!(svc.get(&co.key, &image).await.0, 200, "nothing was purged");
    svc.admin(&["company", "set", &co.id, "--retention-days", "0", "--yes"]);
    support::eventually(Duration::from_secs(10), "the image is purged", || async {
        svc.get(&co.key, &image).await.0 == 404
    })
    .await;
    assert_eq!(svc.get(&co.key, &image).await.1["error"], "image_purged");
    // The consultation itself stays.
    assert_eq!(svc.get(&co.key, &format!("/api/v1/consultations/{csl}")).await.0, 200);
}

#[tokio::test]
async fn another_companys_ids_answer_not_found_everywhere() {
    let svc = Service::start(&[]).await;
    let a = svc.company();
    let b = svc.company();
    let (batch, done) = processed_batch(&svc, &a.key, 1).await;
    let csl = done["items"][0]["consultationId"].as_str().unwrap().to_owned();
    let wf = svc.get(&a.key, "/api/v1/workflows").await.1["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, session) = svc.post(&a.key, "/api/v1/verifications", json!({ "workflowId": wf })).await;
    assert_eq!(s, 201);
    let vrf = session["id"].as_str().unwrap();
    let open = svc.open_batch(&a.key, None).await;

    for path in [
        format!("/api/v1/consultations/{csl}"),
        format!("/api/v1/consultations/{csl}/images/recto"),
        format!("/api/v1/consultations/{csl}/certificate"),
        format!("/api/v1/batches/{batch}"),
        format!("/api/v1/verifications/{vrf}"),
    ] {
        let (s, body) = svc.get(&b.key, &path).await;
        assert_eq!((s, body["error"].as_str()), (404, Some("not_found")), "{path}");
    }
    for path in [format!("/api/v1/batches/{open}/submit"), format!("/api/v1/batches/{open}/cancel")] {
        let (s, body) = svc.post(&b.key, &path, json!(null)).await;
        assert_eq!((s, body["error"].as_str()), (404, Some("not_found")), "{path}");
    }
    let (s, body) = svc.deposit(&b.key, &open, "identite", &support::png(8, 1)).await;
    assert_eq!((s, body["error"].as_str()), (404, Some("not_found")));
    let (s, body) = svc.post(&b.key, "/api/v1/verifications", json!({ "workflowId": wf })).await;
    assert_eq!((s, body["error"].as_str()), (404, Some("not_found")));
    assert_eq!(svc.get(&b.key, "/api/v1/consultations").await.1["data"], json!([]));
    assert_eq!(svc.get(&b.key, "/api/v1/batches").await.1["data"], json!([]));
    assert!(svc.get(&b.key, "/api/v1/workflows").await.1["data"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["id"] != wf.as_str()));
    // Company A's batch is untouched.
    assert_eq!(svc.get(&a.key, &format!("/api/v1/batches/{open}")).await.1["status"], "open");
}

/// Images and certificates are client-supplied or client-derived files: a browser that opens a
/// download link must save them, never sniff or render them in the API's origin.
#[tokio::test]
async fn downloads_are_sandboxed_attachments_with_a_safe_name() {
    let svc = Service::start(&[]).await;
    let co = svc.company();
    let (_, done) = processed_batch(&svc, &co.key, 1).await;
    let mut seen = HashSet::new();
    for item in done["items"].as_array().unwrap() {
        let csl = item["consultationId"].as_str().unwrap();
        let (_, consultation) = svc.get(&co.key, &format!("/api/v1/consultations/{csl}")).await;
        let category = consultation["documentCategory"].as_str().unwrap().to_owned();
        let extension = if category == "identite" { "png" } else { "pdf" };
        for (path, filename) in [
            (
                format!("/api/v1/consultations/{csl}/images/recto"),
                format!("{csl}-recto.{extension}"),
            ),
            (format!("/api/v1/consultations/{csl}/certificate"), format!("{csl}-certificate.pdf")),
        ] {
            let r = svc.http.get(svc.url(&path)).bearer_auth(&co.key).send().await.unwrap();
            assert_eq!(r.status(), 200, "{path}");
            let h = r.headers();
            let header = |name: &str| h.get(name).map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"), "{path}");
            assert_eq!(header("content-security-policy").as_deref(), Some("sandbox"), "{path}");
            assert_eq!(
                header("content-disposition"),
                Some(format!("attachment; filename=\"{filename}\"")),
                "{path}"
            );
        }
        seen.insert(category);
    }
    assert_eq!(seen.len(), 2, "an identity photo and an administrative PDF: {seen:?}");
}
