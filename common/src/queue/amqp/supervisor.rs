//! Keeps the queue connected: lapin does not reconnect by itself. The supervisor watches the
//! live link (failures reported by its users, consumer errors, and a periodic status check for
//! processes that only publish), retires it when it breaks, and opens a new one with backoff,
//! re-declaring the topology and restarting the consumers that were running.

use super::link::Link;
use super::shared::Shared;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(5);
/// A link that lived this long was a success: the next loss starts the backoff from the beginning.
const STABLE_AFTER: Duration = Duration::from_secs(30);
/// How often the connection's status is looked at when nobody reports anything.
const HEALTH_CHECK: Duration = Duration::from_millis(250);

pub(super) async fn supervise(shared: Arc<Shared>, first: Arc<Link>) {
    let mut link = first;
    let mut backoff = Backoff::default();
    loop {
        let up_since = Instant::now();
        wait_until_lost(&shared, &link).await;
        shared.retire(&link).await;
        if shared.closed.is_cancelled() {
            return;
        }
        tracing::warn!(generation = link.generation, "broker connection lost; reconnecting");
        if up_since.elapsed() >= STABLE_AFTER {
            backoff = Backoff::default();
        }
        match reconnect(&shared, &mut backoff).await {
            Some(next) => link = next,
            None => return,
        }
    }
}

async fn wait_until_lost(shared: &Shared, link: &Link) {
    let mut checks = tokio::time::interval(HEALTH_CHECK);
    loop {
        tokio::select! {
            () = link.lost() => return,
            () = shared.closed.cancelled() => return,
            _ = checks.tick() => {
                if link.check_lost() {
                    return;
                }
            }
        }
    }
}

/// Tries until a link is up, or returns `None` once the queue is closed.
async fn reconnect(shared: &Shared, backoff: &mut Backoff) -> Option<Arc<Link>> {
    loop {
        let pause = backoff.next_delay();
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = shared.closed.cancelled() => return None,
        }
        let attempt = tokio::select! {
            attempt = shared.establish() => attempt,
            () = shared.closed.cancelled() => return None,
        };
        match attempt {
            Ok(link) => {
                tracing::info!(generation = link.generation, "broker connection re-established");
                return Some(link);
            }
            Err(e) => tracing::warn!(error = %e, retry_in = ?backoff.peek(), "reconnecting to the broker failed"),
        }
    }
}

/// Exponential delays between reconnection attempts, so that a broker coming back up is not met
/// by every process of the deployment at once, repeatedly.
struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST_DELAY }
    }
}

impl Backoff {
    fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = (delay * 2).min(MAX_DELAY);
        delay
    }

    fn peek(&self) -> Duration {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_ceiling() {
        let mut backoff = Backoff::default();
        let delays: Vec<_> = (0..8).map(|_| backoff.next_delay().as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    }
}
