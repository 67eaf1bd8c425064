//! One timestamp format everywhere (RFC 3339, UTC, milliseconds, `Z`): it sorts as text in
//! SQLite and is what clients read.

use chrono::{DateTime, SecondsFormat, Utc};

pub fn format(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Parses what [`format`] wrote (or any RFC 3339 timestamp).
pub fn parse(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc))
}

/// Milliseconds since the Unix epoch, for queue visibility times.
pub fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_sorts_as_text() {
        let a = chrono::Utc::now();
        let b = a + chrono::Duration::milliseconds(5);
        assert!(super::format(a) < super::format(b));
        assert_eq!(super::parse(&super::format(a)).unwrap().timestamp_millis(), a.timestamp_millis());
    }
}
