//! One attempt at delivering a webhook: guard the destination, sign, POST, and say what the
//! receiver's answer means for the event. Retry policy lives with the consumer; this module only
//! tells a permanent refusal from a failure worth another try.

use crate::config::NotifierConfig;
use crate::destination::{resolve_checked, validate_url, DestinationError, GuardedResolver};
use common::crypto::webhook_signature::{signature_header, MalformedSecret};
use common::messages::EventDelivery;
use reqwest::header::CONTENT_TYPE;
use reqwest::{redirect, StatusCode};
use std::error::Error as _;
use std::sync::Arc;
use std::time::Duration;

/// Why an attempt did not deliver. The messages go to the delivery log that operators and the
/// company read, so they never carry the body, a secret or the URL (which may hold a token).
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error(transparent)]
    Destination(#[from] DestinationError),
    #[error("the company has no webhook signing secret")]
    NoSecret,
    #[error("the company's webhook signing secret is malformed")]
    Signing(#[from] MalformedSecret),
    #[error("the receiver answered 410 Gone")]
    Gone,
    #[error("the receiver answered {0}, a redirect, which is not followed")]
    Redirect(u16),
    #[error("the receiver answered {0}")]
    Status(u16),
    #[error("the receiver did not answer within {0:?}")]
    Timeout(Duration),
    #[error("could not reach the receiver: {0}")]
    Transport(String),
}

impl DeliveryError {
    /// The HTTP status the receiver answered, if it answered.
    pub fn status_code(&self) -> Option<u16> {
        match self {
            DeliveryError::Gone => Some(StatusCode::GONE.as_u16()),
            DeliveryError::Redirect(code) | DeliveryError::Status(code) => Some(*code),
            _ => None,
        }
    }

    /// Whether another attempt cannot succeed, so the event stops here.
    pub fn is_permanent(&self) -> bool {
        match self {
            DeliveryError::Destination(e) => e.is_permanent(),
            DeliveryError::NoSecret | DeliveryError::Signing(_) | DeliveryError::Gone => true,
            DeliveryError::Redirect(_) | DeliveryError::Status(_) | DeliveryError::Timeout(_) | DeliveryError::Transport(_) => false,
        }
    }
}

/// Sends webhooks through one HTTP client, built once so connections and TLS sessions are reused.
pub struct Deliverer {
    client: reqwest::Client,
    allow_hosts: Vec<String>,
    timeout: Duration,
}

impl Deliverer {
    pub fn new(config: &NotifierConfig) -> Result<Self, reqwest::Error> {
        // reqwest is built without a default crypto provider; another component of the process
        // may have installed it already, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            // A redirect would lead the request to a destination nobody checked.
            .redirect(redirect::Policy::none())
            // A proxy resolves names itself, out of the guard's reach; and HTTP(S)_PROXY set for
            // other reasons must not silently reroute webhooks.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver::new(&config.allow_hosts)))
            .timeout(config.timeout)
            .user_agent(concat!("Sceau-Webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            client,
            allow_hosts: config.allow_hosts.clone(),
            timeout: config.timeout,
        })
    }

    /// Makes one attempt; `Ok` carries the receiver's 2xx status.
    pub async fn deliver(&self, event: &EventDelivery, secrets: &[String]) -> Result<u16, DeliveryError> {
        if secrets.is_empty() {
            return Err(DeliveryError::NoSecret);
        }
        // Checked again at every send: the allow-list may have changed since the URL was stored,
        // and the name may resolve elsewhere now.
        let url = validate_url(&event.url, &self.allow_hosts)?;
        resolve_checked(&url, &self.allow_hosts).await?;

        let msg_id = event.event_id.as_str();
        let timestamp = chrono::Utc::now().timestamp();
        let signature = signature_header(secrets, msg_id, timestamp, event.body.as_bytes())?;
        let response = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header("webhook-id", msg_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(event.body.clone())
            .send()
            .await
            .map_err(|e| self.transport_error(e))?;
        // The answer's body is not read: only the status matters, and a receiver must not be
        // able to make us buffer anything.
        classify(response.status())
    }

    fn transport_error(&self, err: reqwest::Error) -> DeliveryError {
        if err.is_timeout() {
            return DeliveryError::Timeout(self.timeout);
        }
        if let Some(refusal) = guard_refusal(&err) {
            return DeliveryError::Destination(refusal);
        }
        DeliveryError::Transport(describe(&err.without_url()))
    }
}

fn classify(status: StatusCode) -> Result<u16, DeliveryError> {
    let code = status.as_u16();
    if status.is_success() {
        Ok(code)
    } else if status == StatusCode::GONE {
        Err(DeliveryError::Gone)
    } else if status.is_redirection() {
        Err(DeliveryError::Redirect(code))
    } else {
        Err(DeliveryError::Status(code))
    }
}

/// The guard's refusal when it happened inside the client's resolver (the name re-resolved to an
/// internal address after `resolve_checked`): it must end the event like any other refusal rather
/// than pass for a connection failure worth retrying.
fn guard_refusal(err: &reqwest::Error) -> Option<DestinationError> {
    let mut source = err.source();
    while let Some(e) = source {
        if let Some(DestinationError::Forbidden { range, addr }) = e.downcast_ref::<DestinationError>() {
            return Some(DestinationError::Forbidden {
                range: *range,
                addr: *addr,
            });
        }
        source = e.source();
    }
    None
}

/// The error and its causes on one line: reqwest's own message ("error sending request") says
/// nothing of what went wrong.
fn describe(err: &reqwest::Error) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(e) = source {
        let text = e.to_string();
        if parts.last() != Some(&text) {
            parts.push(text);
        }
        source = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified() {
        assert_eq!(classify(StatusCode::OK).ok(), Some(200));
        assert_eq!(classify(StatusCode::NO_CONTENT).ok(), Some(204));
        assert!(matches!(classify(StatusCode::GONE), Err(DeliveryError::Gone)));
        assert!(matches!(classify(StatusCode::FOUND), Err(DeliveryError::Redirect(302))));
        assert!(matches!(classify(StatusCode::NOT_MODIFIED), Err(DeliveryError::Redirect(304))));
        assert!(matches!(classify(StatusCode::NOT_FOUND), Err(DeliveryError::Status(404))));
        assert!(matches!(classify(StatusCode::SERVICE_UNAVAILABLE), Err(DeliveryError::Status(503))));
    }

    #[tokio::test]
    async fn a_refusal_by_the_client_resolver_is_recognised() {
        // Stands for a name that passed `resolve_checked` and re-resolved to loopback when the
        // client connected: the request goes straight through the client, past the first check.
        let deliverer = Deliverer::new(&NotifierConfig::default()).expect("client");
        let err = deliverer
            .client
            .post("http://localhost:9/")
            .send()
            .await
            .expect_err("localhost must be refused by the resolver");
        match deliverer.transport_error(err) {
            DeliveryError::Destination(DestinationError::Forbidden { range, .. }) => {
                assert_eq!(range, crate::destination::ForbiddenRange::Loopback);
            }
            other => panic!("not recognised as a refusal: {other:?}"),
        }
    }

    #[test]
    fn only_refusals_and_gone_are_permanent() {
        assert!(DeliveryError::Gone.is_permanent());
        assert!(DeliveryError::NoSecret.is_permanent());
        assert!(DeliveryError::Destination(DestinationError::HttpNotAllowed).is_permanent());
        assert!(!DeliveryError::Status(500).is_permanent());
        assert!(!DeliveryError::Redirect(302).is_permanent());
        assert!(!DeliveryError::Timeout(Duration::from_secs(15)).is_permanent());
        assert!(!DeliveryError::Destination(DestinationError::NoAddress { host: "x".into() }).is_permanent());
        assert_eq!(DeliveryError::Gone.status_code(), Some(410));
        assert_eq!(
            DeliveryError::Timeout(Duration::from_secs(15)).to_string(),
            "the receiver did not answer within 15s"
        );
    }
}
