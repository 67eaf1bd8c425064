//! Portal session ids and invitation tokens (PORTAL.md, Security): 256 random bits a browser or an
//! invitation link carries, of which the store keeps only a SHA-256 hash, so a leaked database
//! signs no one in. Parsing is strict so that nothing but a well-formed token reaches a query.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::digest::{digest, SHA256};
use std::fmt;

const TOKEN_BYTES: usize = 32;
/// Characters of a token: 32 bytes in unpadded base64url.
pub const TOKEN_LEN: usize = 43;

/// A session id or invitation token. Its text is a secret: `Debug` hides it, and only
/// [`Token::as_str`] gives it, for the cookie or the link.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh token from the operating system's generator.
    pub fn generate() -> Self {
        let mut bytes = [0u8; TOKEN_BYTES];
        domain::ids::random_bytes(&mut bytes);
        Self(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// A token as a client presented it: exactly 43 base64url characters that decode to 32 bytes
    /// with no stray bits in the last one (so each token has one spelling), or nothing.
    pub fn parse(s: &str) -> Option<Self> {
        if s.len() != TOKEN_LEN || !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return None;
        }
        // The engine refuses non-zero trailing bits, which the character check above cannot see.
        let decoded = URL_SAFE_NO_PAD.decode(s).ok()?;
        (decoded.len() == TOKEN_BYTES).then(|| Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What the store keeps and looks the token up by.
    pub fn hash(&self) -> [u8; 32] {
        hash(self)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// SHA-256 of the token's text. The token has 256 bits of entropy, so an unsalted fast hash is
/// enough: there is nothing to guess.
pub fn hash(token: &Token) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest(&SHA256, token.0.as_bytes()).as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_43_base64url_chars_and_parse_back() {
        let t = Token::generate();
        assert_eq!(t.as_str().len(), TOKEN_LEN);
        let parsed = Token::parse(t.as_str()).unwrap();
        assert_eq!(parsed, t);
        assert_eq!(parsed.hash(), t.hash());
        assert_ne!(Token::generate().hash(), t.hash());
    }

    #[test]
    fn hash_is_sha256_of_the_text() {
        // Anyone can recompute it (sha256sum): 32 zero bytes encode to 43 'A's.
        let t = Token::parse(&"A".repeat(43)).unwrap();
        let expected = digest(&SHA256, "A".repeat(43).as_bytes());
        assert_eq!(hash(&t).as_slice(), expected.as_ref());
    }

    #[test]
    fn malformed_tokens_are_refused() {
        let good = Token::generate().as_str().to_owned();
        for bad in [
            String::new(),
            good[..42].to_owned(),
            format!("{good}A"),
            format!("{}=", &good[..42]),
            format!("{}+", &good[..42]),
            format!("{}/", &good[..42]),
            format!("{} ", &good[..42]),
            format!("{}é", &good[..41]),
            // The last character carries 4 bits and 2 unused ones, which 'B' sets.
            format!("{}B", "A".repeat(42)),
            // 44 characters of standard padded base64 for 32 bytes.
            format!("{}A=", "A".repeat(42)),
        ] {
            assert!(Token::parse(&bad).is_none(), "{bad:?}");
        }
        assert!(Token::parse(&format!("{}E", "A".repeat(42))).is_some());
    }

    #[test]
    fn debug_does_not_show_the_token() {
        let t = Token::generate();
        assert!(!format!("{t:?}").contains(t.as_str()));
    }
}
