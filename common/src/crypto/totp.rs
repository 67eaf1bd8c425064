//! The portal's two-factor codes (PORTAL.md, Pages 1): RFC 6238 TOTP with the parameters every
//! authenticator app assumes when a QR code says nothing else (SHA-1, 6 digits, 30 s), the
//! `otpauth://` URL and its QR code for enrolment, and a verification that refuses a code already
//! used, so a code seen over a shoulder cannot be replayed within its window.

use chrono::{DateTime, Utc};
use std::fmt;
use subtle::ConstantTimeEq;
use totp_rs::{Algorithm, TOTP};

/// Bytes of a secret: 160 bits, the HMAC-SHA-1 block RFC 4226 recommends.
pub const SECRET_LEN: usize = 20;
/// Shown as the issuer in the member's app, and prefixed to the account.
pub const ISSUER: &str = "Sceau";
const DIGITS: usize = 6;
const STEP_SECONDS: u64 = 30;
/// Steps accepted either side of the current one: a phone's clock a little off, or a code typed
/// just as it changed (RFC 6238 §5.2 recommends one).
const SKEW_STEPS: u64 = 1;
/// Default drawn size of a module, before the page's CSS says otherwise.
const MODULE_PX: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TotpError {
    #[error("a TOTP secret has {SECRET_LEN} bytes, not {0}")]
    SecretLength(usize),
    /// The `otpauth://` label is `issuer:account`; apps split it at the colon.
    #[error("the account name of a TOTP URL cannot contain ':'")]
    AccountName,
    #[error("the data does not fit in a QR code")]
    QrTooLong,
}

/// A member's TOTP secret. `Debug` hides it: it signs the member in.
#[derive(Clone, PartialEq, Eq)]
pub struct TotpSecret([u8; SECRET_LEN]);

impl TotpSecret {
    pub fn generate() -> Self {
        let mut bytes = [0u8; SECRET_LEN];
        domain::ids::random_bytes(&mut bytes);
        Self(bytes)
    }

    /// A secret read back from the store.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TotpError> {
        bytes.try_into().map(Self).map_err(|_| TotpError::SecretLength(bytes.len()))
    }

    pub fn as_bytes(&self) -> &[u8; SECRET_LEN] {
        &self.0
    }

    /// RFC 4648 base32 without padding (32 capitals and digits), what a member types into an app
    /// that cannot scan the QR code.
    pub fn base32(&self) -> String {
        totp(self, String::new()).get_secret_base32()
    }
}

impl fmt::Debug for TotpSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TotpSecret(<redacted>)")
    }
}

fn totp(secret: &TotpSecret, account: String) -> TOTP {
    // Unchecked only skips the checks the types already make (20 bytes, 6 digits); the account is
    // checked by `otpauth_url`, the one caller that puts it in a URL.
    TOTP::new_unchecked(
        Algorithm::SHA1,
        DIGITS,
        SKEW_STEPS as u8,
        STEP_SECONDS,
        secret.0.to_vec(),
        Some(ISSUER.to_owned()),
        account,
    )
}

/// `otpauth://totp/Sceau:<email>?secret=<base32>&issuer=Sceau`, the account URL-encoded.
pub fn otpauth_url(secret: &TotpSecret, email: &str) -> Result<String, TotpError> {
    if email.contains(':') {
        return Err(TotpError::AccountName);
    }
    Ok(totp(secret, email.to_owned()).get_url())
}

/// The QR code of `data` (the `otpauth://` URL) as an inline `<svg>` element. Nothing of `data`
/// appears in it as text: it is made only of fixed markup and numbers, so it can be written into a
/// page unescaped, carries no script, and needs no `style` attribute a strict CSP would refuse.
pub fn qr_svg(data: &str) -> Result<String, TotpError> {
    crate::qr::svg(data, MODULE_PX).ok_or(TotpError::QrTooLong)
}

/// Six ASCII digits, with any spaces (apps show `123 456`) removed; anything else is no code.
fn parse_code(code: &str) -> Option<[u8; DIGITS]> {
    // Bounds the work on a hostile field before looking at it character by character.
    if code.len() > 64 {
        return None;
    }
    let mut digits = [0u8; DIGITS];
    let mut n = 0;
    for c in code.chars().filter(|c| !c.is_whitespace()) {
        if !c.is_ascii_digit() || n == DIGITS {
            return None;
        }
        digits[n] = c as u8;
        n += 1;
    }
    (n == DIGITS).then_some(digits)
}

/// The time step `code` was generated for, if it is the code of the step of `now` or of one step
/// either side and that step is later than `last_used_step`; the caller stores the returned step
/// as the member's new `last_used_step`, which makes each code single-use.
pub fn verify(secret: &TotpSecret, code: &str, now: DateTime<Utc>, last_used_step: Option<u64>) -> Option<u64> {
    let code = parse_code(code)?;
    let current = u64::try_from(now.timestamp()).ok()? / STEP_SECONDS;
    let totp = totp(secret, String::new());
    let mut matched = None;
    // Every candidate is computed and compared in constant time, so the answer's timing does not
    // say which step a guess was near. The earliest match wins: later codes stay usable.
    for step in current.saturating_sub(SKEW_STEPS)..=current + SKEW_STEPS {
        let expected = totp.generate(step * STEP_SECONDS);
        let fresh = last_used_step.is_none_or(|used| step > used);
        if bool::from(expected.as_bytes().ct_eq(&code)) && fresh && matched.is_none() {
            matched = Some(step);
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qr::QUIET_ZONE;
    use chrono::TimeZone;
    use qrcode::{EcLevel, QrCode};

    /// The SHA-1 seed of RFC 6238 Appendix B.
    fn rfc_secret() -> TotpSecret {
        TotpSecret::from_bytes(b"12345678901234567890").unwrap()
    }

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(secs, 0).unwrap()
    }

    #[test]
    fn rfc_6238_sha1_vectors_truncated_to_six_digits() {
        // Appendix B: 94287082, 07081804, 14050471, 89005924, 69279037, 65353130.
        for (t, code) in [
            (59, "287082"),
            (1111111109, "081804"),
            (1111111111, "050471"),
            (1234567890, "005924"),
            (2000000000, "279037"),
            (20000000000, "353130"),
        ] {
            assert_eq!(verify(&rfc_secret(), code, at(t), None), Some(t as u64 / 30), "T={t}");
        }
    }

    #[test]
    fn one_step_either_side_is_accepted_and_no_further() {
        let s = rfc_secret();
        // 287082 is the code of step 1 (T = 30..59).
        assert_eq!(verify(&s, "287082", at(0), None), Some(1));
        assert_eq!(verify(&s, "287082", at(30), None), Some(1));
        assert_eq!(verify(&s, "287082", at(89), None), Some(1));
        assert_eq!(verify(&s, "287082", at(90), None), None);
        assert_eq!(verify(&s, "081804", at(1111111109 + 60), None), None);
        assert_eq!(verify(&s, "081804", at(1111111109 - 60), None), None);
        assert_eq!(verify(&s, "081804", at(1111111109 - 30), None), Some(1111111109 / 30));
    }

    #[test]
    fn a_used_step_is_refused() {
        let s = rfc_secret();
        let step = verify(&s, "287082", at(59), None).unwrap();
        assert_eq!(verify(&s, "287082", at(60), Some(step)), None);
        assert_eq!(verify(&s, "287082", at(60), Some(step + 1)), None);
        assert_eq!(verify(&s, "287082", at(60), Some(step - 1)), Some(step));
    }

    #[test]
    fn wrong_or_malformed_codes_are_refused() {
        let s = rfc_secret();
        for code in [
            "287083",
            "",
            "28708",
            "2870822",
            "28708a",
            "+87082",
            "２８７０８２",
            "287082\0",
            "0287082",
        ] {
            assert_eq!(verify(&s, code, at(59), None), None, "{code:?}");
        }
        assert_eq!(verify(&TotpSecret::generate(), "287082", at(59), None), None);
        // Before the epoch there is no step.
        assert_eq!(verify(&s, "287082", at(-1), None), None);
    }

    #[test]
    fn spaces_are_stripped() {
        let s = rfc_secret();
        for code in ["287 082", " 287082 ", "2 8 7 0 8 2", "287\u{a0}082", "287\t082"] {
            assert_eq!(verify(&s, code, at(59), None), Some(1), "{code:?}");
        }
        assert_eq!(verify(&s, &format!("287082{}", " ".repeat(100)), at(59), None), None);
    }

    #[test]
    fn secret_base32_url_and_length() {
        let s = rfc_secret();
        assert_eq!(s.base32(), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
        assert_eq!(
            otpauth_url(&s, "ada@example.com").unwrap(),
            "otpauth://totp/Sceau:ada%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Sceau"
        );
        // An app reading the URL back finds the same secret, issuer and account.
        let read = TOTP::from_url(otpauth_url(&s, "ada+2fa@example.com").unwrap()).unwrap();
        assert_eq!(read.secret, s.as_bytes());
        assert_eq!(read.account_name, "ada+2fa@example.com");
        assert_eq!(read.issuer.as_deref(), Some("Sceau"));
        assert_eq!((read.digits, read.step, read.algorithm), (6, 30, Algorithm::SHA1));
        assert_eq!(otpauth_url(&s, "a:b@example.com"), Err(TotpError::AccountName));

        let g = TotpSecret::generate();
        assert_eq!(g.base32().len(), 32);
        assert_ne!(g, TotpSecret::generate());
        assert_eq!(TotpSecret::from_bytes(g.as_bytes()).unwrap(), g);
        assert_eq!(TotpSecret::from_bytes(&[0; 16]), Err(TotpError::SecretLength(16)));
        assert!(!format!("{g:?}").contains(&g.base32()));
    }

    #[test]
    fn qr_svg_draws_the_code_and_nothing_else() {
        let url = otpauth_url(&rfc_secret(), "<script>alert(1)</script>@example.com").unwrap();
        let svg = qr_svg(&url).unwrap();
        // Fixed markup and numbers only: no text of the URL, no script, no event handler.
        assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="#), "{svg}");
        assert!(svg.ends_with("\"/></svg>"));
        assert_eq!(svg.matches('<').count(), 4, "only <svg>, <rect>, <path> and </svg>");
        for absent in ["script", "alert", "GEZDGNB", "on", "href", "style", "&"] {
            assert!(!svg.contains(absent), "{absent}");
        }

        // The path redraws exactly the modules of the code.
        let code = QrCode::with_error_correction_level(url.as_bytes(), EcLevel::M).unwrap();
        let width = code.width();
        let mut drawn = vec![qrcode::Color::Light; width * width];
        let d = svg.split(" d=\"").nth(1).unwrap().trim_end_matches("\"/></svg>");
        for rect in d.split('M').filter(|r| !r.is_empty()) {
            let (x, rest) = rect.split_once(' ').unwrap();
            let (y, rest) = rest.split_once('h').unwrap();
            let (w, _) = rest.split_once('v').unwrap();
            let (x, y, w): (usize, usize, usize) = (x.parse().unwrap(), y.parse().unwrap(), w.parse().unwrap());
            for col in x - QUIET_ZONE..x - QUIET_ZONE + w {
                drawn[(y - QUIET_ZONE) * width + col] = qrcode::Color::Dark;
            }
        }
        assert_eq!(drawn, code.to_colors());
        assert!(svg.contains(&format!("viewBox=\"0 0 {0} {0}\"", width + 8)));
    }

    #[test]
    fn oversized_qr_data_is_an_error() {
        assert_eq!(qr_svg(&"a".repeat(5000)), Err(TotpError::QrTooLong));
    }
}
