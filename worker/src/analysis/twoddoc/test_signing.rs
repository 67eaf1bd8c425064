//! Seals signed in tests with the test authority's published key (spec §16.1), shared by the tests of
//! the message layer and of the engine, so both tamper with the same genuine seals.

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};

use super::message::US;

const TEST_KEY_PEM: &str = include_str!("../../../data/2ddoc/test-ca/fr00-0001.key.pem");

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
    let body: String = TEST_KEY_PEM.lines().filter(|l| !l.starts_with("-----")).collect();
    let sec1 = data_encoding::BASE64.decode(body.as_bytes()).expect("PEM body");
    let ec_public_key = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01];
    let p256 = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
    let algorithm = der(0x30, &[&ec_public_key[..], &p256[..]].concat());
    der(0x30, &[&[0x02, 0x01, 0x00][..], &algorithm, &der(0x04, &sec1)].concat())
}

pub fn sign(data: &[u8]) -> Vec<u8> {
    let rng = SystemRandom::new();
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &test_key_pkcs8(), &rng).expect("test key");
    key.sign(&rng, data).expect("signature").as_ref().to_vec()
}

pub fn base32(bytes: &[u8]) -> String {
    data_encoding::BASE32_NOPAD.encode(bytes)
}

/// `signed` + US + Base32 signature of `signed`.
pub fn seal(signed: &str) -> Vec<u8> {
    let mut out = signed.as_bytes().to_vec();
    out.push(US);
    out.extend(base32(&sign(signed.as_bytes())).bytes());
    out
}

pub fn header(version: u8, ca_cert: &str, issue: &str, signature: &str, doc_type: &str) -> String {
    match version {
        2 => format!("DC02{ca_cert}{issue}{signature}{doc_type}"),
        3 => format!("DC03{ca_cert}{issue}{signature}{doc_type}01"),
        _ => format!("DC04{ca_cert}{issue}{signature}{doc_type}01FR"),
    }
}
