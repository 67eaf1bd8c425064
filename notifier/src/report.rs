//! Reports of delivery attempts to the recorder, published together: the attempts that end
//! while earlier reports await the broker's confirm go out in one message. On RabbitMQ a report
//! each doubled the broker's work per webhook (a publish, a confirm, a delivery and an ack on
//! `results` beside those on `events`), and the broker took most of a two-core machine's CPU.
//!
//! An attempt's event is acked only once its report is confirmed: a crash in between repeats the
//! attempt, and never loses its record.

use common::messages::{DeliveryAttempt, RecorderMessage, RecorderV1};
use common::queue::{consumer, Queue, QueueError};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

/// Attempts in one report: a bound on the message (about 200 bytes an attempt).
const MOST_PER_REPORT: usize = 64;

/// Reports awaiting their confirm at once. One at a time, an attempt ending just after a
/// report left would wait for two confirms; a few in flight keep it to about one.
const REPORTS_IN_FLIGHT: usize = 4;

/// The report of an attempt was not published: the attempt will be made again.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the report of a delivery attempt was not published: {0}")]
pub(crate) struct ReportError(Arc<str>);

/// An attempt waiting to be reported, and who waits for its confirm.
struct Pending {
    attempt: DeliveryAttempt,
    confirmed: oneshot::Sender<Result<(), ReportError>>,
}

/// The handle the delivery loops report through; the reporting task ends once every handle is
/// dropped and what it holds is published.
#[derive(Clone)]
pub(crate) struct Reports {
    pending: mpsc::UnboundedSender<Pending>,
}

impl Reports {
    /// Starts the reporting task on `queue`.
    pub(crate) fn start(queue: Arc<dyn Queue>) -> (Reports, tokio::task::JoinHandle<()>) {
        // Bounded by the loops: each waits for its own report before it takes another event.
        let (pending, waiting) = mpsc::unbounded_channel();
        (Reports { pending }, tokio::spawn(publish_reports(queue, waiting)))
    }

    /// Reports `attempt` to the recorder; answers once the queue has it.
    pub(crate) async fn report(&self, attempt: DeliveryAttempt) -> Result<(), ReportError> {
        let (confirmed, confirm) = oneshot::channel();
        let gone = || ReportError("the reporting task has stopped".into());
        self.pending.send(Pending { attempt, confirmed }).map_err(|_| gone())?;
        confirm.await.map_err(|_| gone())?
    }
}

/// Publishes what waits, up to [`MOST_PER_REPORT`] attempts a message and [`REPORTS_IN_FLIGHT`]
/// messages awaiting their confirm, then tells each attempt's loop.
async fn publish_reports(queue: Arc<dyn Queue>, mut waiting: mpsc::UnboundedReceiver<Pending>) {
    let mut in_flight = JoinSet::new();
    loop {
        if in_flight.len() >= REPORTS_IN_FLIGHT {
            in_flight.join_next().await;
            continue;
        }
        let first = tokio::select! {
            next = waiting.recv() => next,
            Some(_) = in_flight.join_next(), if !in_flight.is_empty() => continue,
        };
        let Some(first) = first else { break };
        let mut batch = vec![first];
        while batch.len() < MOST_PER_REPORT {
            match waiting.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        in_flight.spawn(publish(queue.clone(), batch));
    }
    while in_flight.join_next().await.is_some() {}
}

/// Publishes one report of `batch`'s attempts and answers each of them.
async fn publish(queue: Arc<dyn Queue>, batch: Vec<Pending>) {
    let (attempts, confirmed): (Vec<DeliveryAttempt>, Vec<_>) = batch.into_iter().map(|p| (p.attempt, p.confirmed)).unzip();
    let count = attempts.len();
    let message = RecorderMessage::V1(RecorderV1::DeliveryAttempts { attempts });
    let answer = consumer::publish(queue.as_ref(), &message, Duration::ZERO)
        .await
        .map_err(|e: QueueError| {
            tracing::warn!(error = %e, attempts = count, "could not report delivery attempts; they will be made again");
            ReportError(e.to_string().into())
        });
    for confirmed in confirmed {
        // A loop that stopped waiting has nothing left to ack.
        let _ = confirmed.send(answer.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::messages::DeliveryOutcome;
    use common::queue::Topic;
    use common::store::queue::SqliteQueue;
    use common::store::test_support::TempStore;
    use domain::ids::EventId;

    fn attempt() -> DeliveryAttempt {
        DeliveryAttempt {
            event_id: EventId::generate(chrono::Utc::now()),
            attempt: 1,
            at: chrono::Utc::now(),
            status_code: Some(204),
            error: None,
            outcome: DeliveryOutcome::Delivered,
            duration_ms: Some(1),
        }
    }

    /// A hundred attempts ending together make two reports (64 and 36), each attempt in one of
    /// them, and each loop is answered once its report is on the queue.
    #[tokio::test]
    async fn attempts_ending_together_are_reported_together() {
        let store = TempStore::new("reports");
        let queue: Arc<dyn Queue> = Arc::new(SqliteQueue::new(store.handle(), 5));
        let (reports, reporting) = Reports::start(queue.clone());
        let attempts: Vec<DeliveryAttempt> = (0..100).map(|_| attempt()).collect();
        let mut loops = JoinSet::new();
        for a in attempts.clone() {
            let reports = reports.clone();
            loops.spawn(async move { reports.report(a).await });
        }
        while let Some(answer) = loops.join_next().await {
            answer.expect("loop").expect("reported");
        }
        drop(reports);
        reporting.await.expect("reporting ends with its last handle");

        let mut sizes = Vec::new();
        let mut seen = Vec::new();
        while let Ok(Ok(delivery)) = tokio::time::timeout(Duration::from_millis(200), queue.receive(&[Topic::Results])).await {
            let message: RecorderMessage = serde_json::from_slice(&delivery.payload).expect("decode");
            let RecorderMessage::V1(RecorderV1::DeliveryAttempts { attempts }) = message else {
                panic!("not a report of attempts: {message:?}");
            };
            sizes.push(attempts.len());
            seen.extend(attempts);
            queue.ack(&delivery).await.expect("ack");
        }
        assert_eq!(sizes, [64, 36]);
        assert_eq!(seen, attempts);
    }
}
