//! The hardware floor of one deposit, for `scripts/bench --ingest`: what storing a document costs
//! with nothing around it, in one thread. Base64 decode, AES-256-GCM, write to a new file, fdatasync.
//!
//!   cargo bench -p common --bench ingest_floor -- SIZE_BYTES COUNT DIR
//!
//! Prints one JSON line: the size, the count and the seconds per document. The files are left in
//! DIR for the caller to remove once every measurement is done: deleting them now would slow the
//! next measurement's file creations (ext4 skips recently freed inodes).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM};
use std::io::Write;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [size, count, dir] = args.as_slice() else {
        return Err("usage: ingest_floor SIZE_BYTES COUNT DIR".into());
    };
    let (size, count): (usize, usize) = (size.parse()?, count.parse()?);
    let dir = std::path::Path::new(dir);
    let document: Vec<u8> = (0..size).map(|i| (i * 7919 % 251) as u8).collect();
    let encoded = STANDARD.encode(&document);
    let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &[7u8; 32]).map_err(|_| "key")?);
    let start = Instant::now();
    for i in 0..count {
        let mut bytes = STANDARD.decode(&encoded)?;
        let mut nonce = [0u8; 12];
        nonce[..8].copy_from_slice(&(i as u64).to_le_bytes());
        key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(b"company/item"), &mut bytes)
            .map_err(|_| "seal")?;
        let path = dir.join(format!("floor-{i}"));
        let mut file = std::fs::File::create(&path)?;
        file.write_all(&bytes)?;
        file.sync_data()?;
    }
    let per_document = start.elapsed().as_secs_f64() / count as f64;
    println!("{{\"size\": {size}, \"count\": {count}, \"seconds_per_document\": {per_document}}}");
    Ok(())
}
