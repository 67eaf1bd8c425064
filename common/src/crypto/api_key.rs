//! API keys: `sk_live_<40 base62>` (full) and `rk_live_<40 base62>` (read-only). Only a SHA-256
//! hash is stored; a key is found by its prefix and compared in constant time.

use ring::digest::{digest, SHA256};
use subtle::ConstantTimeEq;

const BODY_LEN: usize = 40;
/// Characters of the key kept in clear to find it (`sk_live_` plus 8).
pub const PREFIX_LEN: usize = 16;

/// A key as presented by a client, checked for shape only.
pub struct PresentedKey<'a> {
    pub full: &'a str,
    pub read_only: bool,
}

impl<'a> PresentedKey<'a> {
    /// Accepts only the two documented shapes.
    pub fn parse(s: &'a str) -> Option<Self> {
        let (read_only, body) = if let Some(b) = s.strip_prefix("sk_live_") {
            (false, b)
        } else if let Some(b) = s.strip_prefix("rk_live_") {
            (true, b)
        } else {
            return None;
        };
        (body.len() == BODY_LEN && body.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(Self { full: s, read_only })
    }

    pub fn prefix(&self) -> &'a str {
        &self.full[..PREFIX_LEN]
    }

    pub fn hash(&self) -> Vec<u8> {
        hash(self.full)
    }
}

/// A newly minted key: `secret` is shown once to the operator and never stored.
pub struct NewKey {
    pub secret: String,
    pub prefix: String,
    pub hash: Vec<u8>,
}

pub fn generate(read_only: bool) -> NewKey {
    let secret = format!(
        "{}_live_{}",
        if read_only { "rk" } else { "sk" },
        crate::ids::random_base62(BODY_LEN)
    );
    NewKey {
        prefix: secret[..PREFIX_LEN].to_owned(),
        hash: hash(&secret),
        secret,
    }
}

fn hash(key: &str) -> Vec<u8> {
    digest(&SHA256, key.as_bytes()).as_ref().to_vec()
}

/// Constant-time comparison of two hashes.
pub fn hashes_match(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_and_match() {
        let k = generate(true);
        assert!(k.secret.starts_with("rk_live_"));
        let p = PresentedKey::parse(&k.secret).unwrap();
        assert!(p.read_only);
        assert_eq!(p.prefix(), k.prefix);
        assert!(hashes_match(&p.hash(), &k.hash));
        assert!(!hashes_match(&generate(false).hash, &k.hash));
    }

    #[test]
    fn malformed_keys_are_refused() {
        for bad in [
            "",
            "sk_live_",
            "sk_test_0123456789012345678901234567890123456789",
            "sk_live_012345678901234567890123456789012345678!",
        ] {
            assert!(PresentedKey::parse(bad).is_none(), "{bad}");
        }
    }
}
