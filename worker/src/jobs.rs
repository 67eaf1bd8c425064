//! The job loop: `concurrency` consumers take jobs (real-time first), check the live flags, read
//! and decrypt the files, run the engine and publish the outcome for the recorder. A job is acked
//! only after its outcome is published, so a crash means a redelivery, never a loss; the
//! recorder's first-terminal-state-wins rule makes the redelivery harmless.

use crate::analysis::{Engine, EngineError};
use crate::flags::LiveFlags;
use crate::share::RealtimeShare;
use common::blobs::{outage, BlobStore};
use common::messages::{Job, JobOutcome, JobSource, JobV1, RecorderMessage, RecorderV1};
use common::queue::consumer::{self, Settle};
use common::queue::{Delivery, Queue, QueueError, Topic};
use domain::analysis::AnalysisInput;
use domain::vocabulary::{DocumentCategory, ItemError, Mode};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Engine failures are retried this many times within one delivery before `engine_failure`; an
/// overloaded machine's job is handed back to the queue until its delivery of that number.
const ENGINE_ATTEMPTS: u32 = 3;
/// How long a job whose analysis the machine had no CPU for waits before its next delivery.
const OVERLOADED_RETRY: Duration = Duration::from_secs(30);
/// How long a job waits after a queue or engine hiccup: long enough for a broker or a helper
/// process to come back, short enough that a journey's customer barely notices.
const TRANSIENT_RETRY: Duration = Duration::from_secs(2);
/// Reads of a live flag (250 ms apart) before the job is handed back to the queue.
const FLAG_ATTEMPTS: u32 = 40;
/// How often an idle or drained consumer looks at the drain flag.
const DRAIN_POLL: Duration = Duration::from_millis(250);

#[derive(Clone)]
pub struct Worker {
    pub queue: Arc<dyn Queue>,
    pub blobs: BlobStore,
    /// The engine of journeys' documents.
    pub engine: Arc<dyn Engine>,
    /// The engine of batch documents: the same, or one whose analyses run at a lower OS priority
    /// so that a journey's analysis takes the CPU first.
    pub batch_engine: Arc<dyn Engine>,
    /// The children behind `batch_engine` when they are a pool of their own: paused while a
    /// journey's job is handled here (see `common::sandbox::pause`).
    pub batch_pool: Option<common::sandbox::Sandbox>,
    /// Slots beside the pool's `concurrency` that take real-time jobs only: a journey never
    /// waits for a batch document to finish.
    pub realtime_slots: usize,
    pub flags: Arc<dyn LiveFlags>,
    /// Jobs being processed now (reported by the worker's heartbeat).
    pub in_flight: Arc<std::sync::atomic::AtomicUsize>,
    /// True once the consumers have seen the drain and stopped taking jobs.
    pub paused: Arc<std::sync::atomic::AtomicBool>,
}

/// Counts a job in flight for as long as it lives.
struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a std::sync::atomic::AtomicUsize) -> Self {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// How long a slot that just moved a job to the overflow lane waits for the real-time lane's
/// next job before it looks at the other lanes again.
const MOVE_GRACE: Duration = Duration::from_millis(250);

/// What became of a delivery, for the slot's next look at the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handled {
    /// Processed, settled or dropped.
    Done,
    /// Moved to the overflow lane, its company being over its share here.
    Moved,
}

#[derive(Debug, thiserror::Error)]
enum JobError {
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error("{0}")]
    Transient(String),
    /// The analysis waited for the CPU past its backstop: the job goes back to the queue.
    #[error("{0}")]
    Overloaded(String),
}

impl JobError {
    /// How long the job waits before it is handed out again.
    fn retry_after(&self) -> Duration {
        match self {
            JobError::Overloaded(_) => OVERLOADED_RETRY,
            JobError::Queue(_) | JobError::Transient(_) => TRANSIENT_RETRY,
        }
    }
}

impl Worker {
    /// Runs `concurrency` consumers of every lane and the `realtime_slots` of the real-time lane
    /// until `shutdown`; each finishes its job in hand first.
    pub async fn run(self, concurrency: usize, shutdown: CancellationToken) {
        let general = concurrency.max(1);
        let share = Arc::new(RealtimeShare::for_concurrency(general + self.realtime_slots));
        let mut tasks = tokio::task::JoinSet::new();
        for slot in 0..general + self.realtime_slots {
            let worker = self.clone();
            let (share, shutdown) = (share.clone(), shutdown.clone());
            let lanes = worker.lanes(slot >= general);
            tasks.spawn(async move { worker.consume(slot, lanes, &share, shutdown).await });
        }
        while tasks.join_next().await.is_some() {}
    }

    async fn consume(&self, slot: usize, lanes: &'static [Topic], share: &RealtimeShare, shutdown: CancellationToken) {
        let mut handled = Handled::Done;
        loop {
            if !self.may_take_work(slot, &shutdown).await {
                return;
            }
            // Right after a move to the overflow lane, the real-time lane's next job is awaited a
            // moment on its own: the move freed a place the broker fills within milliseconds when
            // the lane holds more, and another company's journey may be among them.
            let (lanes, grace) = match handled {
                Handled::Moved => (&[Topic::JobsRealtime][..], MOVE_GRACE),
                Handled::Done => (lanes, Duration::MAX),
            };
            // Waiting for a job stops as soon as a drain starts: the job stays with the queue.
            let delivery = tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = self.drain_started() => continue,
                received = tokio::time::timeout(grace, self.queue.receive(lanes)) => match received {
                    Ok(d) => d,
                    Err(_) => {
                        handled = Handled::Done;
                        continue;
                    }
                },
            };
            handled = Handled::Done;
            match delivery {
                Ok(d) => handled = self.handle(d, share).await,
                Err(e) => {
                    tracing::error!(slot, error = %e, "cannot take jobs; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// The topics a slot takes jobs from, in priority order: real-time first, then, on a queue
    /// that leaves sharing the real-time lane to the workers, the real-time jobs over their
    /// company's share, then batch, unless the slot is reserved for the real-time lane.
    fn lanes(&self, reserved: bool) -> &'static [Topic] {
        match (self.queue.shares_fairly(Topic::JobsRealtime), reserved) {
            (true, false) => &[Topic::JobsRealtime, Topic::JobsBatch],
            (true, true) => &[Topic::JobsRealtime],
            (false, false) => &[Topic::JobsRealtime, Topic::JobsRealtimeOverflow, Topic::JobsBatch],
            (false, true) => &[Topic::JobsRealtime, Topic::JobsRealtimeOverflow],
        }
    }

    /// Resolves once the drain flag is seen set.
    async fn drain_started(&self) {
        loop {
            tokio::time::sleep(DRAIN_POLL).await;
            if matches!(self.flags.draining().await, Ok(true)) {
                return;
            }
        }
    }

    /// Waits while the pool is drained (or the flags cannot be read); false once shutting down.
    async fn may_take_work(&self, slot: usize, shutdown: &CancellationToken) -> bool {
        loop {
            match self.flags.draining().await {
                Ok(false) => {
                    self.paused.store(false, std::sync::atomic::Ordering::Relaxed);
                    return true;
                }
                Ok(true) => self.paused.store(true, std::sync::atomic::Ordering::Relaxed),
                Err(e) => tracing::warn!(slot, error = %e, "live flags unavailable; intake paused"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => return false,
                _ = tokio::time::sleep(DRAIN_POLL) => {}
            }
        }
    }

    async fn handle(&self, delivery: Delivery, share: &RealtimeShare) -> Handled {
        let _busy = InFlight::enter(&self.in_flight);
        let delivery = &delivery;
        let handled = consumer::handle(self.queue.as_ref(), delivery, |Job::V1(job)| async move {
            // Held while the job is handled: the company's place in this worker's real-time share.
            let _share = match delivery.topic {
                Topic::JobsRealtime if !self.queue.shares_fairly(Topic::JobsRealtime) => match share.try_take(&job.company_id) {
                    Some(slot) => Some(slot),
                    None => return (self.overflow(delivery, &job).await, Handled::Moved),
                },
                Topic::JobsRealtimeOverflow => Some(share.take(&job.company_id)),
                _ => None,
            };
            match self.process(&job, delivery.attempts).await {
                Ok(()) => (Settle::Ack, Handled::Done),
                Err(e) => {
                    tracing::warn!(error = %e, attempts = delivery.attempts, "job failed; retrying later");
                    (Settle::Retry(e.retry_after()), Handled::Done)
                }
            }
        })
        .await;
        handled.unwrap_or(Handled::Done)
    }

    /// Moves a real-time job whose company has its share of this worker in flight to the
    /// overflow lane, served once the real-time lane is empty; this copy is then let go. A crash
    /// between the two leaves two copies; the recorder keeps the first result.
    async fn overflow(&self, delivery: &Delivery, job: &JobV1) -> Settle {
        let moved = self
            .queue
            .publish(Topic::JobsRealtimeOverflow, delivery.payload.clone(), Duration::ZERO)
            .await;
        match moved {
            Ok(()) => {
                tracing::debug!(company = %job.company_id, "company has its real-time share in flight; job moved to the overflow lane");
                Settle::Ack
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not move a real-time job to the overflow lane; handed back");
                Settle::Retry(Duration::from_secs(2))
            }
        }
    }

    /// Handles the job on its `delivery`th delivery.
    async fn process(&self, job: &JobV1, delivery: u32) -> Result<(), JobError> {
        let _batch_paused = self.pause_batch_for(job);
        if let Some(outcome) = self.precheck(job).await? {
            tracing::info!(outcome = outcome.name(), "job ended without analysis");
            return self.report(job, outcome).await;
        }
        self.publish(RecorderV1::JobStarted {
            source: job.source.clone(),
            at: chrono::Utc::now(),
            request_id: job.request_id.clone(),
        })
        .await?;
        let started = std::time::Instant::now();
        let outcome = self.analyse(job, delivery).await?;
        tracing::info!(
            outcome = outcome.name(),
            ms = started.elapsed().as_millis() as u64,
            "document analysed"
        );
        self.report(job, outcome).await
    }

    /// A journey's document has the machine to itself while it is handled: the batch analyses
    /// under way in this worker are stopped until it is done (within the pause's budget).
    fn pause_batch_for(&self, job: &JobV1) -> Option<common::sandbox::Paused> {
        match (&job.source, job.mode) {
            (JobSource::Verification { .. }, Mode::Live) => self.batch_pool.as_ref()?.pause(),
            _ => None,
        }
    }

    /// What ends the job without analysis: canceled batch, passed deadline, AI disabled.
    async fn precheck(&self, job: &JobV1) -> Result<Option<JobOutcome>, JobError> {
        if let JobSource::BatchItem { batch_id, .. } = &job.source {
            if !self.read_flag(|| self.flags.batch_accepts_work(batch_id)).await? {
                return Ok(Some(JobOutcome::Canceled));
            }
        }
        if chrono::Utc::now() > job.deadline {
            return Ok(Some(JobOutcome::Expired));
        }
        if job.category == DocumentCategory::Administratif && !self.read_flag(|| self.flags.ai_enabled(&job.company_id)).await? {
            return Ok(Some(JobOutcome::Errored {
                error: ItemError::IaDesactivee,
                message: "AI use is disabled for the company; the document was not analysed".into(),
            }));
        }
        Ok(None)
    }

    /// Reads a live flag, holding the job a while when the flag is not known yet (the gateway
    /// re-seeds flags every second or so): waiting here costs no delivery attempt, while a nack
    /// would bring a healthy job closer to the poison limit.
    async fn read_flag<F, Fut>(&self, read: F) -> Result<bool, JobError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<bool, crate::flags::FlagError>>,
    {
        let mut last = None;
        for _ in 0..FLAG_ATTEMPTS {
            match read().await {
                Ok(v) => return Ok(v),
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        Err(JobError::Transient(
            last.map_or_else(|| "live flags unavailable".into(), |e| e.to_string()),
        ))
    }

    async fn analyse(&self, job: &JobV1, delivery: u32) -> Result<JobOutcome, JobError> {
        let input = self.read_files(job).await?;
        if job.mode == Mode::Test {
            return Ok(crate::magic::test_outcome(&input.front, job.category));
        }
        let mut last = None;
        for _ in 0..ENGINE_ATTEMPTS {
            let engine = match job.source {
                JobSource::BatchItem { .. } => self.batch_engine.clone(),
                JobSource::Verification { .. } => self.engine.clone(),
            };
            let input = input.clone();
            // A panic must not take the worker down, nor become a finding: the job is handed back,
            // and after the delivery limit it is a poison message in the dead-letter queue, where
            // an operator can replay it once the engine is fixed.
            let result = tokio::spawn(async move { engine.analyse(input).await })
                .await
                .map_err(|_| JobError::Transient("the analysis engine panicked on this document".into()))?;
            match result {
                Ok(report) => return Ok(JobOutcome::Analysed { report: Box::new(report) }),
                Err(e) if e.is_retryable() => last = Some(e),
                Err(EngineError::Overloaded(why)) if delivery < ENGINE_ATTEMPTS => return Err(JobError::Overloaded(why)),
                Err(e) => {
                    return Ok(JobOutcome::Errored {
                        error: e.item_error(),
                        message: e.to_string(),
                    })
                }
            }
        }
        let e = last.unwrap_or_else(|| EngineError::Failure("the analysis engine failed".into()));
        Ok(JobOutcome::Errored {
            error: e.item_error(),
            message: e.to_string(),
        })
    }

    async fn read_files(&self, job: &JobV1) -> Result<AnalysisInput, JobError> {
        let patience = outage::Patience::for_a_delivery();
        let read = |name: String| async move {
            outage::waiting_out("reading a document", patience, || self.blobs.get(&name, &job.blob_context))
                .await
                .map_err(|e| JobError::Transient(format!("cannot read document: {e}")))
        };
        let front = read(job.front_blob.clone()).await?;
        let back = match &job.back_blob {
            Some(b) => Some(read(b.clone()).await?),
            None => None,
        };
        let selfie = match &job.selfie_blob {
            Some(b) => Some(read(b.clone()).await?),
            None => None,
        };
        Ok(AnalysisInput {
            category: job.category,
            front,
            back,
            selfie,
            biometric_consent: job.biometric_consent,
        })
    }

    async fn report(&self, job: &JobV1, outcome: JobOutcome) -> Result<(), JobError> {
        self.publish(RecorderV1::JobFinished {
            source: job.source.clone(),
            outcome: for_source(&job.source, outcome),
            at: chrono::Utc::now(),
            request_id: job.request_id.clone(),
        })
        .await
    }

    async fn publish(&self, message: RecorderV1) -> Result<(), JobError> {
        Ok(consumer::publish(self.queue.as_ref(), &RecorderMessage::V1(message), Duration::ZERO).await?)
    }
}

/// A journey always ends with a result: a document that could not be analysed becomes an
/// `analyse_impossible` report (which sends it to human review), never an item error.
fn for_source(source: &JobSource, outcome: JobOutcome) -> JobOutcome {
    match (source, outcome) {
        (JobSource::Verification { .. }, JobOutcome::Errored { error, message }) => JobOutcome::Analysed {
            report: Box::new(crate::analysis::unanalysable(error, &message)),
        },
        (_, outcome) => outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ids::{BatchId, BatchItemId, VerificationId};

    #[test]
    fn journey_errors_become_unanalysable_reports_and_batch_errors_stay() {
        let now = chrono::Utc::now();
        let errored = || JobOutcome::Errored {
            error: ItemError::UnreadableDocument,
            message: "truncated".into(),
        };
        let journey = JobSource::Verification {
            verification_id: VerificationId::generate(now),
        };
        match for_source(&journey, errored()) {
            JobOutcome::Analysed { report } => {
                assert_eq!(report.verdict, domain::vocabulary::Verdict::AnalyseImpossible);
                assert_eq!(report.anomalies[0].code, domain::vocabulary::AnomalyCode::DocumentUnreadable);
            }
            other => panic!("{other:?}"),
        }
        let batch = JobSource::BatchItem {
            batch_id: BatchId::generate(now),
            item_id: BatchItemId::generate(now),
        };
        assert_eq!(for_source(&batch, errored()), errored());
    }
}

#[cfg(test)]
mod poison_tests {
    use super::*;
    use crate::flags::StoreFlags;
    use async_trait::async_trait;
    use common::crypto::envelope::MasterKeys;
    use common::queue::sqlite::SqliteQueue;
    use common::store::Store;
    use domain::analysis::{AnalysisInput, AnalysisReport};
    use domain::ids::BatchItemId;
    use domain::vocabulary::BatchStatus;

    /// An engine that panics on every document: the trait's contract broken on purpose.
    struct PanickingEngine;

    #[async_trait]
    impl crate::analysis::Engine for PanickingEngine {
        async fn analyse(&self, _: AnalysisInput) -> Result<AnalysisReport, EngineError> {
            panic!("engine bug");
        }
        fn name(&self) -> &'static str {
            "panicking"
        }
    }

    /// An engine the machine never has CPU for: every analysis starved past its backstop.
    struct StarvedEngine(std::sync::atomic::AtomicU32);

    #[async_trait]
    impl crate::analysis::Engine for StarvedEngine {
        async fn analyse(&self, _: AnalysisInput) -> Result<AnalysisReport, EngineError> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Err(EngineError::Overloaded(
                "the work waited over 240 s for the CPU and was stopped".into(),
            ))
        }
        fn name(&self) -> &'static str {
            "starved"
        }
    }

    /// A store with one company, one batch in progress and one document of it, its job queued,
    /// and a worker with `engine`.
    struct Fixture {
        dir: std::path::PathBuf,
        store: Store,
        worker: Worker,
        job: JobV1,
    }

    async fn fixture(engine: Arc<dyn crate::analysis::Engine>) -> Fixture {
        let dir = std::env::temp_dir().join(format!("sceau-poison-{}", domain::ids::random_hex(8)));
        let store = Store::open(&dir.join("db.sqlite")).unwrap();
        let keys = std::sync::Arc::new(MasterKeys::load_or_create(&dir.join("master.key")).unwrap());
        let blobs = BlobStore::new(dir.join("blobs"), keys.clone()).unwrap();
        let now = chrono::Utc::now();
        let company = store
            .write(move |tx| common::store::companies::create(tx, "Acme", domain::vocabulary::Licence::Group, &keys, now))
            .await
            .unwrap()
            .company
            .id;
        let batch = {
            let company = company.clone();
            store
                .write(move |tx| common::store::batches::create(tx, &company, None, None, std::time::Duration::from_secs(3600), now))
                .await
                .unwrap()
                .id
        };
        let submitted = batch.clone();
        store
            .write(move |tx| common::store::test_support::set_batch_status(tx, &submitted, BatchStatus::InProgress))
            .await
            .unwrap();
        let queue = SqliteQueue::new(store.clone(), 3);
        let item = BatchItemId::generate(now);
        let context = format!("company={company};item={item}");
        blobs
            .put("0123456789abcdef0123456789abcdef", &context, b"bytes".to_vec())
            .await
            .unwrap();
        let job = JobV1 {
            company_id: company.clone(),
            source: JobSource::BatchItem {
                batch_id: batch,
                item_id: item,
            },
            category: DocumentCategory::Identite,
            front_blob: "0123456789abcdef0123456789abcdef".into(),
            back_blob: None,
            selfie_blob: None,
            blob_context: context,
            deadline: now + chrono::Duration::hours(1),
            request_id: None,
            mode: domain::vocabulary::Mode::Live,
            biometric_consent: false,
        };
        queue
            .publish(Topic::JobsBatch, serde_json::to_vec(&Job::V1(job.clone())).unwrap(), Duration::ZERO)
            .await
            .unwrap();
        let worker = Worker {
            queue: Arc::new(queue),
            blobs,
            engine: engine.clone(),
            batch_engine: engine,
            batch_pool: None,
            realtime_slots: 0,
            flags: Arc::new(StoreFlags(store.clone())),
            in_flight: Default::default(),
            paused: Default::default(),
        };
        Fixture { dir, store, worker, job }
    }

    #[tokio::test]
    async fn a_document_the_engine_panics_on_is_dead_lettered_not_recorded() {
        let Fixture { dir, store, worker, .. } = fixture(Arc::new(PanickingEngine)).await;
        let shutdown = CancellationToken::new();
        let running = tokio::spawn(worker.run(1, shutdown.clone()));
        let dead_letters = SqliteQueue::new(store.clone(), 3);
        let dead = || async { dead_letters.dead_letters(Topic::JobsBatch).await.unwrap() };
        let start = std::time::Instant::now();
        while dead().await == 0 {
            assert!(start.elapsed() < Duration::from_secs(30), "the poison job was never dead-lettered");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        shutdown.cancel();
        running.await.unwrap();
        let results = store
            .read(|c| common::store::test_support::queued(c, Topic::Results))
            .await
            .unwrap();
        assert!(!results.iter().any(|r| r.contains("job_finished")), "a panic is not a finding");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A starved analysis is not tried again within its delivery (which must end within its
    /// lease): the job goes back to the queue for a while, and its third delivery records
    /// `engine_failure`.
    #[tokio::test]
    async fn a_starved_analysis_goes_back_to_the_queue_and_fails_on_its_third_delivery() {
        let engine = Arc::new(StarvedEngine(Default::default()));
        let Fixture { dir, worker, job, .. } = fixture(engine.clone()).await;
        for delivery in 1..ENGINE_ATTEMPTS {
            let handed_back = worker.analyse(&job, delivery).await;
            assert!(
                matches!(handed_back, Err(JobError::Overloaded(_))),
                "delivery {delivery}: {handed_back:?}"
            );
            assert_eq!(handed_back.unwrap_err().retry_after(), OVERLOADED_RETRY);
        }
        assert_eq!(
            engine.0.load(std::sync::atomic::Ordering::SeqCst),
            ENGINE_ATTEMPTS - 1,
            "one try per delivery"
        );
        match worker.analyse(&job, ENGINE_ATTEMPTS).await {
            Ok(JobOutcome::Errored { error, .. }) => assert_eq!(error, ItemError::EngineFailure),
            other => panic!("the last delivery records engine_failure: {other:?}"),
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
