//! Deposits through the gateway in this process (`spawn_app`): what is accepted is encrypted and
//! recorded once; what is refused answers its code and leaves nothing behind, neither a file nor
//! a document.

use crate::test_support::{spawn_app, TestApp};
use base64::Engine as _;
use common::ids::BatchId;
use common::store::batches;
use common::test_fixtures::files_under;
use serde_json::{json, Value};

/// A small PNG photo, which the identity category accepts.
fn png() -> Vec<u8> {
    common::test_fixtures::bombs::checkerboard_png(16)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

async fn open_batch(app: &TestApp) -> String {
    let (status, batch) = app.call("POST", "/api/v1/batches", Some(&json!({ "externalRef": "lot-1" }))).await;
    assert_eq!(status, 201, "{batch}");
    batch["id"].as_str().expect("batch id").to_owned()
}

async fn documents_in(app: &TestApp, batch: &str) -> u32 {
    let (company, id) = (app.company.clone(), BatchId::parse(batch).expect("batch id"));
    let batch = app.store.read(move |c| batches::get(c, &company, &id)).await.expect("batch");
    batch.counts.total
}

#[tokio::test]
async fn a_deposit_is_encrypted_and_recorded_once() {
    let app = spawn_app().await;
    let batch = open_batch(&app).await;
    let file = png();
    let path = format!("/api/v1/batches/{batch}/documents");
    let (status, deposited) = app
        .call(
            "POST",
            &path,
            Some(&json!({ "documentCategory": "identite", "document": b64(&file) })),
        )
        .await;
    assert_eq!((status, deposited["position"].as_u64()), (201, Some(1)), "{deposited}");
    assert_eq!(documents_in(&app, &batch).await, 1);
    let blobs = app.store.dir().join("blobs");
    assert_eq!(files_under(&blobs).len(), 1);
    let stored: Vec<u8> = files_under(&blobs)
        .into_iter()
        .flat_map(|p| std::fs::read(p).expect("blob"))
        .collect();
    assert!(!stored.windows(8).any(|w| w == &file[..8]), "the file is stored encrypted");
}

#[tokio::test]
async fn refused_deposits_leave_nothing_behind() {
    let app = spawn_app().await;
    let batch = open_batch(&app).await;
    let path = format!("/api/v1/batches/{batch}/documents");
    let cases: [(Value, u16, &str); 5] = [
        (
            json!({ "documentCategory": "identite", "document": "not base64 !" }),
            400,
            "invalid_document",
        ),
        (
            json!({ "documentCategory": "identite", "document": b64(b"%PDF-1.4 a PDF is not a photo") }),
            400,
            "invalid_document",
        ),
        (
            json!({ "documentCategory": "administratif", "document": b64(&png()), "documentVerso": b64(&png()) }),
            400,
            "invalid_document",
        ),
        (
            json!({ "documentCategory": "identite", "document": b64(&png()), "agencyPostalCode": "00000" }),
            400,
            "invalid_request",
        ),
        (
            json!([{ "documentCategory": "identite", "document": b64(&png()) }]),
            400,
            "invalid_request",
        ),
    ];
    for (body, status, code) in cases {
        let (got, answer) = app.call("POST", &path, Some(&body)).await;
        assert_eq!((got, answer["error"].as_str()), (status, Some(code)), "{answer}");
    }
    let (got, answer) = app
        .call(
            "POST",
            "/api/v1/batches/BAT-00000000-00000000/documents",
            Some(&json!({ "documentCategory": "identite", "document": b64(&png()) })),
        )
        .await;
    assert_eq!((got, answer["error"].as_str()), (404, Some("not_found")));
    assert_eq!(documents_in(&app, &batch).await, 0, "no document recorded");
    assert_eq!(files_under(&app.store.dir().join("blobs")).len(), 0, "no file left");

    // Another company's key sees no batch of this one.
    let other = spawn_app().await;
    let (got, _) = other
        .call(
            "POST",
            &path,
            Some(&json!({ "documentCategory": "identite", "document": b64(&png()) })),
        )
        .await;
    assert_eq!(got, 404);
}
