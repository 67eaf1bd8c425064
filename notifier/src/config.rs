//! Settings of the notifier, with the defaults of `API.md` (Webhooks) and the parser of
//! `SCEAU_RETRY_SCHEDULE`, so a test or an operator can shorten the 27-hour retry ladder.

use std::time::Duration;

/// How the notifier delivers webhooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifierConfig {
    /// Delays between attempts: attempt `n + 1` waits `retry_schedule[n - 1]` after attempt `n`
    /// failed, so there are `retry_schedule.len() + 1` attempts in all.
    pub retry_schedule: Vec<Duration>,
    /// Hosts exempt from the SSRF guard and from the https rule (`SCEAU_WEBHOOK_ALLOW_HOSTS`).
    pub allow_hosts: Vec<String>,
    /// Time a receiver has to answer one attempt.
    pub timeout: Duration,
    /// Deliveries in flight at once; one slow receiver must not hold up the others.
    pub concurrency: usize,
    /// Deliveries in flight to one destination (host and port): a receiver that hangs holds no
    /// more slots than this, and its other events wait on the queue.
    pub per_destination: usize,
    /// Deliveries in flight for one company, whatever its destinations.
    pub per_company: usize,
}

/// The documented ladder: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts, about 27 h).
pub fn default_retry_schedule() -> Vec<Duration> {
    const MIN: u64 = 60;
    const HOUR: u64 = 60 * MIN;
    [5, 5 * MIN, 30 * MIN, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]
        .into_iter()
        .map(Duration::from_secs)
        .collect()
}

impl Default for NotifierConfig {
    fn default() -> Self {
        Self {
            retry_schedule: default_retry_schedule(),
            allow_hosts: Vec::new(),
            timeout: Duration::from_secs(15),
            // Deliveries wait on the network, not on the CPU: slots are cheap, and the caps
            // below leave most of them free while receivers hang. A loop spends most of an
            // attempt after the receiver answered, waiting for the broker to confirm the
            // outcome (5 to 15 ms on RabbitMQ, which writes it to disk first): 8 loops held the
            // distributed notifier to about 530 deliveries a second.
            concurrency: 32,
            per_destination: 2,
            per_company: 4,
        }
    }
}

impl NotifierConfig {
    /// Attempts an event gets before it is dead-lettered.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.retry_schedule.len()).unwrap_or(u32::MAX).saturating_add(1)
    }
}

/// A `SCEAU_RETRY_SCHEDULE` value that cannot be read; the message is meant for the one-line
/// start-up failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("the retry schedule is empty; give delays such as `1s,2s,4s`")]
    Empty,
    #[error("the retry schedule has an empty item; give delays such as `1s,2s,4s`")]
    EmptyItem,
    #[error("retry delay `{0}` has no number; give delays such as `500ms`, `5s`, `30m` or `2h`")]
    MissingNumber(String),
    #[error("retry delay `{0}` has no unit; use ms, s, m or h")]
    MissingUnit(String),
    #[error("retry delay `{0}` has an unknown unit; use ms, s, m or h")]
    UnknownUnit(String),
    #[error("retry delay `{0}` is too large")]
    TooLarge(String),
}

/// Parses a comma-separated list of delays such as `1s,2s,4s` (units `ms`, `s`, `m`, `h`).
pub fn parse_retry_schedule(s: &str) -> Result<Vec<Duration>, ScheduleError> {
    if s.trim().is_empty() {
        // Refused rather than read as "no retries": an empty variable is far more often a
        // templating mistake than a wish to drop every failed webhook at once.
        return Err(ScheduleError::Empty);
    }
    s.split(',').map(|item| parse_delay(item.trim())).collect()
}

fn parse_delay(item: &str) -> Result<Duration, ScheduleError> {
    if item.is_empty() {
        return Err(ScheduleError::EmptyItem);
    }
    let split = item.find(|c: char| !c.is_ascii_digit()).unwrap_or(item.len());
    let (number, unit) = item.split_at(split);
    if number.is_empty() {
        return Err(ScheduleError::MissingNumber(item.to_owned()));
    }
    let value: u64 = number.parse().map_err(|_| ScheduleError::TooLarge(item.to_owned()))?;
    let millis_per_unit: u64 = match unit.trim() {
        "" => return Err(ScheduleError::MissingUnit(item.to_owned())),
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(ScheduleError::UnknownUnit(item.to_owned())),
    };
    value
        .checked_mul(millis_per_unit)
        .map(Duration::from_millis)
        .ok_or_else(|| ScheduleError::TooLarge(item.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_gives_eight_attempts_over_about_27_hours() {
        let config = NotifierConfig::default();
        assert_eq!(config.max_attempts(), 8);
        assert_eq!(config.timeout, Duration::from_secs(15));
        let total: Duration = config.retry_schedule.iter().sum();
        assert_eq!(total, Duration::from_secs(5 + 300 + 1800 + 7200 + 18000 + 36000 + 36000));
    }

    #[test]
    fn parses_every_unit() {
        assert_eq!(
            parse_retry_schedule("1s,2s,4s"),
            Ok(vec![Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(4)])
        );
        assert_eq!(
            parse_retry_schedule(" 50ms , 3m,2h,0s "),
            Ok(vec![
                Duration::from_millis(50),
                Duration::from_secs(180),
                Duration::from_secs(7200),
                Duration::ZERO,
            ])
        );
    }

    #[test]
    fn refuses_malformed_schedules() {
        assert_eq!(parse_retry_schedule(""), Err(ScheduleError::Empty));
        assert_eq!(parse_retry_schedule("  "), Err(ScheduleError::Empty));
        assert_eq!(parse_retry_schedule("1s,,2s"), Err(ScheduleError::EmptyItem));
        assert_eq!(parse_retry_schedule("1s,"), Err(ScheduleError::EmptyItem));
        assert_eq!(parse_retry_schedule("5"), Err(ScheduleError::MissingUnit("5".into())));
        assert_eq!(parse_retry_schedule("s"), Err(ScheduleError::MissingNumber("s".into())));
        assert_eq!(parse_retry_schedule("-1s"), Err(ScheduleError::MissingNumber("-1s".into())));
        assert_eq!(parse_retry_schedule("1.5s"), Err(ScheduleError::UnknownUnit("1.5s".into())));
        assert_eq!(parse_retry_schedule("2d"), Err(ScheduleError::UnknownUnit("2d".into())));
        assert_eq!(parse_retry_schedule("1S"), Err(ScheduleError::UnknownUnit("1S".into())));
        assert!(matches!(
            parse_retry_schedule("99999999999999999999s"),
            Err(ScheduleError::TooLarge(_))
        ));
        assert!(matches!(
            parse_retry_schedule("18446744073709551615h"),
            Err(ScheduleError::TooLarge(_))
        ));
    }
}
