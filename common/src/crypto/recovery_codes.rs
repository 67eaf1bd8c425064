//! Recovery codes of the portal's two-factor enrolment: what lets a member who lost the phone sign
//! in once per code. Shown once, stored only as SHA-256 hashes, and read loosely (case, spaces,
//! dashes, the letters people type for 0 and 1) because they are copied from paper.

use ring::digest::{digest, SHA256};
use subtle::ConstantTimeEq;

/// Codes per enrolment.
pub const COUNT: usize = 10;
/// Significant characters of a code (50 bits), shown as two groups of five.
const CODE_CHARS: usize = 10;
const GROUP: usize = 5;

/// Crockford's base32 alphabet in lower case: no i, l, o or u, so no two characters look alike
/// once 0 and 1 stand alone; the letters a member may type for them are mapped back on reading.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// A fresh set: the codes to show the member once (`xxxxx-xxxxx`), and their hashes to store, in
/// the same order.
pub fn generate() -> (Vec<String>, Vec<Vec<u8>>) {
    let codes: Vec<String> = (0..COUNT).map(|_| one_code()).collect();
    let hashes = codes.iter().map(|c| hash(c)).collect();
    (codes, hashes)
}

fn one_code() -> String {
    let mut bytes = [0u8; CODE_CHARS];
    crate::ids::random_bytes(&mut bytes);
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

/// The hash of a code as the member typed it, after normalising: case folded, spaces and dashes
/// dropped, `o` read as `0`, `i` and `l` as `1`. Anything that is not a code still hashes (to
/// something no stored code matches), so the caller has one path.
pub fn hash(presented: &str) -> Vec<u8> {
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

/// Which of the member's unused stored hashes the presented code matches, comparing every one in
/// constant time.
pub fn find(stored_hashes: &[Vec<u8>], presented: &str) -> Option<usize> {
    let presented = hash(presented);
    let mut found = None;
    for (i, stored) in stored_hashes.iter().enumerate() {
        if bool::from(stored.as_slice().ct_eq(&presented)) && found.is_none() {
            found = Some(i);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_ten_distinct_codes_of_the_documented_shape() {
        let (codes, hashes) = generate();
        assert_eq!(codes.len(), COUNT);
        assert_eq!(hashes.len(), COUNT);
        for (code, h) in codes.iter().zip(&hashes) {
            assert_eq!(code.len(), 11, "{code}");
            assert_eq!(&code[5..6], "-", "{code}");
            assert!(code.chars().filter(|c| *c != '-').all(|c| ALPHABET.contains(&(c as u8))), "{code}");
            assert!(!code.contains(['i', 'l', 'o', 'u']), "{code}");
            assert_eq!(h.len(), 32);
            assert_eq!(&hash(code), h);
        }
        let mut unique = codes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), COUNT);
    }

    #[test]
    fn loosely_typed_codes_match() {
        let stored = hash("0a1b2-c3d4e");
        for typed in [
            "0a1b2-c3d4e",
            "0A1B2-C3D4E",
            "0a1b2c3d4e",
            " 0a1b2 c3d4e ",
            "oa1b2-c3d4e",
            "0aib2-c3d4e",
            "0aLb2 - c3d4e",
        ] {
            assert_eq!(hash(typed), stored, "{typed}");
        }
        for wrong in ["0a1b2-c3d4f", "0a1b2-c3d4", "0a1b2-c3d4ee", "", "0a1b2_c3d4e"] {
            assert_ne!(hash(wrong), stored, "{wrong}");
        }
    }

    #[test]
    fn find_gives_the_matching_hash_only() {
        let (codes, hashes) = generate();
        assert_eq!(find(&hashes, &codes[3].to_uppercase()), Some(3));
        assert_eq!(find(&hashes, &codes[9].replace('-', " ")), Some(9));
        assert_eq!(find(&hashes[..3], &codes[3]), None);
        assert_eq!(find(&hashes, "zzzzz-zzzzz").filter(|i| codes[*i] != "zzzzz-zzzzz"), None);
        assert_eq!(find(&[], &codes[0]), None);
    }
}
