//! Identifiers of the API (`API.md`, Identifiers): generated from a CSPRNG, parsed strictly so a
//! malformed id never reaches a query.

use chrono::{DateTime, Utc};
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};
use std::fmt;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// Fills `buf` with CSPRNG bytes. The system generator failing is not recoverable.
pub fn random_bytes(buf: &mut [u8]) {
    SystemRandom::new()
        .fill(buf)
        .expect("the operating system's random generator is unavailable");
}

/// `n` random lowercase hex characters.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n.div_ceil(2)];
    random_bytes(&mut bytes);
    let mut s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    s.truncate(n);
    s
}

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `n` random base62 characters, without modulo bias (rejection sampling).
pub fn random_base62(n: usize) -> String {
    let mut out = String::with_capacity(n);
    let mut buf = [0u8; 64];
    while out.len() < n {
        random_bytes(&mut buf);
        for b in buf {
            // 248 = 4 * 62: values above are dropped so each character is equally likely.
            if b < 248 && out.len() < n {
                out.push(BASE62[(b % 62) as usize] as char);
            }
        }
    }
    out
}

/// An id string that does not have the expected shape.
#[derive(Debug, Clone, thiserror::Error)]
#[error("malformed {kind} id")]
pub struct MalformedId {
    pub kind: &'static str,
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_date8(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit())
}

/// Shape `<P>-<yyyymmdd>-<12 hex>`.
fn dated_shape(s: &str, prefix: &str) -> bool {
    let Some(rest) = s.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    match rest.split_once('-') {
        Some((date, hex)) => is_date8(date) && is_lower_hex(hex, 12),
        None => false,
    }
}

/// Shape `<P>-<8 hex>-<8 hex>`.
fn pair_shape(s: &str, prefix: &str) -> bool {
    let Some(rest) = s.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    match rest.split_once('-') {
        Some((a, b)) => is_lower_hex(a, 8) && is_lower_hex(b, 8),
        None => false,
    }
}

/// Declares an id type: its strict parser, its generator and its JSON Schema (a string of that
/// `pattern`, described by the type's doc comment).
macro_rules! id_type {
    ($(#[doc = $doc:literal])* $name:ident, $kind:literal, $pattern:literal, $check:expr, $gen:expr) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// A fresh random id.
            pub fn generate(now: DateTime<Utc>) -> Self {
                let make: fn(DateTime<Utc>) -> String = $gen;
                Self(make(now))
            }

            /// Parses an id given by a client or read back from storage.
            pub fn parse(s: &str) -> Result<Self, MalformedId> {
                let check: fn(&str) -> bool = $check;
                if check(s) {
                    Ok(Self(s.to_owned()))
                } else {
                    Err(MalformedId { kind: $kind })
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = MalformedId;
            fn from_str(s: &str) -> Result<Self, MalformedId> {
                Self::parse(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = MalformedId;
            fn try_from(s: String) -> Result<Self, MalformedId> {
                Self::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                let description = [$($doc.trim()),*].join("\n");
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some($pattern))
                    .description(Some(description))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

fn dated(prefix: &str, now: DateTime<Utc>) -> String {
    format!("{prefix}-{}-{}", now.format("%Y%m%d"), random_hex(12))
}

fn pair(prefix: &str) -> String {
    format!("{prefix}-{}-{}", random_hex(8), random_hex(8))
}

id_type!(
    /// `CMP-<yyyymmdd>-<12 hex>`: a client company (tenant).
    CompanyId, "company", "^CMP-[0-9]{8}-[0-9a-f]{12}$", |s| dated_shape(s, "CMP"), |now| dated("CMP", now)
);
id_type!(
    /// `WFL-<yyyymmdd>-<12 hex>`.
    WorkflowId, "workflow", "^WFL-[0-9]{8}-[0-9a-f]{12}$", |s| dated_shape(s, "WFL"), |now| dated("WFL", now)
);
id_type!(
    /// `CSL-<yyyymmdd>-<12 hex>`: a consultation (result).
    ConsultationId, "consultation", "^CSL-[0-9]{8}-[0-9a-f]{12}$", |s| dated_shape(s, "CSL"), |now| dated("CSL", now)
);
id_type!(
    /// `VRF-<yyyymmdd>-<12 hex>`: a verification session.
    VerificationId, "verification", "^VRF-[0-9]{8}-[0-9a-f]{12}$", |s| dated_shape(s, "VRF"), |now| dated("VRF", now)
);
id_type!(
    /// `BAT-<8 hex>-<8 hex>`.
    BatchId, "batch", "^BAT-[0-9a-f]{8}-[0-9a-f]{8}$", |s| pair_shape(s, "BAT"), |_| pair("BAT")
);
id_type!(
    /// `BTI-<8 hex>-<8 hex>`: one deposited document.
    BatchItemId, "batch item", "^BTI-[0-9a-f]{8}-[0-9a-f]{8}$", |s| pair_shape(s, "BTI"), |_| pair("BTI")
);
id_type!(
    /// `MBR-<yyyymmdd>-<12 hex>`: a member of a client company's team (portal user).
    MemberId, "member", "^MBR-[0-9]{8}-[0-9a-f]{12}$", |s| dated_shape(s, "MBR"), |now| dated("MBR", now)
);
id_type!(
    /// `SES-<8 hex>-<8 hex>`: a portal session as its member sees it in their list (never its secret).
    PortalSessionId, "portal session", "^SES-[0-9a-f]{8}-[0-9a-f]{8}$", |s| pair_shape(s, "SES"), |_| pair("SES")
);
id_type!(
    /// `evt_<26 chars>`: a webhook event, kept across retries for deduplication.
    EventId, "event", "^evt_[A-Za-z0-9]{26}$",
    |s| s.strip_prefix("evt_").is_some_and(|r| r.len() == 26 && r.bytes().all(|b| b.is_ascii_alphanumeric())),
    |_| format!("evt_{}", random_base62(26))
);

impl VerificationId {
    /// What the journey's end page shows the customer to quote to the client: the last eight
    /// characters of the id, upper case, in two groups (`VRF-20261129-4c1d3f2a91bc` → `3F2A-91BC`).
    pub fn reference(&self) -> String {
        let tail = &self.0[self.0.len().saturating_sub(8)..];
        let upper = tail.to_ascii_uppercase();
        format!("{}-{}", &upper[..4.min(upper.len())], &upper[4.min(upper.len())..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_reference_is_the_end_of_its_id() {
        let id = VerificationId::parse("VRF-20261129-4c1d3f2a91bc").unwrap();
        assert_eq!(id.reference(), "3F2A-91BC");
    }

    #[test]
    fn generated_ids_parse() {
        let now = Utc::now();
        let w = WorkflowId::generate(now);
        assert!(w.as_str().starts_with(&format!("WFL-{}-", now.format("%Y%m%d"))));
        assert_eq!(WorkflowId::parse(w.as_str()).unwrap(), w);
        let b = BatchId::generate(now);
        assert_eq!(b.as_str().len(), "BAT-".len() + 17);
        assert!(BatchId::parse(b.as_str()).is_ok());
        assert!(EventId::parse(EventId::generate(now).as_str()).is_ok());
    }

    #[test]
    fn malformed_ids_are_refused() {
        for bad in [
            "",
            "WFL-20261122-ABCDEF123456",
            "WFL-2026112-abcdef123456",
            "CSL-20261122-abcdef123456",
            "WFL-20261122-abcdef12345",
            "WFL-20261122-abcdef1234567",
        ] {
            assert!(WorkflowId::parse(bad).is_err(), "{bad}");
        }
        assert!(BatchId::parse("BAT-0123abcd-0123abc").is_err());
        assert!(BatchItemId::parse("BAT-0123abcd-0123abcd").is_err());
        assert!(EventId::parse("evt_short").is_err());
    }

    #[test]
    fn base62_has_requested_length_and_alphabet() {
        let s = random_base62(40);
        assert_eq!(s.len(), 40);
        assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
}
