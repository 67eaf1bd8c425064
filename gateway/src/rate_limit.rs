//! Rate limits (GCRA): smooth, one timestamp per key, no background task. Keys are often chosen
//! by the client (an address, a token), so the map must stay bounded under a spray of distinct
//! keys: an entry whose timestamp has passed says nothing more than an absent one and is evicted
//! on a later insert (amortised: when the map has doubled, or once per entry lifetime), and past
//! [`MAX_KEYS`] live entries a new key is let through unrecorded rather than grow the map.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most live keys one limiter holds (about 10 MB): beyond, limits on new keys are not enforced.
/// Failing open is deliberate: refusing every new client would make the limiter itself the outage.
pub const MAX_KEYS: usize = 100_000;
/// Below this size the map is never swept for its size alone.
const MIN_SWEEP_LEN: usize = 1024;

/// Wrong API keys a client address may present a minute by default (the document says so); what the
/// gateway applies is the operator's `SCEAU_KEY_FAILURES_PER_MINUTE`, given to [`EdgeLimits::new`].
pub const KEY_FAILURES_PER_MINUTE: u32 = common::config::DEFAULT_KEY_FAILURES_PER_MINUTE;
/// Journey writes (uploads and submit) per session per minute: a few retries of each file.
pub const JOURNEY_WRITES_PER_SESSION: u32 = 60;
/// Journey status polls per session per minute (the page polls every 2 s).
pub const JOURNEY_POLLS_PER_SESSION: u32 = 60;
/// Journey page openings per session per minute: reloads, a second device.
pub const JOURNEY_PAGES_PER_SESSION: u32 = 30;
/// Journey requests of every kind per client address per minute.
pub const JOURNEY_REQUESTS_PER_ADDRESS: u32 = 300;

/// The limits of the edge that are not a company's: keyed by client address or journey session.
pub struct EdgeLimits {
    /// Failed API-key attempts, per client address.
    pub key_failures: RateLimiter,
    /// Journey uploads and submits, per session.
    pub journey_writes: RateLimiter,
    /// Journey status polls, per session.
    pub journey_polls: RateLimiter,
    /// Journey page openings, per session: its own allowance, so a page reloaded after a long
    /// wait is not refused for the polls that preceded it.
    pub journey_pages: RateLimiter,
    /// Every journey request, per client address (second, after the session's own limit).
    pub journey_addresses: RateLimiter,
}

impl EdgeLimits {
    /// The edge's limits, `key_failures_per_minute` wrong API keys a minute per address (the
    /// operator's `SCEAU_KEY_FAILURES_PER_MINUTE`), all of which may come at once.
    pub fn new(key_failures_per_minute: u32) -> Self {
        Self {
            key_failures: RateLimiter::per_minute_with_burst(key_failures_per_minute, key_failures_per_minute),
            journey_writes: RateLimiter::per_minute(JOURNEY_WRITES_PER_SESSION),
            journey_polls: RateLimiter::per_minute(JOURNEY_POLLS_PER_SESSION),
            journey_pages: RateLimiter::per_minute(JOURNEY_PAGES_PER_SESSION),
            journey_addresses: RateLimiter::per_minute(JOURNEY_REQUESTS_PER_ADDRESS),
        }
    }
}

pub struct RateLimiter {
    /// Time between two requests at the sustained rate.
    interval: Duration,
    /// How far ahead of the sustained rate a burst may go.
    burst: Duration,
    max_keys: usize,
    entries: Mutex<Entries>,
}

struct Entries {
    /// Per key, when it is next free of debt (the GCRA "theoretical arrival time").
    next_free: HashMap<String, Instant>,
    /// The map is swept when it reaches this size...
    sweep_at_len: usize,
    /// ...or at this time, when every entry present at the last sweep has expired.
    sweep_at: Instant,
}

impl RateLimiter {
    /// `rate` a minute, bursts of a sixth of it.
    pub fn per_minute(rate: u32) -> Self {
        let rate = rate.max(1);
        Self::per_minute_with_burst(rate, (rate / 6).max(1))
    }

    /// `rate` a minute, with bursts of `burst` requests at once.
    pub fn per_minute_with_burst(rate: u32, burst: u32) -> Self {
        let interval = Duration::from_secs(60) / rate.max(1);
        Self {
            interval,
            burst: interval * burst.max(1),
            max_keys: MAX_KEYS,
            entries: Mutex::new(Entries {
                next_free: HashMap::new(),
                sweep_at_len: MIN_SWEEP_LEN,
                sweep_at: Instant::now(),
            }),
        }
    }

    /// `Ok` when the request may go (and counts it), else the seconds to wait.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        self.check_at(key, Instant::now())
    }

    /// `Ok` when a request would go now, without counting one: for limits charged only on an
    /// outcome known later (a failed API key).
    pub fn peek(&self, key: &str) -> Result<(), u64> {
        let now = Instant::now();
        let Ok(entries) = self.entries.lock() else { return Ok(()) };
        let tat = entries.next_free.get(key).copied().unwrap_or(now).max(now);
        self.wait(tat, now).map_or(Ok(()), Err)
    }

    /// Counts one request even past the limit (what [`peek`](Self::peek) then sees).
    pub fn charge(&self, key: &str) {
        let now = Instant::now();
        let Ok(mut entries) = self.entries.lock() else { return };
        let tat = entries.next_free.get(key).copied().unwrap_or(now).max(now);
        // Never more than one interval beyond the limit: concurrent failures cannot pile up a
        // debt that outlasts the window.
        let next = (tat + self.interval).min(now + self.burst + self.interval);
        self.insert(&mut entries, key, next, now);
    }

    fn check_at(&self, key: &str, now: Instant) -> Result<(), u64> {
        let Ok(mut entries) = self.entries.lock() else { return Ok(()) };
        let tat = entries.next_free.get(key).copied().unwrap_or(now).max(now);
        if let Some(wait) = self.wait(tat, now) {
            return Err(wait);
        }
        self.insert(&mut entries, key, tat + self.interval, now);
        Ok(())
    }

    /// Whole seconds until a request is allowed again, `None` when it is now.
    fn wait(&self, tat: Instant, now: Instant) -> Option<u64> {
        let ahead = tat.duration_since(now);
        (ahead > self.burst).then(|| (ahead - self.burst).as_secs() + 1)
    }

    fn insert(&self, entries: &mut Entries, key: &str, next_free: Instant, now: Instant) {
        if let Some(slot) = entries.next_free.get_mut(key) {
            *slot = next_free;
            return;
        }
        if entries.next_free.len() >= entries.sweep_at_len || now >= entries.sweep_at {
            self.sweep(entries, now);
        }
        if entries.next_free.len() >= self.max_keys {
            metrics::counter!("sceau_rate_limiter_full_total").increment(1);
            return;
        }
        entries.next_free.insert(key.to_owned(), next_free);
    }

    /// Drops every entry that has expired; the next sweep comes when the map has doubled or when
    /// every entry left has expired, so each insert pays O(1) on average.
    fn sweep(&self, entries: &mut Entries, now: Instant) {
        entries.next_free.retain(|_, next_free| *next_free > now);
        entries.next_free.shrink_to(entries.next_free.len() * 2);
        entries.sweep_at_len = (entries.next_free.len() * 2).max(MIN_SWEEP_LEN);
        entries.sweep_at = now + self.burst + self.interval;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().map(|e| e.next_free.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operator's allowance of wrong keys is what an address gets, all at once, then no more.
    #[test]
    fn key_failures_follow_the_configured_allowance() {
        for allowance in [1, 20, 500] {
            let limits = EdgeLimits::new(allowance);
            let charged = (0..allowance + 10)
                .take_while(|_| limits.key_failures.peek("192.0.2.1").is_ok())
                .map(|_| limits.key_failures.charge("192.0.2.1"))
                .count();
            // The charge that reaches the allowance is still answered (401), the next is not;
            // one more may pass if the loop outlasts an interval on a slow machine.
            assert!(
                (allowance + 1..=allowance + 2).contains(&(charged as u32)),
                "allowance {allowance}: {charged}"
            );
            assert!(limits.key_failures.peek("192.0.2.1").is_err(), "allowance {allowance}");
            assert!(limits.key_failures.peek("192.0.2.2").is_ok(), "another address is not charged");
        }
    }

    #[test]
    fn allows_a_burst_then_refuses() {
        let l = RateLimiter::per_minute(12);
        let allowed = (0..10).filter(|_| l.check("a").is_ok()).count();
        assert!((2..=4).contains(&allowed), "{allowed}");
        assert!(l.check("a").is_err());
        assert!(l.check("b").is_ok());
    }

    #[test]
    fn peek_does_not_count_and_charge_does() {
        let l = RateLimiter::per_minute_with_burst(20, 5);
        for _ in 0..50 {
            assert!(l.peek("a").is_ok());
        }
        let charged = (0..50).take_while(|_| l.peek("a").is_ok()).map(|_| l.charge("a")).count();
        assert!((5..=7).contains(&charged), "{charged}");
        let wait = l.peek("a").unwrap_err();
        assert!((1..=4).contains(&wait), "{wait}");
        assert!(l.peek("b").is_ok());
    }

    /// 100,000 distinct keys in one instant, then one request once their window has passed: the
    /// spray is gone from the map.
    #[test]
    fn a_spray_of_keys_is_evicted_once_its_window_has_passed() {
        let l = RateLimiter::per_minute(300);
        let start = Instant::now();
        for i in 0..100_000 {
            assert!(l.check_at(&format!("10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255), start).is_ok());
        }
        assert!(l.len() >= 99_000, "the spray is live within its window: {}", l.len());
        let later = start + Duration::from_secs(61);
        assert!(l.check_at("192.0.2.1", later).is_ok());
        assert!(l.len() <= 2, "{} entries left", l.len());
    }

    /// Within the window, the map stops growing at its cap and a new key is let through.
    #[test]
    fn the_map_is_capped() {
        let mut l = RateLimiter::per_minute(60);
        l.max_keys = 5_000;
        let now = Instant::now();
        for i in 0..20_000 {
            assert!(l.check_at(&i.to_string(), now).is_ok());
        }
        assert_eq!(l.len(), 5_000);
        // Keys already held keep their limit.
        assert!((0..20).any(|_| l.check_at("0", now).is_err()));
    }
}
