//! Periodic housekeeping: deletes the deposit files of settled documents and the uploads of
//! journeys that no longer need them, purges consultation images (batch and journey alike) past
//! their company's retention, and once a minute forgets the rows no table keeps forever
//! ([`crate::retention`]). All are idempotent, so a crash mid-way is repaired by the next sweep.

use crate::retention::{self, Retention};
use common::blobs::{BlobError, BlobStore};
use common::store::consultations::DueImage;
use common::store::{batches, consultations, verifications, RepoError, Store};
use domain::vocabulary::JourneySide;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

const BATCH: u32 = 200;

/// Images one transaction marks purged at most: a purge of 100,000 images is 200 short writes,
/// each letting the others in, not 100,000 transactions each waiting for its flush.
pub const PURGE_BATCH: u32 = 500;

/// Blob deletions in flight at once during a purge: a bucket answers each in a round trip.
const DELETES_AT_ONCE: usize = 8;

/// How often the tables' retention runs: expired rows wait a minute at most, and a sweep every
/// second costs nothing more than the images and files it has to release.
const RETENTION_EVERY: Duration = Duration::from_secs(60);

pub async fn run(store: Store, blobs: BlobStore, every: Duration, retention: Retention, shutdown: CancellationToken) {
    let mut retained_at: Option<Instant> = None;
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
        if retained_at.is_none_or(|at| at.elapsed() >= RETENTION_EVERY) {
            retained_at = Some(Instant::now());
            match retention::sweep(&store, retention, chrono::Utc::now()).await {
                Ok(forgotten) => {
                    for (table, rows) in forgotten.into_iter().filter(|(_, rows)| *rows > 0) {
                        tracing::info!(table = table.as_str(), rows, "retention forgot expired rows");
                    }
                }
                Err(e) => tracing::error!(error = %e, "cannot apply the tables' retention"),
            }
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

/// Images older than their company's retention whose result is settled are deleted; they then
/// answer `image_purged`. Batch after batch until none is due: each batch's files are deleted,
/// then marked purged in one transaction (a crash in between only deletes them again).
pub async fn purge_images(store: &Store, blobs: &BlobStore) -> Result<usize, SweepError> {
    let mut purged = 0;
    loop {
        let due = store
            .read(|c| consultations::images_past_retention(c, chrono::Utc::now(), PURGE_BATCH))
            .await?;
        let full = due.len() == PURGE_BATCH as usize;
        let (deleted, failure) = delete_files(blobs, due).await;
        purged += deleted.len();
        if !deleted.is_empty() {
            store
                .write(move |tx| consultations::mark_all_purged(tx, &deleted, chrono::Utc::now()))
                .await?;
        }
        if let Some(e) = failure {
            return Err(e.into());
        }
        if !full {
            return Ok(purged);
        }
        tokio::task::yield_now().await;
    }
}

/// Deletes the images' files, [`DELETES_AT_ONCE`] at a time; the images whose file is gone, and
/// the first failure (after which no more deletion starts: the store is likely out).
async fn delete_files(blobs: &BlobStore, images: Vec<DueImage>) -> (Vec<DueImage>, Option<BlobError>) {
    let mut waiting = images.into_iter();
    let mut running = JoinSet::new();
    let (mut deleted, mut failure) = (Vec::new(), None);
    loop {
        while failure.is_none() && running.len() < DELETES_AT_ONCE {
            let Some(image) = waiting.next() else { break };
            let blobs = blobs.clone();
            running.spawn(async move {
                let done = blobs.delete(&image.blob).await;
                (image, done)
            });
        }
        match running.join_next().await {
            None => return (deleted, failure),
            Some(Ok((image, Ok(())))) => deleted.push(image),
            Some(Ok((_, Err(e)))) => {
                failure.get_or_insert(e);
            }
            Some(Err(e)) => {
                failure.get_or_insert(BlobError::Io(std::io::Error::other(e.to_string())));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::crypto::envelope::MasterKeys;
    use common::store::companies;
    use common::store::test_support::{consultation_with_image, TempStore};
    use common::test_fixtures::files_under;
    use std::sync::Arc;

    /// More due images than one batch holds, and one result waiting for a review: one purge takes
    /// every settled image, batch after batch, and leaves the waiting one's file and row.
    #[tokio::test]
    async fn a_purge_takes_every_due_image_in_batches_and_leaves_a_waiting_review_alone() {
        let store = TempStore::new("sweeper-purge");
        let blobs = BlobStore::new(store.dir().join("blobs"), Arc::new(MasterKeys::ephemeral())).unwrap();
        let due = PURGE_BATCH as usize * 2 + 7;
        let names: Vec<String> = (0..=due).map(|_| BlobStore::new_name()).collect();
        for name in &names {
            blobs.put_then_record_here(&store, name, "c", vec![1; 16]).unwrap();
        }
        let now = chrono::Utc::now();
        store
            .write(move |tx| {
                let company = common::store::test_support::company(tx);
                companies::set(tx, &company, None, Some(0))?;
                for (n, name) in names.iter().enumerate() {
                    let id = consultation_with_image(tx, &company, name, now - chrono::Duration::days(1))?;
                    if n == 0 {
                        tx.execute("UPDATE consultations SET review_status = 'pending' WHERE id = ?1", [id.as_str()])?;
                    }
                }
                Ok::<_, RepoError>(())
            })
            .await
            .unwrap();
        assert_eq!(purge_images(&store, &blobs).await.unwrap(), due, "every settled image in one purge");
        assert_eq!(files_under(&store.dir().join("blobs")).len(), 1, "the waiting result's file stays");
        assert_eq!(purge_images(&store, &blobs).await.unwrap(), 0, "nothing left to purge");
    }
}
