//! Logs: JSON lines on stderr, filtered by `RUST_LOG` (default `info`). Spans carry the request
//! id; no key, secret or document byte is ever a field.

use serde::{Deserialize, Serialize};
use tracing_subscriber::EnvFilter;

/// The id of the HTTP request that created some work (`x-request-id`), carried in jobs, results
/// and webhook deliveries so that every log line of one document shares it, from the request to
/// the delivery. A client may choose it: the gateway keeps only ids of at most 64 characters of
/// `[A-Za-z0-9._:-]`, so a log line cannot be forged through it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(String);

impl RequestId {
    /// Longest id kept.
    pub const MAX_LEN: usize = 64;

    /// The id if it is of the accepted form.
    pub fn parse(s: &str) -> Option<RequestId> {
        let fits = !s.is_empty() && s.len() <= Self::MAX_LEN && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b));
        fits.then(|| RequestId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `request_id` as a span field: the id, or `-` for work no request created (a deadline, the CLI).
/// An id read back from a message is checked again, so a forged message cannot forge log lines.
pub fn request_field(id: Option<&RequestId>) -> &str {
    id.filter(|id| RequestId::parse(id.as_str()).is_some())
        .map_or("-", RequestId::as_str)
}

/// Installs the global subscriber once; later calls are no-ops (tests start several services).
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_current_span(true)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_short_ids_are_kept() {
        assert_eq!(
            RequestId::parse("7f1c-req.1:a_b").map(|id| id.to_string()).as_deref(),
            Some("7f1c-req.1:a_b")
        );
        assert!(RequestId::parse("").is_none());
        assert!(RequestId::parse("a b").is_none());
        assert!(RequestId::parse("line\nbreak").is_none());
        assert!(RequestId::parse("é").is_none());
        assert!(RequestId::parse(&"x".repeat(65)).is_none());
        assert_eq!(request_field(None), "-");
    }
}
