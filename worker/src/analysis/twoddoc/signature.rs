//! Signature verification (spec §3.5, §5.1 steps 4–7): find the signer's certificate in the trust store, check
//! its period against the header's signature date, and verify the raw signature over the signed bytes with
//! ring. The outcome uses the API's `signatureStatus` vocabulary.

use ring::signature::{self, UnparsedPublicKey, VerificationAlgorithm};

use super::header::Header;
use super::trust::{CertificateLookup, PublicKey, SignerCertificate, TrustStore};

pub use domain::vocabulary::SignatureStatus;

/// The specification's smallest signature (§3.5.1): 64 bytes, a P-256 r||s.
pub const MIN_SIGNATURE_LEN: usize = 64;

/// What the verification concluded, with the reason in words for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    pub status: SignatureStatus,
    /// The certificate belongs to an authority of the trust list (the test authority only when accepted).
    pub trusted: bool,
    /// The certificate is one an authority reserves for its tests (id `0000`) or the test authority's.
    pub test_certificate: bool,
    pub detail: String,
}

/// Verifies `signature` over `signed` for the signer `header` names.
pub fn verify(header: &Header, signed: &[u8], signature: &[u8], trust: &TrustStore) -> Verification {
    let who = format!("{}/{}", header.ca_id, header.cert_id);
    let cert = match trust.lookup(&header.ca_id, &header.cert_id) {
        CertificateLookup::UntrustedAuthority => {
            return outcome(
                SignatureStatus::UntrustedAuthority,
                false,
                false,
                format!("authority {} is not trusted", header.ca_id),
            );
        }
        CertificateLookup::UnknownCertificate => {
            return outcome(
                SignatureStatus::UnknownCertificate,
                false,
                false,
                format!("certificate {who} is not known"),
            );
        }
        CertificateLookup::Found(cert) => cert,
    };
    let test = cert.test_authority || header.cert_id.bytes().all(|b| b == b'0');
    // A signature cut short or of another key's size cannot be checked: the certificate is still known, so
    // the seal stays `trusted`, but nothing says whether it was forged, which is not `invalid` either.
    if let Some(fault) = length_fault(&cert.key, signature) {
        return outcome(SignatureStatus::NotChecked, true, test, format!("certificate {who}: {fault}"));
    }
    let checked = match check_signature(&cert.key, signed, signature) {
        Ok(checked) => checked,
        Err(why) => return outcome(SignatureStatus::NotChecked, true, test, format!("certificate {who}: {why}")),
    };
    if !checked {
        return outcome(
            SignatureStatus::Invalid,
            true,
            test,
            format!("the signature does not verify with certificate {who}"),
        );
    }
    match period_fault(cert, header) {
        Some(fault) => outcome(
            SignatureStatus::CertificateExpired,
            true,
            test,
            format!("certificate {who} {fault}"),
        ),
        None => outcome(SignatureStatus::Valid, true, test, format!("signed with certificate {who}")),
    }
}

fn outcome(status: SignatureStatus, trusted: bool, test_certificate: bool, detail: String) -> Verification {
    Verification {
        status,
        trusted,
        test_certificate,
        detail,
    }
}

/// Why the signature's length cannot be that of a signature by `key`: an ECDSA r||s has twice the curve's
/// size (spec §3.5.2); an RSA signature's size is its modulus', left to ring, above the spec's minimum.
fn length_fault(key: &PublicKey, signature: &[u8]) -> Option<String> {
    let (needed, what) = match key {
        PublicKey::EcdsaP256(_) => (Some(64), "a P-256 key"),
        PublicKey::EcdsaP384(_) => (Some(96), "a P-384 key"),
        PublicKey::Rsa(_) | PublicKey::Unsupported(_) => (None, ""),
    };
    let len = signature.len();
    match needed {
        Some(needed) if len != needed => Some(format!("the signature has {len} bytes, {what} signs with {needed}")),
        None if len < MIN_SIGNATURE_LEN => Some(format!(
            "the signature has {len} bytes, fewer than the {MIN_SIGNATURE_LEN} the specification requires"
        )),
        _ => None,
    }
}

/// Spec §5.1 step 6, at day precision since the header dates are days. The test authority's certificate
/// expired in 2015 but signs the spec's reference codes of later years, so its period is not checked.
fn period_fault(cert: &SignerCertificate, header: &Header) -> Option<String> {
    if cert.test_authority {
        return None;
    }
    let date = header.signature_date;
    let (from, to) = (cert.not_before.date_naive(), cert.not_after.date_naive());
    if date < from {
        Some(format!("was not yet valid on the signature date {date} (valid from {from})"))
    } else if date > to {
        Some(format!("had expired on the signature date {date} (valid until {to})"))
    } else {
        None
    }
}

/// Checks the raw signature a seal carries: r||s for ECDSA (spec §3.5.2), so the FIXED encodings of ring.
/// `Err` when the key type cannot be checked here.
pub fn check_signature(key: &PublicKey, signed: &[u8], signature: &[u8]) -> Result<bool, String> {
    let algorithm: &dyn VerificationAlgorithm = match key {
        PublicKey::EcdsaP256(_) => &signature::ECDSA_P256_SHA256_FIXED,
        PublicKey::EcdsaP384(_) => &signature::ECDSA_P384_SHA384_FIXED,
        // A few authorities issued RSA signer certificates; the spec only describes ECDSA, so PKCS#1 v1.5
        // with SHA-256 (the hash of their certificates) is the one reading that can verify them.
        PublicKey::Rsa(_) => &signature::RSA_PKCS1_2048_8192_SHA256,
        PublicKey::Unsupported(what) => return Err(format!("{what} keys are not supported")),
    };
    Ok(UnparsedPublicKey::new(algorithm, key.bytes()).verify(signed, signature).is_ok())
}
