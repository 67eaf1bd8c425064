//! Background work waits out an outage of the object store where it stands: a job's delivery
//! attempts are for faults of the job, and a bucket down for a minute must not dead-letter every
//! document in flight. A client's request never waits: it is answered 503 at once.

use super::BlobError;
use std::future::Future;
use std::time::{Duration, Instant};

/// How long one step waits for the store to come back before it fails as any other error does.
pub const PATIENCE: Duration = Duration::from_secs(300);
const FIRST_PAUSE: Duration = Duration::from_millis(500);
const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// Runs `step` until it ends otherwise than with the store unavailable, pausing between tries
/// (doubling up to 10 s), for at most [`PATIENCE`]; `what` names the step in the log.
pub async fn waiting_out<T, F, Fut>(what: &str, step: F) -> Result<T, BlobError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, BlobError>>,
{
    waiting_out_for(what, PATIENCE, FIRST_PAUSE, step).await
}

async fn waiting_out_for<T, F, Fut>(what: &str, patience: Duration, first_pause: Duration, mut step: F) -> Result<T, BlobError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, BlobError>>,
{
    let started = Instant::now();
    let mut pause = first_pause;
    loop {
        match step().await {
            Err(error) if error.is_unavailable() && started.elapsed() + pause < patience => {
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
    use std::cell::Cell;

    const PAUSE: Duration = Duration::from_millis(10);

    #[tokio::test]
    async fn an_outage_is_waited_out_and_other_errors_are_not() {
        let tries = Cell::new(0);
        let read = waiting_out_for("reading", Duration::from_secs(5), PAUSE, || async {
            tries.set(tries.get() + 1);
            match tries.get() {
                1 | 2 => Err(BlobError::Unavailable("connection refused".into())),
                _ => Ok(7),
            }
        })
        .await;
        assert_eq!((read.unwrap(), tries.get()), (7, 3));

        tries.set(0);
        let missing = waiting_out_for("reading", Duration::from_secs(5), PAUSE, || async {
            tries.set(tries.get() + 1);
            Err::<(), _>(BlobError::Missing)
        })
        .await;
        assert!(matches!(missing, Err(BlobError::Missing)) && tries.get() == 1);
    }

    #[tokio::test]
    async fn an_outage_longer_than_the_patience_fails() {
        let started = Instant::now();
        let read = waiting_out_for("reading", Duration::from_millis(200), PAUSE, || async {
            Err::<(), _>(BlobError::Unavailable("connection refused".into()))
        })
        .await;
        assert!(matches!(read, Err(BlobError::Unavailable(_))));
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }
}
