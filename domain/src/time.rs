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

/// Serde for a `DateTime<Utc>` in the one format: `#[serde(with = "domain::time::serde_millis")]`.
pub mod serde_millis {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format(*t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(d)?;
        super::parse(&text).ok_or_else(|| serde::de::Error::custom("not an RFC 3339 timestamp"))
    }
}

/// The same for an optional timestamp (`null` when absent).
pub mod serde_millis_opt {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&super::format(*t)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => super::parse(&text)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom("not an RFC 3339 timestamp")),
            None => Ok(None),
        }
    }
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
