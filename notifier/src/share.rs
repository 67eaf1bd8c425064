//! Caps on the deliveries in flight per destination (host and port) and per company. A receiver
//! that hangs holds at most its destination's share of the delivery slots, and a company
//! spreading its webhooks over many such receivers at most its own; an event over a cap goes
//! back to the queue rather than waiting in a slot, so the other receivers keep theirs.

use common::ids::CompanyId;
use common::messages::EventDelivery;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// What a delivery counts against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// `host:port` of the webhook URL, the host in lower case: one server, whatever the path.
    Destination(String),
    Company(CompanyId),
}

/// The deliveries in flight per key; a key is forgotten when its count falls to zero, so the map
/// holds only what is in flight now.
pub(crate) struct Shares {
    per_destination: usize,
    per_company: usize,
    in_flight: Mutex<HashMap<Key, usize>>,
}

/// A delivery's place under its caps, given back when dropped.
pub(crate) struct Permit<'a> {
    shares: &'a Shares,
    keys: Vec<Key>,
}

impl Shares {
    /// Caps of at least one: a cap of zero would never deliver anything.
    pub(crate) fn new(per_destination: usize, per_company: usize) -> Self {
        Self {
            per_destination: per_destination.max(1),
            per_company: per_company.max(1),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// A permit for `event` when neither its destination nor its company is at its cap.
    pub(crate) fn try_acquire(&self, event: &EventDelivery) -> Option<Permit<'_>> {
        let mut keys = vec![Key::Company(event.company_id.clone())];
        // A URL that does not parse has no destination to protect: its attempt fails at once.
        keys.extend(destination(&event.url).map(Key::Destination));
        let mut in_flight = self.lock();
        let full = keys.iter().any(|key| in_flight.get(key).copied().unwrap_or(0) >= self.cap(key));
        if full {
            return None;
        }
        for key in &keys {
            *in_flight.entry(key.clone()).or_insert(0) += 1;
        }
        drop(in_flight);
        Some(Permit { shares: self, keys })
    }

    fn cap(&self, key: &Key) -> usize {
        match key {
            Key::Destination(_) => self.per_destination,
            Key::Company(_) => self.per_company,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Key, usize>> {
        // Counts are updated whole under the lock: a panic elsewhere cannot leave one half-done.
        self.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut in_flight = self.shares.lock();
        for key in &self.keys {
            if let Some(count) = in_flight.get_mut(key) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    in_flight.remove(key);
                }
            }
        }
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
