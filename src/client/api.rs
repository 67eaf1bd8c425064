//! The API as the client commands reach it: `SCEAU_URL` and `SCEAU_API_KEY` from the environment,
//! every POST with an `Idempotency-Key` so a command that is retried does nothing twice.

use serde_json::Value;

/// Where the service is when `SCEAU_URL` is not set: `sceau serve` on this machine.
const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// Why a call did not give an answer to use.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("SCEAU_API_KEY is not set: export the company's API key (sk_live_… or sk_test_…)")]
    NoKey,
    #[error("cannot reach {url}: {source}")]
    Unreachable { url: String, source: reqwest::Error },
    #[error("{status}: {body}")]
    Refused { status: u16, body: String },
}

/// A client of one service, with one key.
pub struct Api {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Api {
    /// From `SCEAU_URL` (default `http://127.0.0.1:8080`) and `SCEAU_API_KEY`.
    pub fn from_env() -> Result<Api, ClientError> {
        let key = std::env::var("SCEAU_API_KEY").map_err(|_| ClientError::NoKey)?;
        let base = std::env::var("SCEAU_URL").unwrap_or_else(|_| DEFAULT_URL.to_owned());
        // reqwest is built without a default crypto provider, for https services.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Ok(Api {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_owned(),
            key,
        })
    }

    /// POSTs `body` to `path` under `idempotency_key`; the answer's JSON on a 2xx.
    pub async fn post(&self, path: &str, body: &Value, idempotency_key: &str) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.base);
        let response = self
            .http
            .post(&url)
            .bearer_auth(&self.key)
            .header("Idempotency-Key", idempotency_key)
            .json(body)
            .send()
            .await
            .map_err(|source| ClientError::Unreachable { url: url.clone(), source })?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|source| ClientError::Unreachable { url, source })?;
        if !(200..300).contains(&status) {
            return Err(ClientError::Refused { status, body: text });
        }
        serde_json::from_str(&text).map_err(|_| ClientError::Refused { status, body: text })
    }
}
