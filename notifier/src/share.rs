//! Caps on the deliveries in flight per destination (host and port) and per company. A receiver
//! that hangs holds at most its destination's share of the delivery slots, and a company
//! spreading its webhooks over many such receivers at most its own; an event over a cap goes
//! back to the queue rather than waiting in a slot, so the other receivers keep theirs. Only a
//! cap held by deliveries younger than [`PATIENCE`] is waited for, each [`PATIENCE`] at most and
//! by a bounded number of deliveries (half the notifier's loops): a receiver answering in a
//! millisecond frees its share a thousand times a second, and sending its next event a second
//! later (the first deferral) would cap it at a few deliveries a second; yet the deliveries
//! waiting for it never hold every loop of the notifier.

use common::ids::CompanyId;
use common::messages::EventDelivery;
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
    /// Deliveries that may wait at once for one full key.
    waiting_per_key: usize,
    in_flight: Mutex<HashMap<Key, Vec<Instant>>>,
    /// The deliveries waiting for a share per full key; forgotten at zero too.
    waiting: Mutex<HashMap<Key, usize>>,
    /// Told when a permit is given back, to the deliveries waiting for one.
    freed: Notify,
}

/// A delivery's place under its caps, given back when dropped.
pub(crate) struct Permit<'a> {
    shares: &'a Shares,
    keys: Vec<Key>,
    started: Instant,
}

/// A delivery's place in line for full caps, left when dropped.
struct InLine<'a> {
    shares: &'a Shares,
    keys: Vec<Key>,
}

/// Why no permit was given: the caps that are full, and when the oldest delivery holding one
/// started.
struct Full {
    keys: Vec<Key>,
    since: Instant,
}

impl Shares {
    /// Caps of at least one: a cap of zero would never deliver anything. `waiting_per_key` may
    /// be zero: then no delivery waits.
    pub(crate) fn new(per_destination: usize, per_company: usize, waiting_per_key: usize) -> Self {
        Self {
            per_destination: per_destination.max(1),
            per_company: per_company.max(1),
            waiting_per_key,
            in_flight: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            freed: Notify::new(),
        }
    }

    /// A permit for `event`, waiting for one while the deliveries that hold its full caps are
    /// younger than [`PATIENCE`], for [`PATIENCE`] at most, and only while fewer deliveries than
    /// `waiting_per_key` already wait; `None` otherwise (a slow or hung receiver, or a busy one).
    pub(crate) async fn acquire(&self, event: &EventDelivery) -> Option<Permit<'_>> {
        let give_up = Instant::now() + PATIENCE;
        let mut in_line = None;
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
            if in_line.is_none() {
                in_line = Some(self.line_up(full.keys)?);
            }
            // Woken by a permit given back, or at the end of the patience to look once more.
            let _ = tokio::time::timeout_at(patience_ends.into(), freed).await;
        }
    }

    /// A place in line for each of `keys`; `None` when `waiting_per_key` deliveries already wait
    /// for one of them.
    fn line_up(&self, keys: Vec<Key>) -> Option<InLine<'_>> {
        let mut waiting = lock(&self.waiting);
        if keys
            .iter()
            .any(|key| waiting.get(key).copied().unwrap_or(0) >= self.waiting_per_key)
        {
            return None;
        }
        for key in &keys {
            *waiting.entry(key.clone()).or_default() += 1;
        }
        Some(InLine { shares: self, keys })
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
        let full: Vec<(&Key, Instant)> = keys
            .iter()
            .filter_map(|key| {
                let starts = in_flight.get(key).filter(|starts| starts.len() >= self.cap(key))?;
                Some((key, starts.iter().min().copied()?))
            })
            .collect();
        if let Some(since) = full.iter().map(|(_, oldest)| *oldest).min() {
            return Err(Full {
                keys: full.into_iter().map(|(key, _)| key.clone()).collect(),
                since,
            });
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
        lock(&self.in_flight).len() + lock(&self.waiting).len()
    }
}

fn lock<T>(map: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counts are updated whole under the lock: a panic elsewhere cannot leave one half-done.
    map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        let mut waiting = lock(&self.shares.waiting);
        for key in &self.keys {
            if let Some(count) = waiting.get_mut(key) {
                *count -= 1;
                if *count == 0 {
                    waiting.remove(key);
                }
            }
        }
    }
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
    use common::ids::EventId;

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
        let shares = Shares::new(2, 10, 4);
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
        let shares = Shares::new(2, 3, 4);
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
        let shares = Shares::new(1, 10, 1);
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
    /// up after the patience, and no more deliveries wait for it than allowed (here one).
    #[tokio::test]
    async fn waits_are_bounded_in_time_and_in_number() {
        let shares = Shares::new(1, 10, 1);
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
        let first_waiter = async {
            let waited = shares.acquire(&hook).await;
            (waited.is_some(), began.elapsed())
        };
        let second_waiter = async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let asked = std::time::Instant::now();
            (shares.acquire(&hook).await.is_some(), asked.elapsed())
        };
        let ((first, first_waited), (second, second_waited), ()) = tokio::join!(first_waiter, second_waiter, renew);
        assert!(!first && first_waited < PATIENCE * 3, "gave up after {first_waited:?}");
        assert!(
            !second && second_waited < Duration::from_millis(5),
            "one waits already: {second_waited:?}"
        );
        drop(held);
        assert_eq!(shares.tracked(), 0);
    }

    #[test]
    fn idle_keys_are_forgotten() {
        let shares = Shares::new(1, 1, 4);
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
