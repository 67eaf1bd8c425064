//! Portal member passwords (PORTAL.md, Security): argon2id so a stolen member table costs an
//! attacker memory and time per guess, and a sign-in that takes as long for an unknown email as for
//! a wrong password, so the form does not tell which addresses have an account.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use std::fmt;

/// Fewest characters (Unicode scalar values, as a member counts them) of a new password.
pub const MIN_CHARS: usize = 12;
/// Most bytes of a password, new or presented: argon2 reads all of it, so an unbounded field would
/// let one request buy unbounded CPU.
pub const MAX_BYTES: usize = 256;

/// OWASP's argon2id settings (19 MiB, 2 passes, 1 lane), written out rather than taken from the
/// crate's defaults so a dependency upgrade cannot change the cost of every sign-in unnoticed.
const PARAMS: Params = match Params::new(19 * 1024, 2, 1, None) {
    Ok(p) => p,
    Err(_) => panic!("argon2 parameters out of range"),
};

/// Ceilings on the cost read from a stored hash: a tampered or corrupt row must not make one
/// sign-in allocate gigabytes or spin for minutes. Generous, so raising `PARAMS` later keeps
/// verifying the hashes made today and those made then.
const MAX_STORED_M_COST: u32 = 256 * 1024;
const MAX_STORED_T_COST: u32 = 16;
const MAX_STORED_P_COST: u32 = 8;

/// The hash, made by [`hash`], of a random password nobody kept, verified when there is no member
/// to verify against: verification costs what the parameters in the hash say, so this costs what a
/// real member's verification costs (`dummy_hash_has_current_params` keeps it in step with `PARAMS`).
const DUMMY_PHC: &str = "$argon2id$v=19$m=19456,t=2,p=1$vOKvyC18mL+mezasr/YXbQ$t9opXPaiUfMj+7p862xAmQ9kEzyTyvOE8wsCb3533pA";

/// Which rule a chosen password breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("the password has fewer than {MIN_CHARS} characters")]
    TooShort,
    #[error("the password is longer than {MAX_BYTES} bytes")]
    TooLong,
}

/// A password a member chose, checked against the rules. It is never printed: `Debug` hides it
/// and there is no `Display`.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// Takes the password exactly as typed: no trimming, no case folding, since the member
    /// chose every character.
    pub fn parse(s: &str) -> Result<Self, PasswordError> {
        if s.len() > MAX_BYTES {
            return Err(PasswordError::TooLong);
        }
        if s.chars().count() < MIN_CHARS {
            return Err(PasswordError::TooShort);
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

fn hasher() -> Argon2<'static> {
    Argon2::new(Algorithm::Argon2id, Version::V0x13, PARAMS)
}

/// The PHC string to store (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), with a fresh 128-bit
/// salt from the operating system.
pub fn hash(password: &Password) -> String {
    let mut salt = [0u8; 16];
    domain::ids::random_bytes(&mut salt);
    // 16 bytes is within the salt's bounds and `Password` bounds the input far below argon2's
    // limit, so neither call can fail on anything a member types.
    let salt = SaltString::encode_b64(&salt).expect("a 16-byte salt is valid");
    hasher()
        .hash_password(password.as_str().as_bytes(), &salt)
        .expect("argon2id with valid parameters, salt and a bounded password")
        .to_string()
}

/// Whether `candidate` is the password of `stored_phc`. A stored hash that does not parse, is not
/// argon2id or asks for more than the ceilings is a mismatch, never a panic. A candidate above
/// `MAX_BYTES` is refused before any hashing; [`verify_against_nothing`] refuses it the same way,
/// so the shortcut says nothing about the account.
pub fn verify(stored_phc: &str, candidate: &str) -> bool {
    if candidate.len() > MAX_BYTES {
        return false;
    }
    let Ok(parsed) = PasswordHash::new(stored_phc) else {
        return false;
    };
    if parsed.algorithm != Algorithm::Argon2id.ident() {
        return false;
    }
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    if params.m_cost() > MAX_STORED_M_COST || params.t_cost() > MAX_STORED_T_COST || params.p_cost() > MAX_STORED_P_COST {
        return false;
    }
    // The verifier recomputes with the parameters of the stored hash and compares in constant time.
    hasher().verify_password(candidate.as_bytes(), &parsed).is_ok()
}

/// Spends the time of a real [`verify`] when the email matches no member (or a disabled one), so
/// that sign-in answers "wrong email or password" after the same delay either way.
pub fn verify_against_nothing(candidate: &str) {
    std::hint::black_box(verify(DUMMY_PHC, candidate));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn too_short_and_too_long_are_refused_with_the_rule() {
        assert_eq!(Password::parse("").unwrap_err(), PasswordError::TooShort);
        assert_eq!(Password::parse("elevenchars").unwrap_err(), PasswordError::TooShort);
        assert!(Password::parse("twelve chars").is_ok());
        // Counted in characters: eleven 2-byte characters are 22 bytes yet still too short.
        assert_eq!(Password::parse(&"é".repeat(11)).unwrap_err(), PasswordError::TooShort);
        assert!(Password::parse(&"é".repeat(12)).is_ok());
        assert!(Password::parse(&"a".repeat(MAX_BYTES)).is_ok());
        assert_eq!(Password::parse(&"a".repeat(MAX_BYTES + 1)).unwrap_err(), PasswordError::TooLong);
        // Bytes, not characters, bound the length: 129 two-byte characters are 258 bytes.
        assert_eq!(Password::parse(&"é".repeat(129)).unwrap_err(), PasswordError::TooLong);
        assert_eq!(PasswordError::TooShort.to_string(), "the password has fewer than 12 characters");
    }

    #[test]
    fn debug_does_not_show_the_password() {
        let p = Password::parse("correct horse battery").unwrap();
        assert!(!format!("{p:?}").contains("horse"));
    }

    // The only test that runs argon2 (one hash, three verifications): it is deliberately slow.
    #[test]
    fn hash_verifies_the_right_password_only() {
        let p = Password::parse("correct horse battery").unwrap();
        let phc = hash(&p);
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert!(verify(&phc, "correct horse battery"));
        let start = Instant::now();
        assert!(!verify(&phc, "correct horse batterY"));
        let wrong_password = start.elapsed();
        // An unknown email must cost a full argon2 run too, not a shortcut (the bound is loose
        // because the machine may be busy; a shortcut takes microseconds).
        let start = Instant::now();
        verify_against_nothing("correct horse batterY");
        let no_member = start.elapsed();
        assert!(no_member * 4 > wrong_password, "{no_member:?} against {wrong_password:?}");
        // A 16-byte salt, in the 22 characters of unpadded base64.
        assert_eq!(phc.split('$').nth(4).map(str::len), Some(22), "{phc}");
    }

    #[test]
    fn malformed_or_hostile_stored_hashes_are_mismatches() {
        for stored in [
            "",
            "not a hash",
            "$argon2id$",
            "$argon2id$v=19$m=19456,t=2,p=1$",
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$!!!",
            "$argon2id$v=19$m=1,t=2,p=1$Qvd2hmsOhmA/X8Gd0eh9+w$0mP5DLmOhgGj3kPYB1f7bvXdXGmqQYuQ1Q7s8pzJ4Qc",
            // Another algorithm, and costs above the ceilings: refused without computing.
            "$argon2i$v=19$m=19456,t=2,p=1$Qvd2hmsOhmA/X8Gd0eh9+w$0mP5DLmOhgGj3kPYB1f7bvXdXGmqQYuQ1Q7s8pzJ4Qc",
            "$argon2id$v=19$m=4194304,t=2,p=1$Qvd2hmsOhmA/X8Gd0eh9+w$0mP5DLmOhgGj3kPYB1f7bvXdXGmqQYuQ1Q7s8pzJ4Qc",
            "$argon2id$v=19$m=19456,t=4000000,p=1$Qvd2hmsOhmA/X8Gd0eh9+w$0mP5DLmOhgGj3kPYB1f7bvXdXGmqQYuQ1Q7s8pzJ4Qc",
            "$argon2id$v=19$m=19456,t=2,p=64$Qvd2hmsOhmA/X8Gd0eh9+w$0mP5DLmOhgGj3kPYB1f7bvXdXGmqQYuQ1Q7s8pzJ4Qc",
            "$pbkdf2-sha256$i=1$c2FsdA$aGFzaA",
        ] {
            let start = Instant::now();
            assert!(!verify(stored, "correct horse battery"), "{stored}");
            assert!(start.elapsed() < Duration::from_secs(2), "{stored} took {:?}", start.elapsed());
        }
    }

    #[test]
    fn overlong_candidates_are_refused_before_hashing() {
        assert!(!verify(DUMMY_PHC, &"a".repeat(MAX_BYTES + 1)));
    }

    #[test]
    fn dummy_hash_has_current_params() {
        let parsed = PasswordHash::new(DUMMY_PHC).unwrap();
        assert_eq!(parsed.algorithm, Algorithm::Argon2id.ident());
        assert_eq!(parsed.version, Some(Version::V0x13.into()));
        let params = Params::try_from(&parsed).unwrap();
        assert_eq!(
            (params.m_cost(), params.t_cost(), params.p_cost()),
            (PARAMS.m_cost(), PARAMS.t_cost(), PARAMS.p_cost())
        );
        // The output length of `hash`: with another, the verifier would compute a different amount.
        assert_eq!(parsed.hash.map(|h| h.len()), Some(Params::DEFAULT_OUTPUT_LEN));
        assert_eq!(parsed.salt.map(|s| s.len()), Some(22));
    }
}
