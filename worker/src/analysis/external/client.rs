//! The HTTP side of the external service: one reqwest client built at start, one POST per document, retried a
//! few times on failures that another attempt can cure (connection, timeout, 5xx), with a short backoff so a
//! service that restarts does not cost the document its checks.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{redirect, Client, StatusCode, Url};

use super::contract::{ExternalRequest, RequestBody, ResponseBody};
use super::{ExternalError, ExternalOptions, ExternalVerdict};

/// Waits before the 2nd, 3rd… attempt; the last one repeats.
const BACKOFF: &[Duration] = &[Duration::from_millis(200), Duration::from_secs(1)];
/// Largest answer read; the contract's answers are a few kilobytes.
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// A configured external service.
pub struct ExternalEngine {
    client: Client,
    url: Url,
    token: Option<String>,
    timeout: Duration,
    attempts: u32,
}

impl std::fmt::Debug for ExternalEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalEngine")
            .field("host", &self.url.host_str())
            .field("timeout", &self.timeout)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl ExternalEngine {
    pub fn new(options: ExternalOptions) -> Result<Self, ExternalError> {
        // The URL may carry credentials: errors say what is wrong with it, never what it is.
        let url = Url::parse(options.url.trim()).map_err(|e| ExternalError::Config(format!("the URL does not parse ({e})")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ExternalError::Config("the URL must be http or https".into()));
        }
        if options.timeout.is_zero() {
            return Err(ExternalError::Config("the timeout must be positive".into()));
        }
        if options
            .token
            .as_deref()
            .is_some_and(|t| t.trim().is_empty() || t.chars().any(|c| c.is_control()))
        {
            return Err(ExternalError::Config("the token is empty or has control characters".into()));
        }
        // reqwest is built without a default crypto provider; the binary installs one at start, and installing
        // it again here (a no-op then) keeps the engine usable on its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            // A redirect would carry the document (and, on the same host, the token) somewhere nobody configured.
            .redirect(redirect::Policy::none())
            .timeout(options.timeout)
            .connect_timeout(options.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("Sceau-Worker/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ExternalError::Config(format!("the HTTP client cannot be built ({})", e.without_url())))?;
        Ok(ExternalEngine {
            client,
            url,
            token: options.token,
            timeout: options.timeout,
            attempts: options.attempts.max(1),
        })
    }

    /// Sends the document to the service and maps its answer. Retries as [`ExternalError::is_retryable`] says,
    /// up to the configured attempts; the last error is returned when none succeeds.
    pub async fn analyse(&self, request: ExternalRequest<'_>) -> Result<ExternalVerdict, ExternalError> {
        let body = serde_json::to_vec(&RequestBody::from(&request))
            .map_err(|e| ExternalError::Config(format!("the request cannot be encoded ({})", e.classify_name())))?;
        let mut attempt = 1;
        loop {
            match self.attempt(body.clone()).await {
                Ok(response) => return Ok(ExternalVerdict::from_response(response, request.selfie.is_some())),
                Err(error) if error.is_retryable() && attempt < self.attempts => {
                    let wait = BACKOFF[(attempt as usize - 1).min(BACKOFF.len() - 1)];
                    tracing::warn!(attempt, attempts = self.attempts, %error, ?wait, "external engine attempt failed, retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(error) => {
                    tracing::warn!(attempt, attempts = self.attempts, %error, "external engine failed");
                    return Err(error);
                }
            }
        }
    }

    async fn attempt(&self, body: Vec<u8>) -> Result<ResponseBody, ExternalError> {
        let mut request = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let mut response = request.send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(ExternalError::Status(status.as_u16()));
        }
        if status == StatusCode::NO_CONTENT {
            return Err(ExternalError::InvalidResponse("the answer has no body".into()));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport_error(e))? {
            if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(ExternalError::InvalidResponse(format!(
                    "the answer exceeds {MAX_RESPONSE_BYTES} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        // serde_json's messages quote the offending value, which may be anything the service sent: only the
        // error's class and position are kept.
        serde_json::from_slice(&bytes)
            .map_err(|e| ExternalError::InvalidResponse(format!("{} error at line {} column {}", e.classify_name(), e.line(), e.column())))
    }

    fn transport_error(&self, error: reqwest::Error) -> ExternalError {
        // The URL may carry credentials.
        let error = error.without_url();
        if error.is_timeout() {
            ExternalError::Timeout(self.timeout)
        } else if error.is_connect() {
            ExternalError::Connect(describe(&error))
        } else {
            ExternalError::Transport(describe(&error))
        }
    }
}

/// reqwest's message (its URL removed by the caller) with its first cause, which says "connection refused" and
/// the like.
fn describe(error: &reqwest::Error) -> String {
    let own = error.to_string();
    let cause = std::error::Error::source(error).map(|c| c.to_string());
    let text = match cause {
        Some(cause) if !own.contains(&cause) => format!("{own}: {cause}"),
        _ => own,
    };
    super::sanitise(&text, 200)
}

/// The name of a serde_json error's class, for messages that must not quote the data.
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O",
            serde_json::error::Category::Syntax => "syntax",
            serde_json::error::Category::Data => "data",
            serde_json::error::Category::Eof => "truncated JSON",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::contract::Attachment;
    use super::*;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode as AxumStatus};
    use axum::routing::post;
    use axum::Router;
    use base64::Engine as _;
    use domain::vocabulary::{DocumentCategory, Severity};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct Seen {
        hits: AtomicUsize,
        bodies: Mutex<Vec<(Option<String>, serde_json::Value)>>,
    }

    type Shared = State<Arc<Seen>>;

    fn record(seen: &Seen, headers: &HeaderMap, body: &str) -> usize {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let json = serde_json::from_str(body).unwrap_or(serde_json::Value::Null);
        seen.bodies.lock().unwrap().push((auth, json));
        seen.hits.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn json(status: AxumStatus, body: &'static str) -> (AxumStatus, [(&'static str, &'static str); 1], &'static str) {
        (status, [("content-type", "application/json")], body)
    }

    /// A service with one route per behaviour, on a free loopback port.
    async fn service() -> (String, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        let app = Router::new()
            .route(
                "/match",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    record(&s, &h, &b);
                    json(AxumStatus::OK, r#"{"selfie":{"checked":true,"match":true,"score":0.97},"signals":[]}"#)
                }),
            )
            .route(
                "/mismatch",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    record(&s, &h, &b);
                    json(AxumStatus::OK, r#"{"selfie":{"checked":true,"match":false,"score":0.08},"signals":[]}"#)
                }),
            )
            .route(
                "/signal",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    record(&s, &h, &b);
                    json(
                        AxumStatus::OK,
                        r#"{"selfie":null,"signals":[{"code":"screen_replay","severity":"reject","message":"Photo of a screen"},{"code":"font_mismatch","severity":"warning","message":"x"}]}"#,
                    )
                }),
            )
            .route(
                "/flaky",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    match record(&s, &h, &b) {
                        1 => json(AxumStatus::INTERNAL_SERVER_ERROR, "{}"),
                        _ => json(AxumStatus::OK, r#"{"selfie":null,"signals":[]}"#),
                    }
                }),
            )
            .route(
                "/down",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    record(&s, &h, &b);
                    json(AxumStatus::SERVICE_UNAVAILABLE, "{}")
                }),
            )
            .route(
                "/bad-request",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    record(&s, &h, &b);
                    json(AxumStatus::BAD_REQUEST, r#"{"error":"bad"}"#)
                }),
            )
            .route(
                "/slow",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    record(&s, &h, &b);
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    json(AxumStatus::OK, r#"{"selfie":null,"signals":[]}"#)
                }),
            )
            .route(
                "/bad-json",
                post(|State(s): Shared, h: HeaderMap, b: String| async move {
                    record(&s, &h, &b);
                    json(AxumStatus::OK, r#"{"selfie":{"checked":"SECRET-VALUE"}}"#)
                }),
            )
            .with_state(seen.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (format!("http://{addr}"), seen)
    }

    fn engine(url: String, timeout: Duration, attempts: u32) -> ExternalEngine {
        ExternalEngine::new(ExternalOptions {
            url,
            token: Some("t0ken-s3cret".into()),
            timeout,
            attempts,
        })
        .unwrap()
    }

    const FRONT: &[u8] = b"\x89PNG front bytes \x00\xff";
    const SELFIE: &[u8] = b"\xff\xd8 selfie bytes";

    fn request(selfie: bool) -> ExternalRequest<'static> {
        ExternalRequest {
            category: DocumentCategory::Identite,
            document_type: "carte_identite",
            front: Attachment {
                content_type: "image/png",
                bytes: FRONT,
            },
            back: None,
            selfie: selfie.then_some(Attachment {
                content_type: "image/jpeg",
                bytes: SELFIE,
            }),
        }
    }

    #[tokio::test]
    async fn selfie_match_and_the_request_body() {
        let (base, seen) = service().await;
        let verdict = engine(format!("{base}/match"), Duration::from_secs(5), 3)
            .analyse(request(true))
            .await
            .unwrap();
        assert!(verdict.selfie_checked);
        assert_eq!(verdict.selfie_match, Some(true));
        assert!(verdict.anomalies.is_empty());
        let bodies = seen.bodies.lock().unwrap();
        let (auth, body) = &bodies[0];
        assert_eq!(auth.as_deref(), Some("Bearer t0ken-s3cret"));
        let b64 = base64::engine::general_purpose::STANDARD;
        assert_eq!(body["contractVersion"], 1);
        assert_eq!(body["category"], "identite");
        assert_eq!(body["documentType"], "carte_identite");
        assert_eq!(body["front"]["contentType"], "image/png");
        assert_eq!(body["front"]["data"], b64.encode(FRONT));
        assert_eq!(body["selfie"]["data"], b64.encode(SELFIE));
        assert_eq!(body["back"], serde_json::Value::Null);
    }

    #[tokio::test]
    async fn selfie_mismatch_and_fraud_signals() {
        let (base, _) = service().await;
        let verdict = engine(format!("{base}/mismatch"), Duration::from_secs(5), 1)
            .analyse(request(true))
            .await
            .unwrap();
        let codes: Vec<_> = verdict.anomalies.iter().map(|a| (a.code.as_str(), a.severity)).collect();
        assert_eq!(codes, vec![("selfie_mismatch", Severity::Reject)]);
        assert_eq!(verdict.selfie_match, Some(false));

        let verdict = engine(format!("{base}/signal"), Duration::from_secs(5), 1)
            .analyse(request(false))
            .await
            .unwrap();
        let codes: Vec<_> = verdict.anomalies.iter().map(|a| (a.code.as_str(), a.severity)).collect();
        assert_eq!(
            codes,
            vec![
                ("external_fraud_signal", Severity::Reject),
                ("external_fraud_signal", Severity::Warning)
            ]
        );
        assert!(verdict.anomalies[0].message.contains("screen_replay: Photo of a screen"));
        assert!(!verdict.selfie_checked);
    }

    #[tokio::test]
    async fn a_server_error_is_retried_once_then_succeeds() {
        let (base, seen) = service().await;
        let verdict = engine(format!("{base}/flaky"), Duration::from_secs(5), 3)
            .analyse(request(false))
            .await
            .unwrap();
        assert_eq!(verdict, ExternalVerdict::default());
        assert_eq!(seen.hits.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_service_always_failing_gives_up_after_the_attempts() {
        let (base, seen) = service().await;
        let started = std::time::Instant::now();
        let error = engine(format!("{base}/down"), Duration::from_secs(5), 3)
            .analyse(request(false))
            .await
            .unwrap_err();
        assert_eq!(error, ExternalError::Status(503));
        assert_eq!(seen.hits.load(Ordering::SeqCst), 3);
        // 200 ms then 1 s of backoff.
        assert!(started.elapsed() >= Duration::from_millis(1200));
    }

    #[tokio::test]
    async fn a_client_error_is_not_retried() {
        let (base, seen) = service().await;
        let error = engine(format!("{base}/bad-request"), Duration::from_secs(5), 3)
            .analyse(request(false))
            .await
            .unwrap_err();
        assert_eq!(error, ExternalError::Status(400));
        assert_eq!(seen.hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_slow_service_times_out() {
        let (base, seen) = service().await;
        let started = std::time::Instant::now();
        let error = engine(format!("{base}/slow"), Duration::from_millis(300), 2)
            .analyse(request(false))
            .await
            .unwrap_err();
        assert_eq!(error, ExternalError::Timeout(Duration::from_millis(300)));
        assert_eq!(seen.hits.load(Ordering::SeqCst), 2);
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[tokio::test]
    async fn an_answer_outside_the_contract_is_an_error_without_its_values() {
        let (base, seen) = service().await;
        let error = engine(format!("{base}/bad-json"), Duration::from_secs(5), 3)
            .analyse(request(false))
            .await
            .unwrap_err();
        assert!(matches!(error, ExternalError::InvalidResponse(_)), "{error:?}");
        assert!(!error.to_string().contains("SECRET-VALUE"), "{error}");
        assert_eq!(seen.hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn an_unreachable_service_is_a_connect_error_after_retries() {
        // A port just released: nothing listens there.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let error = engine(format!("http://{addr}/"), Duration::from_secs(2), 2)
            .analyse(request(false))
            .await
            .unwrap_err();
        assert!(matches!(error, ExternalError::Connect(_)), "{error:?}");
        assert!(!error.to_string().contains("t0ken"));
    }

    #[test]
    fn configuration_is_checked() {
        let options = |url: &str, token: Option<&str>, timeout: Duration| ExternalOptions {
            url: url.into(),
            token: token.map(Into::into),
            timeout,
            attempts: 0,
        };
        let second = Duration::from_secs(1);
        assert!(matches!(
            ExternalEngine::new(options("not a url", None, second)),
            Err(ExternalError::Config(_))
        ));
        assert!(matches!(
            ExternalEngine::new(options("ftp://x/", None, second)),
            Err(ExternalError::Config(_))
        ));
        assert!(matches!(
            ExternalEngine::new(options("http://x/", Some(" "), second)),
            Err(ExternalError::Config(_))
        ));
        assert!(matches!(
            ExternalEngine::new(options("http://x/", None, Duration::ZERO)),
            Err(ExternalError::Config(_))
        ));
        let engine = ExternalEngine::new(options("https://user:pw@x.example/analyse", Some("tok"), second)).unwrap();
        assert_eq!(engine.attempts, 1);
        let debug = format!("{engine:?}");
        assert!(!debug.contains("pw") && !debug.contains("tok"), "{debug}");
    }
}
