//! Periodic housekeeping: deletes the deposit files of settled documents and the uploads of
//! journeys that no longer need them, and purges consultation images (batch and journey alike)
//! past their company's retention. All are idempotent, so a crash mid-way is repaired by the next
//! sweep.

use common::blobs::BlobStore;
use common::domain::JourneySide;
use common::store::{batches, consultations, sign_in_throttle, verifications, RepoError, Store};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const BATCH: u32 = 200;

pub async fn run(store: Store, blobs: BlobStore, every: Duration, shutdown: CancellationToken) {
    loop {
        if let Err(e) = release_deposit_files(&store, &blobs).await {
            tracing::error!(error = %e, "cannot release deposit files");
        }
        if let Err(e) = release_journey_uploads(&store, &blobs).await {
            tracing::error!(error = %e, "cannot release journey uploads");
        }
        if let Err(e) = purge_images(&store, &blobs).await {
            tracing::error!(error = %e, "cannot purge images");
        }
        if let Err(e) = purge_sign_in_failures(&store).await {
            tracing::error!(error = %e, "cannot purge sign-in failures");
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error(transparent)]
    Blob(#[from] common::blobs::BlobError),
}

/// Deposit files are deleted once their document is settled (the consultation has its own copy).
pub async fn release_deposit_files(store: &Store, blobs: &BlobStore) -> Result<usize, SweepError> {
    let items = store.read(|c| batches::releasable_files(c, BATCH)).await?;
    let count = items.len();
    for item in items {
        for blob in &item.blobs {
            blobs.delete(blob).await?;
        }
        store
            .write(move |tx| batches::files_released(tx, &item.item_id, chrono::Utc::now()))
            .await?;
    }
    Ok(count)
}

/// Journey uploads are deleted once their consultation has its own copies, or once the company's
/// retention has passed for a session that expired or whose job never brought a result. The blob
/// goes first, then the row, so a crash in between only repeats a harmless deletion.
pub async fn release_journey_uploads(store: &Store, blobs: &BlobStore) -> Result<usize, SweepError> {
    let due = store
        .read(|c| verifications::releasable_uploads(c, chrono::Utc::now(), BATCH))
        .await?;
    let count = due.len();
    for upload in due {
        release_upload(store, blobs, upload.verification_id, upload.side, upload.blob).await?;
    }
    Ok(count)
}

/// Deletes one journey file, then forgets it: the blob first, so a crash in between only repeats
/// a harmless deletion. The recorder releases a completed journey's files with it too.
pub async fn release_upload(
    store: &Store,
    blobs: &BlobStore,
    verification: String,
    side: JourneySide,
    blob: String,
) -> Result<(), SweepError> {
    blobs.delete(&blob).await?;
    store
        .write(move |tx| verifications::upload_released(tx, &verification, side, &blob))
        .await?;
    Ok(())
}

/// Images older than the company's retention are deleted; they then answer `image_purged`.
pub async fn purge_images(store: &Store, blobs: &BlobStore) -> Result<usize, SweepError> {
    let due = store
        .read(|c| consultations::images_past_retention(c, chrono::Utc::now(), BATCH))
        .await?;
    let count = due.len();
    for image in due {
        blobs.delete(&image.blob).await?;
        store
            .write(move |tx| consultations::mark_purged(tx, &image.consultation_id, &image.side, chrono::Utc::now()))
            .await?;
    }
    Ok(count)
}

/// Sign-in failures older than the throttle remembers are deleted, a batch at a time.
pub async fn purge_sign_in_failures(store: &Store) -> Result<usize, SweepError> {
    let purged = store
        .write(|tx| sign_in_throttle::purge_forgotten(tx, chrono::Utc::now(), BATCH))
        .await?;
    Ok(purged)
}
