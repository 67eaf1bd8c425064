//! The API as the client commands reach it: `SCEAU_URL` and `SCEAU_API_KEY` from the environment,
//! every POST with an `Idempotency-Key` so a command that is retried does nothing twice. The URL
//! is https unless the service is on this machine: the key and the documents never go in clear.

use serde_json::Value;
use std::time::Duration;

/// Where the service is when `SCEAU_URL` is not set: `sceau serve` on this machine.
const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// Why a call did not give an answer to use.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("SCEAU_API_KEY is not set: export the company's API key (sk_live_… or sk_test_…)")]
    NoKey,
    #[error("cannot set up the HTTP client: {0}")]
    Setup(reqwest::Error),
    /// The key and the customers' documents would cross the network in clear.
    #[error("{0}")]
    InsecureUrl(String),
    #[error("cannot reach {url}: {source}")]
    Unreachable { url: String, source: reqwest::Error },
    #[error("{status}: {body}")]
    Refused { status: u16, body: String },
}

/// The error codes a client acts on rather than reports (`/work/shared/API.md`, errors); any other
/// code is the caller's to report as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 409: the key's first request has not ended yet.
    IdempotencyKeyInUse,
    /// 429: too many requests; `Retry-After` says when to try again.
    RateLimited,
    /// 429: the company holds 400 documents whose images are not purged yet.
    DocumentQuotaExceeded,
    /// 429: the company's pending file volume is at its limit.
    VolumeQuotaExceeded,
    /// 429: the company has 3 batches open.
    TooManyOpenBatches,
    /// 429: the batch holds its 200 documents.
    BatchFull,
    /// 409: the batch (or consultation) is not in a state that allows this.
    InvalidState,
}

/// A client of one service, with one key; cheap to clone (the connection pool is shared).
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    base: String,
    key: String,
}

/// Whatever the service answered: its status, its JSON body (`Null` when it sent none) and the
/// delay its `Retry-After` asks for.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub retry_after: Option<Duration>,
}

impl Answer {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The error's machine code (`{"error": "…"}`), if the body has one.
    pub fn error_code(&self) -> Option<&str> {
        self.body["error"].as_str()
    }

    /// The error's code, when it is one a client acts on.
    pub fn code(&self) -> Option<ErrorCode> {
        serde_json::from_value(self.body["error"].clone()).ok()
    }

    /// The answer as `Refused`, for a caller that had no use for it.
    pub fn refused(&self) -> ClientError {
        ClientError::Refused {
            status: self.status,
            body: self.body.to_string(),
        }
    }
}

impl Api {
    /// From `SCEAU_URL` (default `http://127.0.0.1:8080`) and `SCEAU_API_KEY`.
    pub fn from_env() -> Result<Api, ClientError> {
        let key = std::env::var("SCEAU_API_KEY").map_err(|_| ClientError::NoKey)?;
        let base = std::env::var("SCEAU_URL").unwrap_or_else(|_| DEFAULT_URL.to_owned());
        common::config::https_unless_loopback("SCEAU_URL", &base).map_err(|e| ClientError::InsecureUrl(e.0))?;
        // reqwest is built without a default crypto provider, for https services.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .pool_idle_timeout(gateway::server::CLIENT_POOL_IDLE)
            // The API never redirects: one that does is not the service, and must not get the key.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(ClientError::Setup)?;
        Ok(Api {
            http,
            base: base.trim_end_matches('/').to_owned(),
            key,
        })
    }

    /// POSTs `body` to `path` under `idempotency_key`; the answer's JSON on a 2xx.
    pub async fn post(&self, path: &str, body: &Value, idempotency_key: &str) -> Result<Value, ClientError> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let answer = self.post_raw(path, Some(bytes), idempotency_key).await?;
        if !answer.is_success() || !answer.body.is_object() {
            return Err(answer.refused());
        }
        Ok(answer.body)
    }

    /// POSTs `body` (JSON bytes already serialised; `None`: no body, as a submit) to `path` under
    /// `idempotency_key`, and returns whatever came back: only a request that got no answer is an
    /// error.
    pub async fn post_raw(&self, path: &str, body: Option<Vec<u8>>, idempotency_key: &str) -> Result<Answer, ClientError> {
        let url = format!("{}{path}", self.base);
        let mut request = self
            .http
            .post(&url)
            .bearer_auth(&self.key)
            .header("Idempotency-Key", idempotency_key);
        if let Some(body) = body {
            request = request.header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        }
        Self::answer(url, request).await
    }

    /// GETs `path`, whatever it answers; only a request that got no answer is an error.
    pub async fn get(&self, path: &str) -> Result<Answer, ClientError> {
        let url = format!("{}{path}", self.base);
        let request = self.http.get(&url).bearer_auth(&self.key);
        Self::answer(url, request).await
    }

    async fn answer(url: String, request: reqwest::RequestBuilder) -> Result<Answer, ClientError> {
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Unreachable { url: url.clone(), source })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response.text().await.map_err(|source| ClientError::Unreachable { url, source })?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            match serde_json::from_str(&text) {
                Ok(body) => body,
                // Not JSON (a proxy's page): kept as a string for the message.
                Err(_) => Value::String(text),
            }
        };
        Ok(Answer { status, body, retry_after })
    }
}
