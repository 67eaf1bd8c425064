//! Signatures by the 2D-Doc test authority FR00 (certificate `0001`, whose key the ANTS
//! specification publishes in §16.1), so the engine's tests and the black-box tests seal documents
//! with the same genuine key instead of each unwrapping it.

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};

const TEST_KEY_PEM: &str = include_str!("../../../worker/data/2ddoc/test-ca/fr00-0001.key.pem");

fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match content.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n <= 0xFF => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(content);
    out
}

/// The spec publishes the key as SEC1 "EC PRIVATE KEY"; ring reads PKCS#8, so it is wrapped: version 0, the
/// algorithm (id-ecPublicKey, P-256), and the SEC1 structure as an octet string.
fn test_key_pkcs8() -> Vec<u8> {
    use base64::Engine as _;
    let body: String = TEST_KEY_PEM.lines().filter(|l| !l.starts_with("-----")).collect();
    let sec1 = base64::engine::general_purpose::STANDARD.decode(body.as_bytes()).expect("PEM body");
    let ec_public_key = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01];
    let p256 = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
    let algorithm = der(0x30, &[&ec_public_key[..], &p256[..]].concat());
    der(0x30, &[&[0x02, 0x01, 0x00][..], &algorithm, &der(0x04, &sec1)].concat())
}

/// The raw r||s signature (64 bytes) of `data` by FR00/0001, as a seal carries it.
pub fn sign_with_test_authority(data: &[u8]) -> Vec<u8> {
    let rng = SystemRandom::new();
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &test_key_pkcs8(), &rng).expect("test key");
    key.sign(&rng, data).expect("signature").as_ref().to_vec()
}
