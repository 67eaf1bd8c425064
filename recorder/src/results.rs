//! The recorder: the one consumer of `results`. It applies worker outcomes, batch deadlines and
//! delivery attempts to SQLite with conditional updates (the first terminal state of a document
//! wins, so a redelivered result changes nothing), writes the events of what changed to the
//! outbox in the same transaction, and only then acks.

use common::blobs::{outage, BlobError, BlobStore};
use common::messages::{JobOutcome, JobSource, RecorderMessage, RecorderV1};
use common::queue::consumer::{self, Settle};
use common::queue::{Delivery, Queue, Topic};
use common::store::consultations::{self, ImageFile, NewConsultation};
use common::store::{batches, events, verifications, workflows, RepoError, Store};
use common::telemetry::RequestId;
use domain::ids::{BatchId, BatchItemId, CompanyId, ConsultationId, VerificationId};
use domain::vocabulary::{ItemError, ItemStatus};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct Recorder {
    pub store: Store,
    pub blobs: BlobStore,
    pub queue: Arc<dyn Queue>,
    pub outbox_wake: Arc<Notify>,
}

/// Whether a result reports webhook delivery attempts (decoded twice: the full decode is its
/// handler's).
fn is_delivery_attempt(delivery: &Delivery) -> bool {
    matches!(
        serde_json::from_slice::<RecorderMessage>(&delivery.payload),
        Ok(RecorderMessage::V1(
            RecorderV1::DeliveryAttempt(_) | RecorderV1::DeliveryAttempts { .. }
        ))
    )
}

#[derive(Debug, thiserror::Error)]
enum RecordError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("blob: {0}")]
    Blob(#[from] common::blobs::BlobError),
}

/// Reports of delivery attempts recorded at once. Each waits for its own transaction's flush;
/// one after another, three flushes per attempt (take, record, ack) held the recorder to a few
/// hundred webhooks a second, whatever the notifier sent.
pub const ATTEMPT_REPORTS_IN_FLIGHT: usize = 32;

impl Recorder {
    pub async fn run(self, shutdown: CancellationToken) {
        let mut attempts = tokio::task::JoinSet::new();
        loop {
            // Room for one more before taking it off the queue.
            while attempts.len() >= ATTEMPT_REPORTS_IN_FLIGHT {
                attempts.join_next().await;
            }
            while attempts.try_join_next().is_some() {}
            let delivery = tokio::select! {
                _ = shutdown.cancelled() => break,
                d = self.queue.receive(&[Topic::Results]) => d,
            };
            match delivery {
                // An attempt touches only its event's rows, and records the same whatever the
                // order (`events::record_attempt`): attempts are recorded side by side. Worker
                // results and deadlines stay in queue order, one at a time.
                Ok(d) if is_delivery_attempt(&d) => {
                    let recorder = self.clone();
                    attempts.spawn(async move { recorder.handle(d).await });
                }
                Ok(d) => self.handle(d).await,
                Err(e) => {
                    tracing::error!(error = %e, "recorder cannot read results");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
        // Taken attempts are recorded and acked before the recorder stops.
        while attempts.join_next().await.is_some() {}
    }

    /// Applies one result in its span; acked once applied (a redelivery changes nothing),
    /// handed back a second later when the store refused it.
    async fn handle(&self, delivery: Delivery) {
        consumer::handle(self.queue.as_ref(), &delivery, |RecorderMessage::V1(message)| async move {
            match self.apply(message).await {
                Ok(()) => {
                    self.outbox_wake.notify_one();
                    (Settle::Ack, ())
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot record a result; retrying");
                    (Settle::Retry(Duration::from_secs(1)), ())
                }
            }
        })
        .await;
    }

    async fn apply(&self, message: RecorderV1) -> Result<(), RecordError> {
        match message {
            RecorderV1::JobStarted { source, .. } => {
                if let JobSource::BatchItem { item_id, .. } = source {
                    self.store.write(move |tx| batches::mark_processing(tx, &item_id)).await?;
                }
            }
            RecorderV1::JobFinished {
                source,
                outcome,
                at,
                request_id,
            } => {
                let name = outcome.name();
                let finished = Finished { outcome, at, request_id };
                match source {
                    JobSource::BatchItem { batch_id, item_id } => self.finish_batch_item(batch_id, item_id, finished).await?,
                    JobSource::Verification { verification_id } => self.finish_verification(verification_id, finished).await?,
                }
                tracing::info!(outcome = name, "result recorded");
            }
            RecorderV1::BatchDeadline { batch_id, at } => {
                let expired = self
                    .store
                    .write(move |tx| batches::expire_if_due(tx, &batch_id, at.max(chrono::Utc::now())))
                    .await?;
                if expired {
                    metrics::counter!("sceau_batches_expired_total").increment(1);
                }
            }
            RecorderV1::DeliveryAttempt(attempt) => {
                self.store.write(move |tx| events::record_attempt(tx, &attempt)).await?;
            }
            RecorderV1::DeliveryAttempts { attempts } => {
                self.store
                    .write(move |tx| attempts.iter().try_for_each(|attempt| events::record_attempt(tx, attempt)))
                    .await?;
            }
        }
        Ok(())
    }

    async fn finish_batch_item(&self, batch_id: BatchId, item_id: BatchItemId, finished: Finished) -> Result<(), RecordError> {
        let Finished { outcome, at, request_id } = finished;
        let (b, i) = (batch_id.clone(), item_id.clone());
        let Some(item) = self.store.read(move |c| batches::item_for_result(c, &b, &i)).await? else {
            tracing::warn!(%item_id, "result for an unknown document ignored");
            return Ok(());
        };
        if item.status.is_terminal() {
            return Ok(());
        }
        let (status, error) = match outcome {
            JobOutcome::Analysed { report } => {
                let analysed = Analysed {
                    report: *report,
                    at,
                    request_id,
                };
                return self.record_consultation(batch_id, item_id, item, analysed).await;
            }
            JobOutcome::Errored { error, .. } => (ItemStatus::Errored, Some(error)),
            JobOutcome::Expired => (ItemStatus::Expired, None),
            JobOutcome::Canceled => {
                self.store
                    .write(move |tx| batches::settle_canceled_job(tx, &batch_id, &item_id, request_id.as_ref(), chrono::Utc::now()))
                    .await?;
                return Ok(());
            }
        };
        self.settle(batch_id, item_id, (status, error), request_id).await
    }

    async fn settle(
        &self,
        batch_id: BatchId,
        item_id: BatchItemId,
        (status, error): (ItemStatus, Option<ItemError>),
        request_id: Option<RequestId>,
    ) -> Result<(), RecordError> {
        self.store
            .write(move |tx| {
                let now = chrono::Utc::now();
                if batches::settle_item(tx, &item_id, status, error, None, now)? {
                    batches::announce_if_settled(tx, &batch_id, request_id.as_ref(), now)?;
                }
                Ok::<_, RepoError>(())
            })
            .await?;
        metrics::counter!("sceau_documents_settled_total", "status" => status.as_str()).increment(1);
        Ok(())
    }

    /// Copies the deposit files into the consultation's own encrypted images, then records the
    /// consultation and the document's success in one transaction.
    async fn record_consultation(
        &self,
        batch_id: BatchId,
        item_id: BatchItemId,
        item: batches::ItemForResult,
        analysed: Analysed,
    ) -> Result<(), RecordError> {
        let Analysed {
            report,
            at: analyzed_at,
            request_id,
        } = analysed;
        let now = chrono::Utc::now();
        let consultation_id = ConsultationId::generate(now);
        let deposit_context = batches::blob_context(&item.company_id, &item_id);
        let images = self
            .copy_images(&item.company_id, &consultation_id, &deposit_context, &item.files, false)
            .await?;
        let stored_images = images.clone();
        let company = item.company_id.clone();
        let recorded = self
            .store
            .write(move |tx| {
                if !batches::settle_item(tx, &item_id, ItemStatus::Succeeded, None, Some(&consultation_id), now)? {
                    return Ok(false);
                }
                let workflow_id = workflows::default_batch(tx, &company, item.category)?;
                consultations::insert(
                    tx,
                    &NewConsultation {
                        id: &consultation_id,
                        company: &company,
                        workflow_id: &workflow_id,
                        external_ref: item.external_ref.as_deref(),
                        category: item.category,
                        report: &report,
                        decision: None,
                        review_status: None,
                        batch_item_id: Some(item_id.as_str()),
                        verification_id: None,
                        analyzed_at,
                        now,
                    },
                )?;
                for image in &stored_images {
                    consultations::add_image(tx, &consultation_id, image, now)?;
                }
                batches::announce_if_settled(tx, &batch_id, request_id.as_ref(), now)?;
                Ok::<_, RepoError>(true)
            })
            .await;
        if self.keep_images_if_recorded(recorded, &images).await? {
            metrics::counter!("sceau_documents_settled_total", "status" => "succeeded").increment(1);
        }
        Ok(())
    }

    /// A journey ends with a consultation, its decision and `verification.completed`. Like a batch
    /// document, its uploads are copied into the consultation's own encrypted images (bound to the
    /// consultation and side, which is what the images API opens them with), recorded in the
    /// transaction that records the consultation; the uploads are then released.
    async fn finish_verification(&self, id: VerificationId, finished: Finished) -> Result<(), RecordError> {
        let Finished { outcome, at, request_id } = finished;
        let report = match outcome {
            JobOutcome::Analysed { report } => *report,
            // Workers turn a journey's errors into an `analyse_impossible` report (see
            // `worker::jobs`); an errored, expired or canceled journey job records nothing.
            other => {
                tracing::warn!(%id, outcome = ?other, "journey job ended without a report");
                return Ok(());
            }
        };
        let lookup = id.clone();
        let Some(uploads) = self.store.read(move |c| verifications::uploads_for_result(c, &lookup)).await? else {
            tracing::warn!(%id, "result for an unknown verification ignored");
            return Ok(());
        };
        if uploads.completed {
            // A redelivered result: the consultation and its images exist; finish a release a
            // crash may have interrupted (the sweeper would too).
            self.release_uploads(&id, &uploads.files).await;
            return Ok(());
        }
        let now = chrono::Utc::now();
        let consultation_id = ConsultationId::generate(now);
        let upload_context = verifications::upload_context(&uploads.company_id, &id);
        let files: Vec<ImageFile> = uploads
            .files
            .iter()
            .map(|f| ImageFile {
                side: f.side.image_side(),
                blob: f.blob.clone(),
                kind: f.kind,
            })
            .collect();
        // The result matters more than one image: a file already gone (released after a crash,
        // or by retention) leaves the consultation without that image.
        let images = self
            .copy_images(&uploads.company_id, &consultation_id, &upload_context, &files, true)
            .await?;
        let stored_images = images.clone();
        let session = id.clone();
        let recorded = self
            .store
            .write(move |tx| {
                if verifications::record_result(tx, &id, &consultation_id, &report, at, request_id.as_ref(), now)?.is_none() {
                    return Ok(false);
                }
                for image in &stored_images {
                    consultations::add_image(tx, &consultation_id, image, now)?;
                }
                Ok::<_, RepoError>(true)
            })
            .await;
        if self.keep_images_if_recorded(recorded, &images).await? {
            self.release_uploads(&session, &uploads.files).await;
        }
        Ok(())
    }

    /// Deletes the upload blobs of a completed journey, then their rows; best effort, since the
    /// sweeper releases whatever remains.
    async fn release_uploads(&self, id: &VerificationId, files: &[verifications::UploadedFile]) {
        for file in files {
            let released = crate::sweeper::release_upload(&self.store, &self.blobs, id.to_string(), file.side, file.blob.clone());
            if let Err(e) = released.await {
                tracing::error!(error = %e, "cannot release a journey file; the sweeper will retry");
            }
        }
    }

    /// Copies `files`, encrypted under `from`, into new blobs bound to the
    /// consultation and side, which is what the images API opens them with. On a failure the
    /// copies made so far are deleted; with `skip_missing`, a file already gone is left out.
    async fn copy_images(
        &self,
        company: &CompanyId,
        consultation: &ConsultationId,
        from: &str,
        files: &[ImageFile],
        skip_missing: bool,
    ) -> Result<Vec<ImageFile>, RecordError> {
        let mut images = Vec::new();
        let patience = outage::Patience::for_a_delivery();
        for file in files {
            let side = file.side;
            let copied = match outage::waiting_out("reading a document", patience, || self.blobs.get(&file.blob, from)).await {
                Err(BlobError::Missing) if skip_missing => {
                    tracing::warn!(%side, "file gone; the consultation has no image for it");
                    continue;
                }
                Ok(bytes) => {
                    let name = BlobStore::new_name();
                    let context = consultations::image_context(company, consultation, side);
                    outage::waiting_out("writing an image", patience, || {
                        self.blobs.put_then_record(&self.store, &name, &context, bytes.clone())
                    })
                    .await
                    .map(|()| name)
                }
                Err(e) => Err(e),
            };
            match copied {
                Ok(blob) => images.push(ImageFile {
                    side,
                    blob,
                    kind: file.kind,
                }),
                Err(e) => {
                    self.discard(&images).await;
                    return Err(e.into());
                }
            }
        }
        Ok(images)
    }

    /// The images copied for a consultation belong to it only if the recording transaction wrote
    /// it; when another delivery recorded the result first (`Ok(false)`) or the transaction failed,
    /// they are deleted. Returns whether this delivery recorded the result.
    async fn keep_images_if_recorded(&self, recorded: Result<bool, RepoError>, images: &[ImageFile]) -> Result<bool, RecordError> {
        // A transaction committed but not flushed recorded them: they stay with their rows.
        let kept = matches!(recorded, Ok(true)) || recorded.as_ref().is_err_and(RepoError::committed);
        if !kept {
            self.discard(images).await;
        }
        Ok(recorded?)
    }

    async fn discard(&self, images: &[ImageFile]) {
        for image in images {
            if let Err(e) = self.blobs.delete(&image.blob).await {
                tracing::error!(error = %e, "cannot delete an unused image");
            }
        }
    }
}

/// What a worker reported of a finished job, with the request that created the work.
struct Finished {
    outcome: JobOutcome,
    at: chrono::DateTime<chrono::Utc>,
    request_id: Option<RequestId>,
}

/// An analysis to record as a consultation.
struct Analysed {
    report: domain::analysis::AnalysisReport,
    at: chrono::DateTime<chrono::Utc>,
    request_id: Option<RequestId>,
}

#[cfg(test)]
mod tests;
