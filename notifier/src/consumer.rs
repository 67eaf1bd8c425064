//! The notifier's work loop: take an event off the queue, make one attempt, report it to the
//! recorder (with the attempts of the other loops, see `report`), schedule the next attempt or
//! give up, and only then ack, so a crash at any point repeats an attempt (receivers deduplicate
//! on `webhook-id`) rather than losing one.

use crate::delivery::{Deliverer, DeliveryError};
use crate::report::Reports;
use crate::secrets::{SecretError, SecretSource};
use crate::share::Shares;
use chrono::Utc;
use common::messages::{DeliveryAttempt, DeliveryOutcome, EventDelivery};
use common::queue::consumer::{self, Settle};
use common::queue::{Delivery, Outgoing, Queue, QueueError, Topic};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

/// Wait before a message is handed out again when its effects could not be published, or its
/// company's secrets could not be read: long enough not to spin on a sick dependency, short
/// next to the retry ladder.
const REQUEUE_DELAY: Duration = Duration::from_secs(5);

/// Pause after the queue failed to hand out a message, so a broken backend is not spun on.
const RECEIVE_BACKOFF: Duration = Duration::from_secs(1);

/// Wait before an event whose destination is at its cap is looked at again, doubled at each
/// deferral up to [`DEFER_MAX`]: a destination that stays busy costs a few looks a minute per
/// event, one that frees up is served again within seconds.
const DEFER_FIRST: Duration = Duration::from_secs(1);
const DEFER_MAX: Duration = Duration::from_secs(32);

pub(crate) struct Consumer {
    queue: Arc<dyn Queue>,
    secrets: Arc<dyn SecretSource>,
    deliverer: Deliverer,
    shares: Shares,
    reports: Reports,
    retry_schedule: Vec<Duration>,
}

impl Consumer {
    pub(crate) fn new(
        queue: Arc<dyn Queue>,
        secrets: Arc<dyn SecretSource>,
        deliverer: Deliverer,
        shares: Shares,
        reports: Reports,
        retry_schedule: Vec<Duration>,
    ) -> Self {
        Self {
            queue,
            secrets,
            deliverer,
            shares,
            reports,
            retry_schedule,
        }
    }

    /// Handles events until shutdown. Shutdown only interrupts the wait for work: an attempt
    /// already taken runs to its end (bounded by the HTTP timeout), so it is acked, not repeated.
    pub(crate) async fn work(&self, shutdown: &CancellationToken) {
        loop {
            let received = tokio::select! {
                biased;
                () = shutdown.cancelled() => return,
                received = self.queue.receive(&[Topic::Events]) => received,
            };
            match received {
                Ok(delivery) => self.handle(&delivery).await,
                Err(QueueError::Closed) => return,
                Err(err) => {
                    error!(error = %err, "could not receive webhook events");
                    tokio::select! {
                        () = shutdown.cancelled() => return,
                        () = tokio::time::sleep(RECEIVE_BACKOFF) => {}
                    }
                }
            }
        }
    }

    async fn handle(&self, delivery: &Delivery) {
        consumer::handle(
            self.queue.as_ref(),
            delivery,
            |event| async move { (self.attempt(event).await, ()) },
        )
        .await;
    }

    /// One attempt at delivering `event`, its outcome published; what becomes of this copy.
    async fn attempt(&self, event: EventDelivery) -> Settle {
        // Held for the attempt only: the slot's share is given back before the outcome is settled.
        let Some(permit) = self.shares.acquire(&event).await else {
            return self.defer(&event).await;
        };
        let at = Utc::now();
        let mut duration_ms = None;
        let result = match self.secrets.signing_secrets(&event.company_id).await {
            Ok(secrets) => {
                let sent = std::time::Instant::now();
                let result = self.deliverer.deliver(&event, &secrets).await;
                duration_ms = Some(u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX));
                result
            }
            Err(SecretError::Missing) => Err(DeliveryError::NoSecret),
            Err(err @ SecretError::Unavailable(_)) => {
                // Our own outage must not use up the receiver's attempts.
                warn!(error = %err, "webhook signing secrets unavailable; event requeued");
                return Settle::Retry(REQUEUE_DELAY);
            }
        };
        drop(permit);
        let (outcome, next_delay) = decide(event.attempt, &result, &self.retry_schedule);
        log_attempt(&event, &result, outcome, next_delay);
        let record = DeliveryAttempt {
            event_id: event.event_id.clone(),
            attempt: event.attempt,
            at,
            status_code: match &result {
                Ok(code) => Some(*code),
                Err(err) => err.status_code(),
            },
            error: result.as_ref().err().map(ToString::to_string),
            outcome,
            duration_ms,
        };
        // The record first, then the next attempt: where the queue cannot publish and ack in one
        // step, a failure between the two repeats this attempt, and a repeated record is
        // harmless (the recorder keys attempts by event and number), whereas a next attempt
        // published twice would fork the event into two retry ladders.
        if self.reports.report(record).await.is_err() {
            return Settle::Retry(REQUEUE_DELAY);
        }
        match next_delay.map(|delay| next_attempt(&event, delay)).transpose() {
            Ok(None) => Settle::Ack,
            Ok(Some(next)) => Settle::AckPublishing {
                messages: vec![next],
                or_retry: REQUEUE_DELAY,
            },
            Err(err) => {
                warn!(error = %err, "could not encode the next attempt at a webhook; this attempt will be repeated");
                Settle::Retry(REQUEUE_DELAY)
            }
        }
    }

    /// Puts the event back on the queue for later, as the same attempt, and lets go of this copy
    /// (in one step where the queue can): waiting here would hold a delivery slot for a
    /// destination that has its share already. A crash between the two leaves two copies,
    /// which receivers deduplicate on `webhook-id`.
    async fn defer(&self, event: &EventDelivery) -> Settle {
        let later = EventDelivery {
            deferrals: event.deferrals.saturating_add(1),
            ..event.clone()
        };
        let delay = defer_delay(event.deferrals);
        match consumer::outgoing(&later, delay) {
            Ok(message) => {
                debug!(retry_in = ?delay, "webhook destination busy; event deferred");
                Settle::AckPublishing {
                    messages: vec![message],
                    or_retry: REQUEUE_DELAY,
                }
            }
            Err(err) => {
                warn!(error = %err, "could not defer a webhook event; requeued");
                Settle::Retry(REQUEUE_DELAY)
            }
        }
    }
}

/// The next attempt at `event`, published after `delay` with the ack of this one.
fn next_attempt(event: &EventDelivery, delay: Duration) -> Result<Outgoing, QueueError> {
    let next = EventDelivery {
        attempt: event.attempt.saturating_add(1),
        deferrals: 0,
        ..event.clone()
    };
    consumer::outgoing(&next, delay)
}

/// The wait before an event deferred `deferrals` times already is looked at again.
fn defer_delay(deferrals: u32) -> Duration {
    DEFER_FIRST.saturating_mul(1u32 << deferrals.min(16)).min(DEFER_MAX)
}

/// What an attempt's result means for the event: its outcome, and the delay before the next
/// attempt when there is one. Attempt `n` (from 1) that failed is followed after
/// `schedule[n - 1]`; past the end of the schedule the event is dead.
pub(crate) fn decide(attempt: u32, result: &Result<u16, DeliveryError>, schedule: &[Duration]) -> (DeliveryOutcome, Option<Duration>) {
    match result {
        Ok(_) => (DeliveryOutcome::Delivered, None),
        Err(DeliveryError::Gone) => (DeliveryOutcome::Gone, None),
        Err(err) if err.is_permanent() => (DeliveryOutcome::Dead, None),
        Err(_) => {
            // A malformed attempt 0 is read as a first attempt rather than given an extra one.
            let index = usize::try_from(attempt.max(1) - 1).unwrap_or(usize::MAX);
            match schedule.get(index) {
                Some(delay) => (DeliveryOutcome::Retrying, Some(*delay)),
                None => (DeliveryOutcome::Dead, None),
            }
        }
    }
}

/// Logs ids, attempt and status only: bodies carry personal data and headers carry signatures.
fn log_attempt(event: &EventDelivery, result: &Result<u16, DeliveryError>, outcome: DeliveryOutcome, next_delay: Option<Duration>) {
    let event_id = event.event_id.as_str();
    let attempt = event.attempt;
    match (result, outcome) {
        (Ok(status), _) => info!(event_id, attempt, status, "webhook delivered"),
        (Err(err), DeliveryOutcome::Gone) => {
            info!(event_id, attempt, error = %err, "webhook receiver is gone; no more attempts")
        }
        (Err(err), DeliveryOutcome::Retrying) => warn!(
            event_id, attempt, status = err.status_code(), error = %err, retry_in = ?next_delay,
            "webhook attempt failed; next attempt scheduled"
        ),
        (Err(err), _) => warn!(
            event_id, attempt, status = err.status_code(), error = %err,
            "webhook attempt failed; event dead-lettered"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::destination::DestinationError;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn failures_follow_the_schedule_then_die() {
        let schedule = [ms(10), ms(20), ms(30)];
        let failed: Result<u16, DeliveryError> = Err(DeliveryError::Status(500));
        assert_eq!(decide(1, &failed, &schedule), (DeliveryOutcome::Retrying, Some(ms(10))));
        assert_eq!(decide(2, &failed, &schedule), (DeliveryOutcome::Retrying, Some(ms(20))));
        assert_eq!(decide(3, &failed, &schedule), (DeliveryOutcome::Retrying, Some(ms(30))));
        assert_eq!(decide(4, &failed, &schedule), (DeliveryOutcome::Dead, None));
        assert_eq!(decide(9, &failed, &schedule), (DeliveryOutcome::Dead, None));
        assert_eq!(decide(0, &failed, &schedule), (DeliveryOutcome::Retrying, Some(ms(10))));
        assert_eq!(decide(1, &failed, &[]), (DeliveryOutcome::Dead, None));
    }

    #[test]
    fn deferrals_back_off_to_a_ceiling() {
        let delays: Vec<u64> = (0..8).map(|n| defer_delay(n).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 32, 32]);
        assert_eq!(defer_delay(u32::MAX), DEFER_MAX);
    }

    #[test]
    fn success_gone_and_refusals_end_the_event() {
        let schedule = [ms(10)];
        assert_eq!(decide(1, &Ok(204), &schedule), (DeliveryOutcome::Delivered, None));
        assert_eq!(decide(1, &Err(DeliveryError::Gone), &schedule), (DeliveryOutcome::Gone, None));
        let refused = Err(DeliveryError::Destination(DestinationError::HttpNotAllowed));
        assert_eq!(decide(1, &refused, &schedule), (DeliveryOutcome::Dead, None));
        assert_eq!(decide(1, &Err(DeliveryError::NoSecret), &schedule), (DeliveryOutcome::Dead, None));
    }
}
