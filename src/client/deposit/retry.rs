//! One call to the API, retried for what a retry can mend: the network or the service failing
//! (5xx), a `rate_limited` answer (after its `Retry-After`), a key still held by a request in
//! flight. Every POST carries its idempotency key, so a retry never does the work twice. Any other
//! answer goes back to the caller, which knows what it means for its step.

use super::DepositError;
use crate::client::api::{Answer, Api, ClientError};
use std::time::Duration;

/// Failed attempts (network, 5xx) before giving up: about 15 s of backoff in all.
const FAILURE_TRIES: u32 = 6;
/// Waits for a key held by a request in flight, or for the rate limit, before giving up.
const BUSY_TRIES: u32 = 60;

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
    let (mut failures, mut busy) = (0, 0);
    loop {
        let last = match attempt().await {
            Ok(answer) if answer.status >= 500 => answer.refused().to_string(),
            Ok(answer) => {
                let pause = match (answer.status, answer.error_code()) {
                    (409, Some("idempotency_key_in_use")) => Duration::from_millis(500),
                    (429, Some("rate_limited")) => answer.retry_after.unwrap_or(Duration::from_secs(1)),
                    _ => return Ok(answer),
                };
                busy += 1;
                if busy >= BUSY_TRIES {
                    return Err(DepositError::GaveUp {
                        what: what.to_owned(),
                        tries: busy,
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
