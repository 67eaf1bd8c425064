//! Standard Webhooks signatures: `v1,<base64(HMAC-SHA256(secret, "<id>.<timestamp>.<body>"))>`,
//! with secrets `whsec_<base64 of 32 bytes>` for live events and `whsec_test_<base64 of 32 bytes>`
//! for test mode's (API.md, Test mode). The key is the base64 after the whole prefix; base64 has
//! no `_`, so the two prefixes never read one for the other. A test secret is a key of its own:
//! a receiver that verifies with the live secret refuses every test event.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use domain::vocabulary::Mode;
use ring::hmac;

/// The prefix of a live secret.
pub const LIVE_PREFIX: &str = "whsec_";
/// The prefix of a test account's secret.
pub const TEST_PREFIX: &str = "whsec_test_";

#[derive(Debug, thiserror::Error)]
#[error("webhook secret is not `whsec_<base64>` or `whsec_test_<base64>`")]
pub struct MalformedSecret;

/// A fresh company secret.
pub fn generate_secret() -> String {
    generate_secret_for(Mode::Live)
}

/// A fresh secret for the account of `mode`: `whsec_…` live, `whsec_test_…` for a test account.
pub fn generate_secret_for(mode: Mode) -> String {
    let mut bytes = [0u8; 32];
    domain::ids::random_bytes(&mut bytes);
    let prefix = match mode {
        Mode::Live => LIVE_PREFIX,
        Mode::Test => TEST_PREFIX,
    };
    format!("{prefix}{}", STANDARD.encode(bytes))
}

/// The mode a secret's prefix says, and its key bytes.
pub fn parse(secret: &str) -> Result<(Mode, Vec<u8>), MalformedSecret> {
    let (mode, key) = match secret.strip_prefix(TEST_PREFIX) {
        Some(key) => (Mode::Test, key),
        None => (Mode::Live, secret.strip_prefix(LIVE_PREFIX).ok_or(MalformedSecret)?),
    };
    let bytes = STANDARD.decode(key).map_err(|_| MalformedSecret)?;
    if bytes.is_empty() {
        return Err(MalformedSecret);
    }
    Ok((mode, bytes))
}

/// The `v1,<sig>` signature of one delivery.
pub fn sign(secret: &str, msg_id: &str, timestamp: i64, body: &[u8]) -> Result<String, MalformedSecret> {
    let (_, key_bytes) = parse(secret)?;
    let key = hmac::Key::new(hmac::HMAC_SHA256, &key_bytes);
    let mut ctx = hmac::Context::with_key(&key);
    ctx.update(msg_id.as_bytes());
    ctx.update(b".");
    ctx.update(timestamp.to_string().as_bytes());
    ctx.update(b".");
    ctx.update(body);
    Ok(format!("v1,{}", STANDARD.encode(ctx.sign().as_ref())))
}

/// The `webhook-signature` header value: one signature per secret, space-separated.
pub fn signature_header(secrets: &[String], msg_id: &str, timestamp: i64, body: &[u8]) -> Result<String, MalformedSecret> {
    let sigs: Result<Vec<_>, _> = secrets.iter().map(|s| sign(s, msg_id, timestamp, body)).collect();
    Ok(sigs?.join(" "))
}

/// Whether `header` (a `webhook-signature` value, space-separated `v1,<sig>` entries) holds the
/// signature `secret` gives this delivery, compared in constant time.
pub fn verify(secret: &str, msg_id: &str, timestamp: i64, body: &[u8], header: &str) -> Result<bool, MalformedSecret> {
    let expected = sign(secret, msg_id, timestamp, body)?;
    Ok(header
        .split(' ')
        .any(|candidate| subtle::ConstantTimeEq::ct_eq(candidate.as_bytes(), expected.as_bytes()).into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_among_others_and_only_for_its_delivery() {
        let secret = generate_secret();
        let header = signature_header(&[generate_secret(), secret.clone()], "msg_1", 1_700_000_000, b"{}").unwrap();
        assert!(verify(&secret, "msg_1", 1_700_000_000, b"{}", &header).unwrap());
        assert!(!verify(&secret, "msg_2", 1_700_000_000, b"{}", &header).unwrap());
        assert!(!verify(&secret, "msg_1", 1_700_000_001, b"{}", &header).unwrap());
        assert!(!verify(&secret, "msg_1", 1_700_000_000, b"{ }", &header).unwrap());
        assert!(!verify(&generate_secret(), "msg_1", 1_700_000_000, b"{}", &header).unwrap());
        assert!(verify("whsec_???", "msg_1", 0, b"", &header).is_err());
    }

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // From the Standard Webhooks specification's test vectors.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let sig = sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#).unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn several_secrets_give_several_signatures() {
        let h = signature_header(&[generate_secret(), generate_secret()], "evt_x", 1, b"{}").unwrap();
        assert_eq!(h.split(' ').count(), 2);
        assert!(sign("nope", "a", 1, b"").is_err());
    }

    #[test]
    fn a_test_secret_is_a_key_of_its_own_that_the_live_secret_never_verifies() {
        let (live, test) = (generate_secret_for(Mode::Live), generate_secret_for(Mode::Test));
        assert!(live.starts_with("whsec_") && !live.starts_with("whsec_test_"), "{live}");
        assert!(test.starts_with("whsec_test_"), "{test}");
        assert_eq!(parse(&test).unwrap().0, Mode::Test);
        assert_eq!(parse(&live).unwrap().0, Mode::Live);
        let header = signature_header(std::slice::from_ref(&test), "evt_1", 1_700_000_000, b"{}").unwrap();
        assert!(verify(&test, "evt_1", 1_700_000_000, b"{}", &header).unwrap());
        assert!(!verify(&live, "evt_1", 1_700_000_000, b"{}", &header).unwrap());
        // The key is the base64 after the whole prefix: the same bytes under the live prefix sign
        // the same (what a Standard Webhooks library given `whsec_` + that base64 computes).
        let as_standard = format!("whsec_{}", &test["whsec_test_".len()..]);
        assert!(verify(&as_standard, "evt_1", 1_700_000_000, b"{}", &header).unwrap());
        for bad in ["whsec_", "whsec_test_", "whsec_test_???", "whsec_tes_AAAA", "test_AAAA"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(sign("whsec_test_???", "a", 1, b"").is_err());
    }
}
