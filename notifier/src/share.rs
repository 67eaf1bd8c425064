//! Caps on the deliveries in flight per destination (host and port) and per company. A receiver
//! that hangs holds at most its destination's share of the delivery slots, and a company
//! spreading its webhooks over many such receivers at most its own; an event over a cap goes
//! back to the queue rather than waiting in a slot, so the other receivers keep theirs. Only a
//! cap held by deliveries younger than [`PATIENCE`] is waited for, and [`PATIENCE`] at most: a
//! receiver answering in a millisecond frees its share a thousand times a second, and sending its
//! next event a second later (the first deferral) would cap it at a few deliveries a second; yet
//! a receiver kept busy by its own events holds a loop that waits for it 50 ms at most, and the
//! loop then goes on with the queue. (A cap on the loops waiting for one key deferred every event
//! past it by a second: one receiver's 20,000 events went at 900 a second instead of 2,000.)

use common::messages::EventDelivery;
use domain::ids::CompanyId;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How long a delivery may wait for a share held by deliveries this young: a receiver that takes
/// longer is a slow one, and its events are deferred at once, as before.
pub(crate) const PATIENCE: Duration = Duration::from_millis(50);

/// What a delivery counts against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// `host:port` of the webhook URL, the host in lower case: one server, whatever the path.
    Destination(String),
    Company(CompanyId),
}

/// The start of each delivery in flight per key; a key is forgotten when none is left, so the
/// map holds only what is in flight now.
pub(crate) struct Shares {
    per_destination: usize,
    per_company: usize,
    in_flight: Mutex<HashMap<Key, Vec<Instant>>>,
    /// Told when a permit is given back, to the deliveries waiting for one.
    freed: Notify,
}

/// A delivery's place under its caps, given back when dropped.
pub(crate) struct Permit<'a> {
    shares: &'a Shares,
    keys: Vec<Key>,
    started: Instant,
}

/// Why no permit was given: the oldest delivery holding a full cap started then.
struct Full {
    since: Instant,
}

impl Shares {
    /// Caps of at least one: a cap of zero would never deliver anything.
    pub(crate) fn new(per_destination: usize, per_company: usize) -> Self {
        Self {
            per_destination: per_destination.max(1),
            per_company: per_company.max(1),
            in_flight: Mutex::new(HashMap::new()),
            freed: Notify::new(),
        }
    }

    /// A permit for `event`, waiting for one while the deliveries that hold its full caps are
    /// younger than [`PATIENCE`], and for [`PATIENCE`] at most; `None` otherwise (a slow or hung
    /// receiver, or one kept busy).
    pub(crate) async fn acquire(&self, event: &EventDelivery) -> Option<Permit<'_>> {
        let give_up = Instant::now() + PATIENCE;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before the look, so a permit given back in between is not missed.
            freed.as_mut().enable();
            let full = match self.take(event) {
                Ok(permit) => return Some(permit),
                Err(full) => full,
            };
            let patience_ends = (full.since + PATIENCE).min(give_up);
            if Instant::now() >= patience_ends {
                return None;
            }
            // Woken by a permit given back, or at the end of the patience to look once more.
            let _ = tokio::time::timeout_at(patience_ends.into(), freed).await;
        }
    }

    /// A permit for `event` when neither its destination nor its company is at its cap.
    #[cfg(test)]
    pub(crate) fn try_acquire(&self, event: &EventDelivery) -> Option<Permit<'_>> {
        self.take(event).ok()
    }

    fn take(&self, event: &EventDelivery) -> Result<Permit<'_>, Full> {
        let mut keys = vec![Key::Company(event.company_id.clone())];
        // A URL that does not parse has no destination to protect: its attempt fails at once.
        keys.extend(destination(&event.url).map(Key::Destination));
        let mut in_flight = lock(&self.in_flight);
        let oldest_full = keys
            .iter()
            .filter_map(|key| in_flight.get(key).filter(|starts| starts.len() >= self.cap(key)))
            .filter_map(|starts| starts.iter().min().copied())
            .min();
        if let Some(since) = oldest_full {
            return Err(Full { since });
        }
        let started = Instant::now();
        for key in &keys {
            in_flight.entry(key.clone()).or_default().push(started);
        }
        drop(in_flight);
        Ok(Permit {
            shares: self,
            keys,
            started,
        })
    }

    fn cap(&self, key: &Key) -> usize {
        match key {
            Key::Destination(_) => self.per_destination,
            Key::Company(_) => self.per_company,
        }
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        lock(&self.in_flight).len()
    }
}

fn lock<T>(map: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counts are updated whole under the lock: a panic elsewhere cannot leave one half-done.
    map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut in_flight = lock(&self.shares.in_flight);
        for key in &self.keys {
            if let Some(starts) = in_flight.get_mut(key) {
                if let Some(mine) = starts.iter().position(|s| *s == self.started) {
                    starts.swap_remove(mine);
                }
                if starts.is_empty() {
                    in_flight.remove(key);
                }
            }
        }
        drop(in_flight);
        self.shares.freed.notify_waiters();
    }
}

/// `host:port` of a webhook URL (the scheme's port when none is given).
fn destination(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    let port = url.port_or_known_default()?;
    Some(format!("{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use domain::ids::EventId;

    fn event(company: &CompanyId, url: &str) -> EventDelivery {
        EventDelivery {
            event_id: EventId::generate(Utc::now()),
            company_id: company.clone(),
            url: url.to_owned(),
            body: "{}".into(),
            attempt: 1,
            deferrals: 0,
            request_id: None,
        }
    }

    #[test]
    fn a_destination_holds_at_most_its_share() {
        let shares = Shares::new(2, 10);
        let (a, b) = (CompanyId::generate(Utc::now()), CompanyId::generate(Utc::now()));
        let first = shares.try_acquire(&event(&a, "https://slow.example/hook/1"));
        let second = shares.try_acquire(&event(&b, "https://SLOW.example:443/other"));
        assert!(first.is_some() && second.is_some());
        assert!(
            shares.try_acquire(&event(&a, "https://slow.example/hook/2")).is_none(),
            "same host and port, whatever the path, case or company"
        );
        assert!(shares.try_acquire(&event(&a, "https://slow.example:8443/hook")).is_some());
        assert!(shares.try_acquire(&event(&a, "https://fast.example/hook")).is_some());
        drop(first);
        assert!(shares.try_acquire(&event(&a, "https://slow.example/hook/2")).is_some());
    }

    #[test]
    fn a_company_holds_at_most_its_share_over_many_hosts() {
        let shares = Shares::new(2, 3);
        let (a, b) = (CompanyId::generate(Utc::now()), CompanyId::generate(Utc::now()));
        let held: Vec<_> = (0..3)
            .map(|i| shares.try_acquire(&event(&a, &format!("https://h{i}.evil.example/"))))
            .collect();
        assert!(held.iter().all(Option::is_some));
        assert!(shares.try_acquire(&event(&a, "https://h9.evil.example/")).is_none());
        assert!(shares.try_acquire(&event(&b, "https://h9.evil.example/")).is_some());
    }

    /// A share held by young deliveries is waited for and taken when given back; one held past
    /// the patience (a slow receiver) is refused at once.
    #[tokio::test]
    async fn a_share_is_waited_for_only_while_its_holders_are_young() {
        let shares = Shares::new(1, 10);
        let company = CompanyId::generate(Utc::now());
        let hook = event(&company, "https://fast.example/hook");
        let held = shares.try_acquire(&hook).expect("a free share");
        let began = std::time::Instant::now();
        let (waited, ()) = tokio::join!(shares.acquire(&hook), async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            drop(held);
        });
        assert!(waited.is_some(), "taken once given back");
        assert!(began.elapsed() < PATIENCE, "{:?}", began.elapsed());

        let slow = waited;
        let began = std::time::Instant::now();
        assert!(shares.acquire(&hook).await.is_none(), "held past the patience");
        assert!(began.elapsed() >= PATIENCE - Duration::from_millis(10), "{:?}", began.elapsed());
        let began = std::time::Instant::now();
        assert!(shares.acquire(&hook).await.is_none());
        assert!(began.elapsed() < Duration::from_millis(5), "an old holder: refused at once");
        drop(slow);
    }

    /// A receiver answering at once keeps its share young: a delivery waiting for it still gives
    /// up after the patience, and its loop goes on with the queue.
    #[tokio::test]
    async fn a_wait_for_a_share_kept_young_ends_after_the_patience() {
        let shares = Shares::new(1, 10);
        let company = CompanyId::generate(Utc::now());
        let hook = event(&company, "https://fast.example/hook");
        let held = std::sync::Mutex::new(shares.try_acquire(&hook));
        let renew = async {
            // The share given back and taken again at once, every millisecond: always young.
            for _ in 0..200 {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let mut held = held.lock().unwrap();
                *held = None;
                *held = shares.try_acquire(&hook);
            }
        };
        let began = std::time::Instant::now();
        let waiter = async {
            let waited = shares.acquire(&hook).await;
            (waited.is_some(), began.elapsed())
        };
        let ((taken, waited), ()) = tokio::join!(waiter, renew);
        assert!(!taken && waited < PATIENCE * 3, "gave up after {waited:?}");
        drop(held);
        assert_eq!(shares.tracked(), 0);
    }

    #[test]
    fn idle_keys_are_forgotten() {
        let shares = Shares::new(1, 1);
        let company = CompanyId::generate(Utc::now());
        for i in 0..50 {
            let permit = shares.try_acquire(&event(&company, &format!("https://h{i}.example/")));
            assert!(permit.is_some());
        }
        assert_eq!(shares.tracked(), 0, "nothing in flight, nothing kept");
        let unparsable = shares.try_acquire(&event(&company, "not a url"));
        assert!(unparsable.is_some(), "only the company counts for a URL without a host");
        assert!(shares.try_acquire(&event(&company, "not a url")).is_none());
    }
}
