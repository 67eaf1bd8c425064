//! One call to the API, retried for what a retry can mend: the network or the service failing
//! (5xx), a `rate_limited` answer (after its `Retry-After`), a key held by a request still in
//! flight. Every POST carries its idempotency key, so a retry never does the work twice. Any other
//! answer goes back to the caller, which knows what it means for its step.

use super::DepositError;
use crate::client::api::{Answer, Api, ClientError, ErrorCode};
use serde::de::DeserializeOwned;
use std::time::Duration;

/// Failed attempts (network, 5xx) before giving up: about 15 s of backoff in all.
const FAILURE_TRIES: u32 = 6;
/// Waits for the rate limit before giving up.
const RATE_LIMITED_TRIES: u32 = 60;
/// Waits for a key held by a request in flight: up to 10 s. The service claims a key and runs its
/// request to the end in a task of its own, even when the client is gone, so a resumed run's retry
/// gets the killed run's answer replayed within milliseconds. A key held longer was claimed by a
/// request the service itself never finished (it crashed mid-request), which it frees after
/// 10 minutes: the run stops, resumable, rather than guess whether that request did its work.
const HELD_KEY_TRIES: u32 = 20;
const HELD_KEY_PAUSE: Duration = Duration::from_millis(500);

/// POSTs `body` (None: none) to `path` under `key`; `what` names the step in messages.
pub async fn post(api: &Api, path: &str, body: Option<&[u8]>, key: &str, what: &str) -> Result<Answer, DepositError> {
    call(what, || api.post_raw(path, body.map(<[u8]>::to_vec), key)).await
}

/// GETs `path` and reads its 2xx answer as `T`; `what` names the step in messages.
pub async fn get<T: DeserializeOwned>(api: &Api, path: &str, what: &str) -> Result<T, DepositError> {
    let answer = call(what, || api.get(path)).await?;
    if !answer.is_success() {
        return Err(DepositError::refused(what, &answer));
    }
    serde_json::from_value(answer.body).map_err(|e| DepositError::Unexpected {
        what: what.to_owned(),
        why: e.to_string(),
    })
}

/// How a retried answer is waited for: the pause before the next try and how many tries at most.
fn retried(answer: &Answer) -> Option<(Duration, u32)> {
    match answer.code() {
        Some(ErrorCode::IdempotencyKeyInUse) => Some((HELD_KEY_PAUSE, HELD_KEY_TRIES)),
        Some(ErrorCode::RateLimited) => Some((answer.retry_after.unwrap_or(Duration::from_secs(1)), RATE_LIMITED_TRIES)),
        _ => None,
    }
}

async fn call<F, Fut>(what: &str, mut attempt: F) -> Result<Answer, DepositError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Answer, ClientError>>,
{
    let (mut failures, mut waits) = (0, 0);
    loop {
        let last = match attempt().await {
            Ok(answer) if answer.status >= 500 => answer.refused().to_string(),
            Ok(answer) => {
                let Some((pause, most)) = retried(&answer) else {
                    return Ok(answer);
                };
                waits += 1;
                if waits >= most {
                    return Err(gave_up(what, waits, &answer));
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

fn gave_up(what: &str, tries: u32, answer: &Answer) -> DepositError {
    match answer.code() {
        Some(ErrorCode::IdempotencyKeyInUse) => DepositError::KeyHeld { what: what.to_owned() },
        _ => DepositError::GaveUp {
            what: what.to_owned(),
            tries,
            last: answer.refused().to_string(),
        },
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
