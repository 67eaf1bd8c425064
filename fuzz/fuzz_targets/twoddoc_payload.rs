//! Any DataMatrix payload: the 2D-Doc reader returns a finding or a malformation, never panics.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use worker::analysis::twoddoc::{analyse_payload, TrustOptions, TrustStore};

static TRUST: LazyLock<TrustStore> = LazyLock::new(|| {
    TrustStore::build(&TrustOptions {
        accept_test_ca: true,
        extra_dir: None,
    })
    .expect("the shipped trust list loads")
});

fuzz_target!(|data: &[u8]| {
    let _ = analyse_payload(data, &TRUST);
});
