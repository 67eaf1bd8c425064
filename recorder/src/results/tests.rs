//! The recorder against a real store and blob store: a result delivered twice is recorded once,
//! and a transaction that fails after the images were copied leaves no copy behind.

use super::*;
use common::crypto::envelope::MasterKeys;
use common::queue::sqlite::SqliteQueue;
use common::store::test_support::{allow_inserts, refuse_inserts, TempStore};
use common::store::{companies, consultations};
use common::test_fixtures::files_under;
use domain::analysis::AnalysisReport;
use domain::vocabulary::{Licence, Verdict};

struct Fixture {
    store: TempStore,
    recorder: Recorder,
    company: CompanyId,
    batch: BatchId,
    item: BatchItemId,
}

/// A submitted batch holding one deposited document whose file is in the blob store.
async fn fixture(label: &str) -> Fixture {
    let store = TempStore::new(label);
    let keys = Arc::new(MasterKeys::load_or_create(&store.dir().join("master.key")).unwrap());
    let blobs = BlobStore::new(store.dir().join("blobs"), keys.clone()).unwrap();
    let now = chrono::Utc::now();
    let company = store
        .write(move |tx| companies::create(tx, "Acme", Licence::Group, &keys, now))
        .await
        .unwrap()
        .company
        .id;
    let mut item = common::store::test_support::identity_item(&BlobStore::new_name());
    let item_id = item.id.clone();
    blobs
        .put(&item.front_blob, &batches::blob_context(&company, &item_id), vec![7; 64])
        .await
        .unwrap();
    item.bytes = 64;
    let co = company.clone();
    let batch = store
        .write(move |tx| {
            let batch = batches::create(tx, &co, None, None, batches::WINDOW, now)?.id;
            batches::deposit(tx, &co, &batch, &item, u64::MAX, now)?;
            batches::submit(tx, &co, &batch, batches::WINDOW, now)?;
            Ok::<_, RepoError>(batch)
        })
        .await
        .unwrap();
    let recorder = Recorder {
        store: store.handle(),
        blobs,
        queue: Arc::new(SqliteQueue::new(store.handle(), 3)),
        outbox_wake: Arc::new(Notify::new()),
    };
    Fixture {
        store,
        recorder,
        company,
        batch,
        item: item_id,
    }
}

fn analysed(f: &Fixture) -> RecorderV1 {
    RecorderV1::JobFinished {
        source: JobSource::BatchItem {
            batch_id: f.batch.clone(),
            item_id: f.item.clone(),
        },
        outcome: JobOutcome::Analysed {
            report: Box::new(AnalysisReport {
                verdict: Verdict::AnalyseImpossible,
                document_type: domain::vocabulary::DocumentType::Inconnu,
                document_country: None,
                anomalies: Vec::new(),
                two_d_doc: None,
                holder_age: None,
                pages: 1,
                checks: Vec::new(),
                face_match: None,
            }),
        },
        at: chrono::Utc::now(),
        request_id: None,
    }
}

/// The batch's one document: its status and consultation.
async fn document(f: &Fixture) -> (ItemStatus, Option<ConsultationId>) {
    let (company, batch) = (f.company.clone(), f.batch.clone());
    let batch = f.store.read(move |c| batches::get_with_items(c, &company, &batch)).await.unwrap();
    let item = &batch.items.unwrap()[0];
    (item.status, item.consultation_id.clone())
}

#[tokio::test]
async fn a_result_delivered_twice_is_recorded_once() {
    let f = fixture("rec-twice").await;
    let blobs = f.store.dir().join("blobs");
    f.recorder.apply(analysed(&f)).await.unwrap();
    let (status, first) = document(&f).await;
    assert_eq!(status, ItemStatus::Succeeded);
    assert_eq!(files_under(&blobs).len(), 2, "the deposit and its consultation's image");

    f.recorder.apply(analysed(&f)).await.unwrap();
    assert_eq!(document(&f).await.1, first, "the first result stands");
    assert_eq!(files_under(&blobs).len(), 2, "the second delivery's copy is deleted");
    let (company, id) = (f.company.clone(), first.unwrap());
    let image = f
        .store
        .read(move |c| consultations::image(c, &company, &id, domain::vocabulary::ImageSide::Recto))
        .await
        .unwrap();
    assert!(matches!(image, Some(consultations::ImageRef::Stored { .. })));

    // Once settled, the sweeper releases the deposit's file, once.
    assert_eq!(crate::sweeper::release_deposit_files(&f.store, &f.recorder.blobs).await.unwrap(), 1);
    assert_eq!(crate::sweeper::release_deposit_files(&f.store, &f.recorder.blobs).await.unwrap(), 0);
    assert_eq!(files_under(&blobs).len(), 1, "only the consultation's image is left");
}

#[tokio::test]
async fn a_failure_after_the_images_are_copied_leaves_no_copy_and_a_retry_records() {
    let f = fixture("rec-fail").await;
    let blobs = f.store.dir().join("blobs");
    f.store.write(|tx| refuse_inserts(tx, "consultation_images")).await.unwrap();
    let failed = f.recorder.apply(analysed(&f)).await;
    assert!(failed.is_err(), "the transaction failed");
    assert_eq!(
        files_under(&blobs).len(),
        1,
        "the copied image is deleted with the failed transaction"
    );
    assert_eq!(document(&f).await, (ItemStatus::Pending, None), "nothing was half-written");

    f.store.write(|tx| allow_inserts(tx, "consultation_images")).await.unwrap();
    f.recorder.apply(analysed(&f)).await.unwrap();
    let (status, consultation) = document(&f).await;
    assert_eq!(status, ItemStatus::Succeeded);
    assert!(consultation.is_some());
    assert_eq!(files_under(&blobs).len(), 2);
}
