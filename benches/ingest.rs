//! The client side of `scripts/bench --ingest`: deposits of one size, one after the other on one
//! kept-alive connection, as a back-end that uploads the documents it holds. A compiled client,
//! so that the figure is the service's and not an interpreter's (a Python `http.client` round
//! trip costs 0.25 ms here, a third of the floor at 100 KB).
//!
//!   cargo bench --bench ingest -- BASE_URL API_KEY SIZE_BYTES COUNT
//!
//! Prints one JSON line: the size, the count and the seconds per deposit.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::json;
use std::time::Instant;

/// A PNG signature and header, then incompressible bytes: checked by its header, never decoded.
const PNG_HEADER: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x40\0\0\0\x40\x08\x02\0\0\0\x25\x0b\xe6\x89";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [base, key, size, count] = args.as_slice() else {
        return Err("usage: ingest BASE_URL API_KEY SIZE_BYTES COUNT".into());
    };
    let (size, count): (usize, usize) = (size.parse()?, count.parse()?);
    // reqwest is built without a default TLS provider here; plain HTTP still asks for one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().pool_max_idle_per_host(1).build()?;
    let post = |path: String| client.post(format!("{base}{path}")).bearer_auth(key);

    let batch: serde_json::Value = post("/api/v1/batches".into())
        .json(&json!({"externalRef": "ingest"}))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let batch = batch["id"].as_str().ok_or("no batch id")?.to_owned();
    let bodies: Vec<bytes::Bytes> = (0..count).map(|i| deposit_body(size, i)).collect::<Result<_, _>>()?;

    let start = Instant::now();
    for body in bodies {
        let response = post(format!("/api/v1/batches/{batch}/documents"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await?;
        if response.status() != reqwest::StatusCode::CREATED {
            return Err(format!("deposit answered {}: {}", response.status(), response.text().await?).into());
        }
        response.bytes().await?;
    }
    let per_deposit = start.elapsed().as_secs_f64() / count as f64;

    post(format!("/api/v1/batches/{batch}/cancel")).send().await?.error_for_status()?;
    println!("{{\"size\": {size}, \"count\": {count}, \"seconds_per_document\": {per_deposit}}}");
    Ok(())
}

fn deposit_body(size: usize, seed: usize) -> Result<bytes::Bytes, Box<dyn std::error::Error>> {
    let mut document = PNG_HEADER.to_vec();
    let mut noise = vec![0u8; size.saturating_sub(PNG_HEADER.len())];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut noise).map_err(|_| "random")?;
    noise[0] = seed as u8;
    document.extend_from_slice(&noise);
    let body = json!({"documentCategory": "identite", "document": STANDARD.encode(&document)});
    Ok(serde_json::to_vec(&body)?.into())
}
