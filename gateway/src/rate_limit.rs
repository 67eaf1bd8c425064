//! Real-time rate limit per company (GCRA): smooth, one timestamp per key, no background task.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct RateLimiter {
    /// Time between two requests at the sustained rate.
    interval: Duration,
    /// How far ahead of the sustained rate a burst may go.
    burst: Duration,
    next_free: Mutex<HashMap<String, Instant>>,
}

impl RateLimiter {
    pub fn per_minute(rate: u32) -> Self {
        let rate = rate.max(1);
        let interval = Duration::from_secs(60) / rate;
        Self {
            interval,
            burst: interval * (rate / 6).max(1),
            next_free: Mutex::new(HashMap::new()),
        }
    }

    /// `Ok` when the request may go, else the seconds to wait.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        let now = Instant::now();
        let Ok(mut map) = self.next_free.lock() else { return Ok(()) };
        let tat = map.get(key).copied().unwrap_or(now).max(now);
        if tat.duration_since(now) > self.burst {
            let wait = tat.duration_since(now) - self.burst;
            return Err(wait.as_secs() + 1);
        }
        map.insert(key.to_owned(), tat + self.interval);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn allows_a_burst_then_refuses() {
        let l = super::RateLimiter::per_minute(12);
        let allowed = (0..10).filter(|_| l.check("a").is_ok()).count();
        assert!((2..=4).contains(&allowed), "{allowed}");
        assert!(l.check("a").is_err());
        assert!(l.check("b").is_ok());
    }
}
