//! One call to the API, retried for what a retry can mend: the network or the service failing
//! (5xx), a `rate_limited` answer (after its `Retry-After`), a key still held by a request in
//! flight. Every POST carries its idempotency key, so a retry never does the work twice. Any other
//! answer goes back to the caller, which knows what it means for its step.
//!
//! A key stays held after its request died with a killed client: the service frees such a claim
//! only after 10 minutes. When a key is still held after a few seconds, the step asks the service
//! whether the dead request did its work (the item is in the batch, the batch is open, submitted);
//! if it did not, the step is posted again under the key with a suffix (`…:2`, `…:3`).

use super::DepositError;
use crate::client::api::{Answer, Api, ClientError};
use std::time::Duration;

/// Failed attempts (network, 5xx) before giving up: about 15 s of backoff in all.
const FAILURE_TRIES: u32 = 6;
/// Waits for the rate limit before giving up.
const RATE_LIMITED_TRIES: u32 = 60;
/// Waits for a key held by a request in flight before asking whether that request is a dead one's.
const HELD_KEY_TRIES: u32 = 6;
/// Keys of one step found held by dead requests before giving up.
const STALE_KEYS: u32 = 5;

/// What posting a step came to.
pub enum Posted<T> {
    /// The service's answer to the step.
    Answer(Answer),
    /// The step's key was held by the request of a killed run, which had done the work: its result.
    DoneBefore(T),
}

/// POSTs a step under `key`; while the key is held by a request that never ends, `done_before`
/// says whether that request did the work (its result) or not (the step goes again under the key
/// with a suffix).
pub async fn post_step<T>(
    api: &Api,
    key: &str,
    path: &str,
    body: Option<&[u8]>,
    what: &str,
    done_before: impl AsyncFn() -> Result<Option<T>, DepositError>,
) -> Result<Posted<T>, DepositError> {
    for stale in 0..STALE_KEYS {
        let key = if stale == 0 {
            key.to_owned()
        } else {
            format!("{key}:{}", stale + 1)
        };
        let answer = post(api, path, body, &key, what).await?;
        if !is_held(&answer) {
            return Ok(Posted::Answer(answer));
        }
        if let Some(result) = done_before().await? {
            return Ok(Posted::DoneBefore(result));
        }
    }
    Err(DepositError::GaveUp {
        what: what.to_owned(),
        tries: STALE_KEYS,
        last: "idempotency_key_in_use".to_owned(),
    })
}

fn is_held(answer: &Answer) -> bool {
    answer.status == 409 && answer.error_code() == Some("idempotency_key_in_use")
}

/// POSTs `body` (None: none) to `path` under `key`; `what` names the step in messages.
pub async fn post(api: &Api, path: &str, body: Option<&[u8]>, key: &str, what: &str) -> Result<Answer, DepositError> {
    call(what, || api.post_raw(path, body.map(<[u8]>::to_vec), key)).await
}

/// GETs `path`; `what` names the step in messages.
pub async fn get(api: &Api, path: &str, what: &str) -> Result<Answer, DepositError> {
    call(what, || api.get(path)).await
}

async fn call<F, Fut>(what: &str, mut attempt: F) -> Result<Answer, DepositError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Answer, ClientError>>,
{
    let (mut failures, mut held, mut limited) = (0, 0, 0);
    loop {
        let last = match attempt().await {
            Ok(answer) if answer.status >= 500 => answer.refused().to_string(),
            Ok(answer) => {
                let (pause, tries, most) = if is_held(&answer) {
                    (Duration::from_millis(500), &mut held, HELD_KEY_TRIES)
                } else if answer.status == 429 && answer.error_code() == Some("rate_limited") {
                    let pause = answer.retry_after.unwrap_or(Duration::from_secs(1));
                    (pause, &mut limited, RATE_LIMITED_TRIES)
                } else {
                    return Ok(answer);
                };
                *tries += 1;
                if *tries >= most {
                    // A key still held goes back to the step, which knows how to ask about it.
                    if is_held(&answer) {
                        return Ok(answer);
                    }
                    return Err(DepositError::GaveUp {
                        what: what.to_owned(),
                        tries: *tries,
                        last: answer.refused().to_string(),
                    });
                }
                tokio::time::sleep(pause).await;
                continue;
            }
            Err(e @ ClientError::Unreachable { .. }) => e.to_string(),
            Err(e) => return Err(e.into()),
        };
        failures += 1;
        if failures >= FAILURE_TRIES {
            return Err(DepositError::GaveUp {
                what: what.to_owned(),
                tries: failures,
                last,
            });
        }
        tokio::time::sleep(backoff(failures)).await;
    }
}

/// 0.5 s, 1 s, 2 s… up to 8 s.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_millis(500 << failures.saturating_sub(1).min(4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_eight_seconds() {
        let waits: Vec<u64> = (1..=7).map(|n| backoff(n).as_millis() as u64).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 8000, 8000, 8000]);
    }
}
