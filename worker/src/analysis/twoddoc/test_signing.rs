//! Seals signed in tests with the test authority's published key (spec §16.1), shared by the tests of
//! the message layer and of the engine, so both tamper with the same genuine seals.

pub use common::test_fixtures::two_d_doc::sign_with_test_authority as sign;

use super::message::US;

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
