//! The client side of `scripts/bench --ingest`: deposits of one size into one batch, as a
//! back-end uploads the documents it holds: from CONNECTIONS kept-alive connections, each
//! sending its next deposit when the last is answered. A compiled client, so that the figure is
//! the service's and not an interpreter's (a Python `http.client` round trip costs 0.25 ms
//! here, a third of the floor at 100 KB).
//!
//!   cargo bench --bench ingest -- BASE_URL API_KEY SIZE_BYTES COUNT CONNECTIONS
//!
//! Prints one JSON line: the size, the count, the connections and the seconds per deposit
//! (the run's wall time over the count: the inverse of the ingest rate). The batch is left open:
//! canceling it would delete its files while the next measurement runs.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::json;
use std::time::Instant;

/// A PNG signature and header, then incompressible bytes: checked by its header, never decoded.
const PNG_HEADER: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x40\0\0\0\x40\x08\x02\0\0\0\x25\x0b\xe6\x89";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [base, key, size, count, connections] = args.as_slice() else {
        return Err("usage: ingest BASE_URL API_KEY SIZE_BYTES COUNT CONNECTIONS".into());
    };
    let (size, count, connections): (usize, usize, usize) = (size.parse()?, count.parse()?, connections.parse()?);
    // reqwest is built without a default TLS provider here; plain HTTP still asks for one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().pool_max_idle_per_host(connections).build()?;
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
    let queue = std::sync::Arc::new(std::sync::Mutex::new(bodies));
    let path = format!("{base}/api/v1/batches/{batch}/documents");

    let start = Instant::now();
    // Each connection takes the next body when its last deposit is answered.
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..connections.max(1) {
        let (client, queue, path, key) = (client.clone(), queue.clone(), path.clone(), key.clone());
        senders.spawn(async move {
            loop {
                let next = queue.lock().map_err(|_| "poisoned")?.pop();
                let Some(body) = next else { break };
                let response = client
                    .post(&path)
                    .bearer_auth(&key)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                let status = response.status();
                let text = response.text().await.map_err(|e| e.to_string())?;
                if status != reqwest::StatusCode::CREATED {
                    return Err(format!("deposit answered {status}: {text}"));
                }
            }
            Ok::<_, String>(())
        });
    }
    while let Some(sent) = senders.join_next().await {
        sent??;
    }
    let per_deposit = start.elapsed().as_secs_f64() / count as f64;

    println!("{{\"size\": {size}, \"count\": {count}, \"connections\": {connections}, \"seconds_per_document\": {per_deposit}}}");
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
