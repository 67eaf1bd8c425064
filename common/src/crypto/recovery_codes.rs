//! Recovery codes of the portal's two-factor enrolment: what lets a member who lost the phone sign
//! in once per code. Shown once, stored only as HMAC-SHA256 under a server key derived from the
//! master keys, and read loosely (case, spaces, dashes, the letters people type for 0 and 1)
//! because they are copied from paper.
//!
//! The stored value is `HMAC(key, SHA-256(code))`: a code carries 50 random bits, so a keyed hash
//! is enough (no argon2), and without the key a dump of the database tests no candidate. Hashing
//! the digest rather than the code lets the SHA-256 values an earlier version stored be keyed in
//! place at start ([`rekey`]), without the codes.

use crate::crypto::envelope::MasterKeys;
use ring::digest::{digest, SHA256};
use ring::hmac;

/// Codes per enrolment.
pub const COUNT: usize = 10;
/// Significant characters of a code (50 bits), shown as two groups of five.
const CODE_CHARS: usize = 10;
const GROUP: usize = 5;
/// The purpose the server key is derived for (HKDF info): its own, so it is no other key.
const PURPOSE: &str = "sceau portal recovery codes v1";

/// Crockford's base32 alphabet in lower case: no i, l, o or u, so no two characters look alike
/// once 0 and 1 stand alone; the letters a member may type for them are mapped back on reading.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// The server keys recovery codes are hashed with, one per master key, the current one's first:
/// new codes are hashed with the first, a presented code is tried under each, so codes hashed
/// before a rotation keep working while their master key is kept.
pub struct RecoveryKeys(Vec<hmac::Key>);

impl RecoveryKeys {
    pub fn of(master: &MasterKeys) -> Self {
        Self(
            master
                .derived_keys(PURPOSE)
                .iter()
                .map(|k| hmac::Key::new(hmac::HMAC_SHA256, k))
                .collect(),
        )
    }

    fn current(&self) -> &hmac::Key {
        // `derived_keys` gives one key per master key, and there is always one.
        &self.0[0]
    }
}

impl std::fmt::Debug for RecoveryKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecoveryKeys(<redacted>)")
    }
}

/// A fresh set: the codes to show the member once (`xxxxx-xxxxx`), and their keyed hashes to
/// store, in the same order.
pub fn generate(keys: &RecoveryKeys) -> (Vec<String>, Vec<Vec<u8>>) {
    let codes: Vec<String> = (0..COUNT).map(|_| one_code()).collect();
    let hashes = codes.iter().map(|c| keyed(keys.current(), &unkeyed(c))).collect();
    (codes, hashes)
}

fn one_code() -> String {
    let mut bytes = [0u8; CODE_CHARS];
    domain::ids::random_bytes(&mut bytes);
    let mut code = String::with_capacity(CODE_CHARS + 1);
    for (i, b) in bytes.iter().enumerate() {
        if i == GROUP {
            code.push('-');
        }
        // 32 divides 256, so keeping the low five bits draws every character equally often.
        code.push(ALPHABET[usize::from(b & 31)] as char);
    }
    code
}

/// The keyed hashes a stored code must equal for the code the member typed, one per server key
/// (the current key's first). Anything that is not a code still hashes (to something no stored
/// code matches), so the caller has one path.
pub fn candidates(keys: &RecoveryKeys, presented: &str) -> Vec<Vec<u8>> {
    let unkeyed = unkeyed(presented);
    keys.0.iter().map(|k| keyed(k, &unkeyed)).collect()
}

/// The keyed hash of a code stored by an earlier version as its bare SHA-256.
pub fn rekey(keys: &RecoveryKeys, stored_sha256: &[u8]) -> Vec<u8> {
    keyed(keys.current(), stored_sha256)
}

fn keyed(key: &hmac::Key, unkeyed: &[u8]) -> Vec<u8> {
    hmac::sign(key, unkeyed).as_ref().to_vec()
}

/// SHA-256 of a code as the member typed it, after normalising: case folded, spaces and dashes
/// dropped, `o` read as `0`, `i` and `l` as `1`. What earlier versions stored as is.
fn unkeyed(presented: &str) -> Vec<u8> {
    digest(&SHA256, normalise(presented).as_bytes()).as_ref().to_vec()
}

fn normalise(presented: &str) -> String {
    presented
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| match c.to_ascii_lowercase() {
            'o' => '0',
            'i' | 'l' => '1',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn keys() -> RecoveryKeys {
        RecoveryKeys::of(&MasterKeys::ephemeral())
    }

    #[test]
    fn a_set_is_ten_distinct_codes_of_the_documented_shape() {
        let keys = keys();
        let (codes, hashes) = generate(&keys);
        assert_eq!(codes.len(), COUNT);
        assert_eq!(hashes.len(), COUNT);
        for (code, h) in codes.iter().zip(&hashes) {
            assert_eq!(code.len(), 11, "{code}");
            assert_eq!(&code[5..6], "-", "{code}");
            assert!(code.chars().filter(|c| *c != '-').all(|c| ALPHABET.contains(&(c as u8))), "{code}");
            assert!(!code.contains(['i', 'l', 'o', 'u']), "{code}");
            assert_eq!(h.len(), 32);
            assert_eq!(&candidates(&keys, code)[0], h);
        }
        let mut unique = codes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), COUNT);
    }

    #[test]
    fn loosely_typed_codes_match() {
        let keys = keys();
        let stored = candidates(&keys, "0a1b2-c3d4e");
        for typed in [
            "0a1b2-c3d4e",
            "0A1B2-C3D4E",
            "0a1b2c3d4e",
            " 0a1b2 c3d4e ",
            "oa1b2-c3d4e",
            "0aib2-c3d4e",
            "0aLb2 - c3d4e",
        ] {
            assert_eq!(candidates(&keys, typed), stored, "{typed}");
        }
        for wrong in ["0a1b2-c3d4f", "0a1b2-c3d4", "0a1b2-c3d4ee", "", "0a1b2_c3d4e"] {
            assert_ne!(candidates(&keys, wrong), stored, "{wrong}");
        }
    }

    /// What a database dump holds is no hash anyone can compute from a candidate code: not its
    /// SHA-256 (what was stored before), nor its hash under another installation's key.
    #[test]
    fn a_stored_hash_is_keyed_so_a_dump_alone_tests_no_code() {
        let (keys, elsewhere) = (keys(), self::keys());
        let (codes, hashes) = generate(&keys);
        for (code, stored) in codes.iter().zip(&hashes) {
            assert_ne!(stored, &unkeyed(code), "not the bare SHA-256 of {code}");
            assert!(!candidates(&elsewhere, code).contains(stored), "another key gives another hash");
        }
    }

    /// A SHA-256 stored by an earlier version, keyed in place, matches the code as a new one does.
    #[test]
    fn a_legacy_hash_rekeyed_matches_its_code() {
        let keys = keys();
        let legacy = digest(&SHA256, b"0a1b2c3d4e").as_ref().to_vec();
        assert_eq!(rekey(&keys, &legacy), candidates(&keys, "0A1B2-C3D4E")[0]);
    }

    /// After a master key rotation, codes hashed under the previous key still match (under the
    /// second candidate), and new codes use the new key.
    #[test]
    fn codes_survive_a_master_key_rotation() {
        let dir = std::env::temp_dir().join(format!("sceau-recovery-{}", domain::ids::random_hex(8)));
        std::fs::create_dir_all(&dir).unwrap();
        let line = |id: &str| {
            let mut key = [0u8; 32];
            domain::ids::random_bytes(&mut key);
            format!("{id}:{}\n", base64::engine::general_purpose::STANDARD.encode(key))
        };
        let (old, new) = (line("k1"), line("k2"));
        let load = |text: &str| {
            let path = dir.join(format!("keys-{}", domain::ids::random_hex(4)));
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
            RecoveryKeys::of(&MasterKeys::open_existing(&path).unwrap())
        };
        let before = load(&old);
        let after = load(&format!("{old}{new}"));
        let (codes, hashes) = generate(&before);
        let tried = candidates(&after, &codes[0]);
        assert_eq!(tried.len(), 2);
        assert_ne!(tried[0], hashes[0], "new codes use the new key");
        assert_eq!(tried[1], hashes[0], "old codes still match");
        let _ = std::fs::remove_dir_all(dir);
    }
}
