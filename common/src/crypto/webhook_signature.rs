//! Standard Webhooks signatures: `v1,<base64(HMAC-SHA256(secret, "<id>.<timestamp>.<body>"))>`,
//! with secrets `whsec_<base64 of 32 bytes>`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::hmac;

#[derive(Debug, thiserror::Error)]
#[error("webhook secret is not `whsec_<base64>`")]
pub struct MalformedSecret;

/// A fresh company secret.
pub fn generate_secret() -> String {
    let mut bytes = [0u8; 32];
    crate::ids::random_bytes(&mut bytes);
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// The `v1,<sig>` signature of one delivery.
pub fn sign(secret: &str, msg_id: &str, timestamp: i64, body: &[u8]) -> Result<String, MalformedSecret> {
    let key_bytes = secret
        .strip_prefix("whsec_")
        .and_then(|b| STANDARD.decode(b).ok())
        .ok_or(MalformedSecret)?;
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
}
