//! API keys: `sk_live_<40 base62>` (full) and `rk_live_<40 base62>` (read-only), `sk_test_` and
//! `rk_test_` for test mode. Only a SHA-256 hash is stored; a key is found by its prefix and
//! compared in constant time.

use domain::vocabulary::Mode;
use ring::digest::{digest, SHA256};
use subtle::ConstantTimeEq;

const BODY_LEN: usize = 40;
/// Characters of the key kept in clear to find it (`sk_live_` plus 8).
pub const PREFIX_LEN: usize = 16;

/// A key as presented by a client, checked for shape only.
pub struct PresentedKey<'a> {
    pub full: &'a str,
    pub read_only: bool,
    pub mode: Mode,
}

/// The start of a key of each kind: `sk_`/`rk_`, then the mode.
fn head(read_only: bool, mode: Mode) -> String {
    format!("{}_{}_", if read_only { "rk" } else { "sk" }, mode.as_str())
}

impl<'a> PresentedKey<'a> {
    /// Accepts only the four documented shapes.
    pub fn parse(s: &'a str) -> Option<Self> {
        let (read_only, mode, body) = [false, true]
            .into_iter()
            .flat_map(|read_only| Mode::ALL.iter().map(move |mode| (read_only, *mode)))
            .find_map(|(read_only, mode)| s.strip_prefix(head(read_only, mode).as_str()).map(|body| (read_only, mode, body)))?;
        (body.len() == BODY_LEN && body.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(Self { full: s, read_only, mode })
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

pub fn generate(read_only: bool, mode: Mode) -> NewKey {
    let secret = format!("{}{}", head(read_only, mode), domain::ids::random_base62(BODY_LEN));
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
        let k = generate(true, Mode::Live);
        assert!(k.secret.starts_with("rk_live_"));
        let p = PresentedKey::parse(&k.secret).unwrap();
        assert!(p.read_only);
        assert_eq!(p.mode, Mode::Live);
        assert_eq!(p.prefix(), k.prefix);
        assert!(hashes_match(&p.hash(), &k.hash));
        assert!(!hashes_match(&generate(false, Mode::Live).hash, &k.hash));
    }

    #[test]
    fn test_keys_say_so_in_their_prefix() {
        for (read_only, start) in [(false, "sk_test_"), (true, "rk_test_")] {
            let k = generate(read_only, Mode::Test);
            assert!(k.secret.starts_with(start), "{}", k.prefix);
            assert_eq!(k.prefix.len(), PREFIX_LEN);
            let p = PresentedKey::parse(&k.secret).unwrap();
            assert_eq!((p.read_only, p.mode), (read_only, Mode::Test));
        }
    }

    #[test]
    fn malformed_keys_are_refused() {
        for bad in [
            "",
            "sk_live_",
            "sk_demo_0123456789012345678901234567890123456789",
            "sk_test_012345678901234567890123456789012345678",
            "sk_live_012345678901234567890123456789012345678!",
        ] {
            assert!(PresentedKey::parse(bad).is_none(), "{bad}");
        }
    }
}
