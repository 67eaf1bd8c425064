//! Deposits through the gateway in this process (`spawn_app`): what is accepted is encrypted and
//! recorded once; what is refused answers its code and leaves nothing behind, neither a file nor
//! a document.

use crate::test_support::{spawn_app, TestApp};
use base64::Engine as _;
use common::store::batches;
use common::test_fixtures::files_under;
use domain::ids::BatchId;
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

/// A photo padded after its end to `size` bytes: checked by its header like any photo.
fn padded_png(size: usize) -> Vec<u8> {
    let mut file = png();
    file.resize(size, 0);
    file
}

/// Small documents are stored on the request's thread, large ones on a blocking thread: both
/// are encrypted and recorded in order, each with its one file, and a refused one of either
/// size leaves no file (here the batch is full).
#[tokio::test]
async fn small_and_large_documents_are_stored_and_refused_alike() {
    let app = spawn_app().await;
    let batch = open_batch(&app).await;
    let path = format!("/api/v1/batches/{batch}/documents");
    let (small, large) = (padded_png(10_000), padded_png(400_000));
    assert!(b64(&small).len() < super::INLINE_BASE64_BYTES && b64(&large).len() > super::INLINE_BASE64_BYTES);
    for (n, file) in [&small, &large, &small].into_iter().enumerate() {
        let body = json!({ "documentCategory": "identite", "document": b64(file) });
        let (status, deposited) = app.call("POST", &path, Some(&body)).await;
        assert_eq!((status, deposited["position"].as_u64()), (201, Some(n as u64 + 1)), "{deposited}");
    }
    let blobs = app.store.dir().join("blobs");
    let mut sizes: Vec<u64> = files_under(&blobs)
        .iter()
        .map(|p| std::fs::metadata(p).expect("blob").len())
        .collect();
    sizes.sort();
    assert_eq!(sizes.len(), 3, "one file each");
    assert!(sizes[0] > 10_000 && sizes[1] == sizes[0] && sizes[2] > 400_000, "{sizes:?}");

    // The batch made full by moving its last document to the last position: the deposit counts
    // a batch by its last position (positions have no gap otherwise), and refuses after writing.
    let full = batches::MAX_ITEMS_PER_BATCH;
    let id = BatchId::parse(&batch).expect("batch id");
    app.store
        .write(move |tx| {
            tx.execute(
                "UPDATE batch_items SET position = ?2 WHERE batch_id = ?1 AND position = 3",
                rusqlite::params![id.as_str(), full],
            )
            .map(drop)
            .map_err(common::store::StoreError::from)
        })
        .await
        .expect("the batch made full");
    for file in [&small, &large] {
        let body = json!({ "documentCategory": "identite", "document": b64(file) });
        let (status, answer) = app.call("POST", &path, Some(&body)).await;
        assert_eq!((status, answer["error"].as_str()), (429, Some("batch_full")), "{answer}");
    }
    assert_eq!(files_under(&blobs).len(), 3, "no file left by the refusals");
    assert_eq!(app.store.announced_writes(), 0, "every announced write withdrawn or flushed");
}

/// A deposit whose row is committed but whose flush fails is answered as an error and keeps its
/// file: the row names it, and deleting it would leave a document without its file.
#[tokio::test]
async fn a_deposit_committed_but_not_flushed_keeps_its_file() {
    let app = spawn_app().await;
    let batch = open_batch(&app).await;
    let path = format!("/api/v1/batches/{batch}/documents");
    app.store.fail_flushes(true);
    for file in [padded_png(10_000), padded_png(400_000)] {
        let body = json!({ "documentCategory": "identite", "document": b64(&file) });
        let (status, answer) = app.call("POST", &path, Some(&body)).await;
        assert_eq!((status, answer["error"].as_str()), (500, Some("internal_error")), "{answer}");
    }
    app.store.fail_flushes(false);
    assert_eq!(documents_in(&app, &batch).await, 2, "both rows are committed");
    let blobs = app.store.dir().join("blobs");
    let id = BatchId::parse(&batch).expect("batch id");
    let named: Vec<String> = app
        .store
        .read(move |c| {
            let mut stmt = c.prepare("SELECT front_blob FROM batch_items WHERE batch_id = ?1 ORDER BY position")?;
            let rows = stmt.query_map([id.as_str()], |r| r.get(0))?;
            rows.collect::<Result<Vec<String>, _>>().map_err(common::store::StoreError::from)
        })
        .await
        .expect("the rows' files");
    let kept = files_under(&blobs);
    assert_eq!(kept.len(), 2, "{kept:?}");
    for name in &named {
        assert!(kept.iter().any(|p| p.ends_with(name)), "{name} is kept: {kept:?}");
    }
}
