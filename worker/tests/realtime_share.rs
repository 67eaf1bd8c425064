//! The real-time lane on a queue that hands it out first in, first out (as RabbitMQ does): the
//! worker keeps a company to its share of the slots, so another company's journey waiting behind
//! a burst is taken next, not last; and a slot reserved for journeys takes one at once while batch
//! documents fill the others. An in-memory queue stands in for the broker, and engines that hold
//! every document until the test lets them go keep the jobs in flight.

use async_trait::async_trait;
use chrono::Utc;
use common::blobs::BlobStore;
use common::crypto::envelope::MasterKeys;
use common::messages::{Job, JobSource, JobV1, RecorderMessage, RecorderV1};
use common::queue::{Delivery, Queue, QueueError, Topic};
use domain::analysis::{AnalysisInput, AnalysisReport};
use domain::ids::{BatchId, BatchItemId, CompanyId, VerificationId};
use domain::vocabulary::{DocumentCategory, ItemError};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use worker::analysis::{Engine, EngineError};
use worker::flags::{FlagError, LiveFlags};
use worker::jobs::Worker;

/// Messages waiting (topic, payload, tag), messages handed out by tag, and the last tag.
type FifoState = (VecDeque<(Topic, Vec<u8>, u64)>, HashMap<u64, (Topic, Vec<u8>)>, u64);

/// First in, first out per topic, like a broker's queue; `fair` is what it claims to do.
struct FifoQueue {
    fair: bool,
    state: Mutex<FifoState>,
    /// Every delivery handed out, in order: its topic and its document's blob.
    handed: Mutex<Vec<(Topic, String)>>,
}

impl FifoQueue {
    fn new(fair: bool) -> Self {
        Self {
            fair,
            state: Mutex::new((VecDeque::new(), HashMap::new(), 0)),
            handed: Mutex::new(Vec::new()),
        }
    }

    fn take(&self, topics: &[Topic]) -> Option<Delivery> {
        let mut state = self.state.lock().unwrap();
        let position = topics.iter().find_map(|t| state.0.iter().position(|(topic, _, _)| topic == t))?;
        let (topic, payload, tag) = state.0.remove(position)?;
        state.1.insert(tag, (topic, payload.clone()));
        if let Ok(Job::V1(job)) = serde_json::from_slice::<Job>(&payload) {
            self.handed.lock().unwrap().push((topic, job.front_blob));
        }
        Some(Delivery {
            topic,
            payload,
            attempts: 1,
            tag,
        })
    }
}

#[async_trait]
impl Queue for FifoQueue {
    async fn publish(&self, topic: Topic, payload: Vec<u8>, _delay: Duration) -> Result<(), QueueError> {
        let mut state = self.state.lock().unwrap();
        state.2 += 1;
        let tag = state.2;
        state.0.push_back((topic, payload, tag));
        Ok(())
    }

    fn shares_fairly(&self, _topic: Topic) -> bool {
        self.fair
    }

    async fn receive(&self, topics: &[Topic]) -> Result<Delivery, QueueError> {
        loop {
            if let Some(d) = self.take(topics) {
                return Ok(d);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    async fn ack(&self, delivery: &Delivery) -> Result<(), QueueError> {
        self.state.lock().unwrap().1.remove(&delivery.tag);
        Ok(())
    }

    async fn nack(&self, delivery: &Delivery, _delay: Duration) -> Result<(), QueueError> {
        let mut state = self.state.lock().unwrap();
        if let Some((topic, payload)) = state.1.remove(&delivery.tag) {
            state.0.push_back((topic, payload, delivery.tag));
        }
        Ok(())
    }
}

/// Records the documents it is given (their bytes are their names, after the engine's `prefix`),
/// in order, in a list the engines of one worker share, and answers none until the gate opens.
struct HeldEngine {
    prefix: &'static str,
    seen: Arc<Mutex<Vec<String>>>,
    gate: Arc<watch::Sender<bool>>,
}

#[async_trait]
impl Engine for HeldEngine {
    async fn analyse(&self, input: AnalysisInput) -> Result<AnalysisReport, EngineError> {
        let name = String::from_utf8_lossy(&input.front);
        self.seen.lock().unwrap().push(format!("{}{name}", self.prefix));
        let mut open = self.gate.subscribe();
        let _ = open.wait_for(|open| *open).await;
        Ok(worker::analysis::unanalysable(ItemError::UnreadableDocument, "test"))
    }

    fn name(&self) -> &'static str {
        "held"
    }
}

/// Every batch open, AI allowed, no drain.
struct OpenFlags;

#[async_trait]
impl LiveFlags for OpenFlags {
    async fn batch_accepts_work(&self, _: &BatchId) -> Result<bool, FlagError> {
        Ok(true)
    }
    async fn ai_enabled(&self, _: &CompanyId) -> Result<bool, FlagError> {
        Ok(true)
    }
    async fn draining(&self) -> Result<bool, FlagError> {
        Ok(false)
    }
}

/// A worker of two slots (and `realtime_slots` reserved for journeys) on a queue, with engines
/// that hold every document: journeys' documents are seen under their name, batch documents as
/// `batch:<name>`.
struct Bench {
    dir: std::path::PathBuf,
    blobs: BlobStore,
    queue: Arc<FifoQueue>,
    engine: Arc<HeldEngine>,
    shutdown: CancellationToken,
    worker: Option<Worker>,
    running: Option<tokio::task::JoinHandle<()>>,
    published: usize,
    /// The document's name of each blob.
    names: HashMap<String, String>,
}

impl Bench {
    /// The bench, its worker not started yet.
    fn new(fair_queue: bool, realtime_slots: usize) -> Bench {
        let dir = std::env::temp_dir().join(format!("sceau-share-{}", domain::ids::random_hex(8)));
        std::fs::create_dir_all(&dir).unwrap();
        let keys = Arc::new(MasterKeys::load_or_create(&dir.join("master.key")).unwrap());
        let blobs = BlobStore::new(dir.join("blobs"), keys).unwrap();
        let queue = Arc::new(FifoQueue::new(fair_queue));
        let (seen, gate) = (Arc::new(Mutex::new(Vec::new())), Arc::new(watch::channel(false).0));
        let engine = Arc::new(HeldEngine {
            prefix: "",
            seen: seen.clone(),
            gate: gate.clone(),
        });
        let batch_engine = Arc::new(HeldEngine {
            prefix: "batch:",
            seen,
            gate,
        });
        let worker = Worker {
            queue: queue.clone(),
            blobs: blobs.clone(),
            engine: engine.clone(),
            batch_engine,
            batch_pool: None,
            realtime_slots,
            flags: Arc::new(OpenFlags),
            in_flight: Default::default(),
            paused: Default::default(),
        };
        Bench {
            dir,
            blobs,
            queue,
            engine,
            shutdown: CancellationToken::new(),
            worker: Some(worker),
            running: None,
            published: 0,
            names: HashMap::new(),
        }
    }

    fn start(&mut self) {
        if let Some(worker) = self.worker.take() {
            self.running = Some(tokio::spawn(worker.run(2, self.shutdown.clone())));
        }
    }

    /// Puts a journey's job of `company` on the real-time lane; its document's bytes are `name`.
    async fn journey(&mut self, company: &CompanyId, name: &str) {
        let source = JobSource::Verification {
            verification_id: VerificationId::generate(Utc::now()),
        };
        self.publish(Topic::JobsRealtime, company, source, name).await;
    }

    /// Puts a batch document of `company` on the batch lane; its bytes are `name`.
    async fn batch_document(&mut self, company: &CompanyId, name: &str) {
        let source = JobSource::BatchItem {
            batch_id: BatchId::generate(Utc::now()),
            item_id: BatchItemId::generate(Utc::now()),
        };
        self.publish(Topic::JobsBatch, company, source, name).await;
    }

    async fn publish(&mut self, topic: Topic, company: &CompanyId, source: JobSource, name: &str) {
        let blob = format!("{:032x}", self.published);
        self.published += 1;
        let context = format!("company={company};test={name}");
        self.blobs.put(&blob, &context, name.as_bytes().to_vec()).await.unwrap();
        self.names.insert(blob.clone(), name.to_owned());
        let job = Job::V1(JobV1 {
            company_id: company.clone(),
            source,
            category: DocumentCategory::Identite,
            front_blob: blob,
            back_blob: None,
            selfie_blob: None,
            blob_context: context,
            deadline: Utc::now() + chrono::Duration::hours(1),
            request_id: None,
            mode: domain::vocabulary::Mode::Live,
            biometric_consent: false,
        });
        self.queue
            .publish(topic, serde_json::to_vec(&job).unwrap(), Duration::ZERO)
            .await
            .unwrap();
    }

    fn seen(&self) -> Vec<String> {
        self.engine.seen.lock().unwrap().clone()
    }

    /// Waits until the engine holds `n` documents.
    async fn engine_holds(&self, n: usize) {
        let started = Instant::now();
        while self.seen().len() < n {
            assert!(started.elapsed() < Duration::from_secs(30), "the engine got only {:?}", self.seen());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn published_on(&self, topic: Topic, kind: fn(&[u8]) -> bool) -> usize {
        let state = self.queue.state.lock().unwrap();
        let queued = state.0.iter().map(|(t, p, _)| (t, p));
        let held = state.1.values().map(|(t, p)| (t, p));
        queued.chain(held).filter(|(t, p)| **t == topic && kind(p)).count()
    }

    /// Lets the engine answer, waits until every job is finished, stops the worker; the
    /// documents in the order the engine got them.
    async fn finish(self) -> Vec<String> {
        self.engine.gate.send_replace(true);
        let finished = |p: &[u8]| matches!(serde_json::from_slice(p), Ok(RecorderMessage::V1(RecorderV1::JobFinished { .. })));
        let started = Instant::now();
        while self.published_on(Topic::Results, finished) < self.published {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "not every job finished: {:?}",
                self.seen()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let seen = self.seen();
        self.shutdown.cancel();
        if let Some(running) = self.running {
            running.await.unwrap();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        let mut once = seen.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), seen.len(), "each job analysed once: {seen:?}");
        assert_eq!(seen.len(), self.published);
        seen
    }
}

fn companies() -> (CompanyId, CompanyId) {
    (CompanyId::generate(Utc::now()), CompanyId::generate(Utc::now()))
}

/// The two documents that filled the slots, in name order (the two slots race to the engine).
fn first_two(seen: &[String]) -> Vec<String> {
    let mut two = seen[..2].to_vec();
    two.sort();
    two
}

#[tokio::test]
async fn another_companys_journey_waiting_behind_a_burst_is_taken_next() {
    let (a, b) = companies();
    let mut bench = Bench::new(false, 0);
    for i in 0..6 {
        bench.journey(&a, &format!("A{i}")).await;
    }
    bench.journey(&b, "B0").await;
    bench.start();
    bench.engine_holds(2).await;
    let first = first_two(&bench.seen());
    // Which of A's jobs gets A's share depends on which slot is quicker.
    assert!(
        first[0].starts_with('A') && first[1] == "B0",
        "B's job takes the slot A already had its share of: {first:?}"
    );
    bench.finish().await;
}

#[tokio::test]
async fn a_journey_arriving_during_a_burst_goes_ahead_of_it() {
    let (a, b) = companies();
    let mut bench = Bench::new(false, 0);
    for i in 0..6 {
        bench.journey(&a, &format!("A{i}")).await;
    }
    bench.start();
    // A alone: its share, then the overflow lane, fill both slots.
    bench.engine_holds(2).await;
    assert!(bench.seen().iter().all(|d| d.starts_with('A')));
    bench.journey(&b, "B0").await;
    let (queue, names) = (bench.queue.clone(), bench.names.clone());
    bench.finish().await;
    // The order jobs are handed out, not the order the engine meets them: a slot's read of its
    // document may take longer than the other's on a loaded machine.
    let handed: Vec<(Topic, String)> = queue
        .handed
        .lock()
        .unwrap()
        .iter()
        .map(|(t, blob)| (*t, names[blob].clone()))
        .collect();
    let at = |topic: Topic, name: &str| handed.iter().position(|(t, n)| *t == topic && n == name).unwrap();
    assert!(
        at(Topic::JobsRealtime, "B0") < at(Topic::JobsRealtimeOverflow, "A3"),
        "B's job is taken by the first slot to free up, not after A's burst: {handed:?}"
    );
}

#[tokio::test]
async fn a_queue_that_shares_fairly_is_left_to_do_it() {
    let (a, b) = companies();
    let mut bench = Bench::new(true, 0);
    for i in 0..6 {
        bench.journey(&a, &format!("A{i}")).await;
    }
    bench.journey(&b, "B0").await;
    bench.start();
    bench.engine_holds(2).await;
    assert_eq!(first_two(&bench.seen()), ["A0", "A1"], "the worker leaves the order to the queue");
    assert_eq!(bench.published_on(Topic::JobsRealtimeOverflow, |_| true), 0);
    bench.finish().await;
}

#[tokio::test]
async fn a_journey_takes_the_reserved_slot_while_batch_documents_fill_the_others() {
    let (a, b) = companies();
    let mut bench = Bench::new(false, 1);
    for i in 0..4 {
        bench.batch_document(&a, &format!("D{i}")).await;
    }
    bench.start();
    bench.engine_holds(2).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let held = bench.seen();
    assert_eq!(held.len(), 2, "the reserved slot takes no batch document: {held:?}");
    assert!(
        held.iter().all(|d| d.starts_with("batch:D")),
        "batch documents go to the batch engine: {held:?}"
    );
    bench.journey(&b, "J0").await;
    bench.engine_holds(3).await;
    assert_eq!(bench.seen()[2], "J0", "taken at once, by the journeys' engine");
    bench.finish().await;
}
