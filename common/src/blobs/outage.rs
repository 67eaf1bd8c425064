//! Background work waits out an outage of the object store where it stands: a job's delivery
//! attempts are for faults of the job, and a bucket down for a minute must not dead-letter every
//! document in flight. A client's request never waits: it is answered 503 at once. The wait is
//! one budget per delivery, whatever its number of steps: a delivery that outlives its queue
//! lease (10 minutes) is handed out a second time while the first still runs.

use super::BlobError;
use std::future::Future;
use std::time::{Duration, Instant};

/// How long one delivery's steps wait, in all, for the store to come back before they fail as
/// any other error does.
pub const PATIENCE: Duration = Duration::from_secs(180);
const FIRST_PAUSE: Duration = Duration::from_millis(500);
const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// The time left to one delivery for waiting out an outage, shared by its steps.
#[derive(Debug, Clone, Copy)]
pub struct Patience {
    until: Instant,
}

impl Patience {
    /// [`PATIENCE`] from now: taken once when a delivery starts.
    pub fn for_a_delivery() -> Self {
        Self::of(PATIENCE)
    }

    fn of(budget: Duration) -> Self {
        Self {
            until: Instant::now() + budget,
        }
    }
}

/// Runs `step` until it ends otherwise than with the store unavailable, pausing between tries
/// (doubling up to 10 s), while `patience` lasts; `what` names the step in the log.
pub async fn waiting_out<T, F, Fut>(what: &str, patience: Patience, step: F) -> Result<T, BlobError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, BlobError>>,
{
    waiting_out_for(what, patience, FIRST_PAUSE, step).await
}

async fn waiting_out_for<T, F, Fut>(what: &str, patience: Patience, first_pause: Duration, mut step: F) -> Result<T, BlobError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, BlobError>>,
{
    let mut pause = first_pause;
    loop {
        match step().await {
            Err(error) if error.is_unavailable() && Instant::now() + pause < patience.until => {
                tracing::warn!(%error, what, pause_ms = pause.as_millis() as u64, "blob store unavailable; waiting for it");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            ended => return ended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blobs::Outage;
    use std::cell::Cell;

    const PAUSE: Duration = Duration::from_millis(10);

    #[tokio::test]
    async fn an_outage_is_waited_out_and_other_errors_are_not() {
        let tries = Cell::new(0);
        let read = waiting_out_for("reading", Patience::of(Duration::from_secs(5)), PAUSE, || async {
            tries.set(tries.get() + 1);
            match tries.get() {
                1 | 2 => Err(BlobError::Unavailable(Outage::Saturated)),
                _ => Ok(7),
            }
        })
        .await;
        assert_eq!((read.unwrap(), tries.get()), (7, 3));

        tries.set(0);
        let missing = waiting_out_for("reading", Patience::of(Duration::from_secs(5)), PAUSE, || async {
            tries.set(tries.get() + 1);
            Err::<(), _>(BlobError::Missing)
        })
        .await;
        assert!(matches!(missing, Err(BlobError::Missing)) && tries.get() == 1);
    }

    #[tokio::test]
    async fn an_outage_longer_than_the_patience_fails() {
        let started = Instant::now();
        let read = waiting_out_for("reading", Patience::of(Duration::from_millis(200)), PAUSE, || async {
            Err::<(), _>(BlobError::Unavailable(Outage::Saturated))
        })
        .await;
        assert!(matches!(read, Err(BlobError::Unavailable(_))));
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    /// The steps of one delivery share its patience: a second step after a long first wait has
    /// only what is left (pauses of 10, 20, 40 ms take the first to 70 ms of 100: the second may
    /// try twice, where a patience of its own would let it try four times).
    #[tokio::test]
    async fn the_steps_of_a_delivery_share_one_patience() {
        let patience = Patience::of(Duration::from_millis(100));
        let tries = Cell::new(0);
        let down = || async {
            tries.set(tries.get() + 1);
            Err::<(), _>(BlobError::Unavailable(Outage::Saturated))
        };
        assert!(waiting_out_for("reading", patience, PAUSE, down).await.is_err());
        assert!(tries.get() >= 2, "the first step waited: {} tries", tries.get());
        tries.set(0);
        assert!(waiting_out_for("writing", patience, PAUSE, down).await.is_err());
        assert!(tries.get() <= 2, "the second step waited anew: {} tries", tries.get());
    }
}
