//! `sceau client listen`: the webhook receiver an integrator runs on a laptop while building theirs.
//! It checks every delivery as their server must (the signature over id, timestamp and body, a
//! timestamp within five minutes), prints the event readably, answers 204 to what verifies and 401
//! to what does not, and can forward each verified delivery, headers and body untouched.

use crate::output;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Router;
use common::crypto::webhook_signature;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

/// How far a delivery's timestamp may be from now: a replayed capture is refused.
const TOLERANCE_SECONDS: i64 = 300;
/// The headers of a Standard Webhooks delivery, forwarded as they came.
const DELIVERY_HEADERS: [&str; 4] = ["webhook-id", "webhook-timestamp", "webhook-signature", "content-type"];

#[derive(clap::Args)]
pub struct ListenArgs {
    /// The company's webhook secret (`whsec_…`), or its test secret (`whsec_test_…`) to receive
    /// test-mode events, as the portal's Diffusion tab shows them. Each verifies its mode's only.
    #[arg(long, env = "SCEAU_WEBHOOK_SECRET", hide_env_values = true)]
    secret: String,
    /// Port to listen on, on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 4242)]
    port: u16,
    /// Forward every verified delivery to this URL (your server under development).
    #[arg(long)]
    forward: Option<String>,
}

struct Listener {
    secret: String,
    forward: Option<String>,
    http: reqwest::Client,
}

pub async fn run(args: ListenArgs) -> ExitCode {
    let mode = match webhook_signature::parse(&args.secret) {
        Ok((mode, _)) => mode,
        Err(_) => {
            return output::fail(
                "--secret must be the company's webhook secret, `whsec_<base64>`, or its test secret, `whsec_test_<base64>`",
            )
        }
    };
    let socket = match tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], args.port))).await {
        Ok(socket) => socket,
        Err(e) => return output::fail(&format!("cannot listen on 127.0.0.1:{}: {e}", args.port)),
    };
    let address = match socket.local_addr() {
        Ok(address) => address,
        Err(e) => return output::fail(&format!("cannot read the listening address: {e}")),
    };
    // reqwest is built without a default crypto provider, for https forwarding.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // A forwarded delivery goes where it was told, not where a redirect would lead it.
    let http = match reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build() {
        Ok(http) => http,
        Err(e) => return output::fail(&format!("cannot make the forwarding client: {e}")),
    };
    let listener = Arc::new(Listener {
        secret: args.secret,
        forward: args.forward,
        http,
    });
    say(&format!("listening on http://{address}/ for {mode} webhooks (Ctrl-C to stop)"));
    let app = Router::new().fallback(receive).with_state(listener);
    let stopped = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match axum::serve(socket, app).with_graceful_shutdown(stopped).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::fail(&format!("the listener stopped: {e}")),
    }
}

/// One delivery: checked, printed, forwarded.
async fn receive(State(listener): State<Arc<Listener>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let (id, timestamp, signature) = (header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"));
    match check(&listener.secret, &id, &timestamp, &signature, &body) {
        Err(reason) => {
            say(&format!("✘ refused {}: {reason}", if id.is_empty() { "a request" } else { &id }));
            StatusCode::UNAUTHORIZED
        }
        Ok(()) => {
            say(&describe(&id, &body));
            if let Some(url) = &listener.forward {
                say(&forward(&listener.http, url, &headers, body).await);
            }
            StatusCode::NO_CONTENT
        }
    }
}

/// Why a delivery is not to be trusted, if it is not.
fn check(secret: &str, id: &str, timestamp: &str, signature: &str, body: &[u8]) -> Result<(), String> {
    if id.is_empty() || timestamp.is_empty() || signature.is_empty() {
        return Err("webhook-id, webhook-timestamp and webhook-signature are required".into());
    }
    let sent: i64 = timestamp
        .parse()
        .map_err(|_| "webhook-timestamp is not a number of seconds".to_owned())?;
    let skew = (chrono::Utc::now().timestamp() - sent).abs();
    if skew > TOLERANCE_SECONDS {
        return Err(format!("the timestamp is {skew} s away from now (at most {TOLERANCE_SECONDS})"));
    }
    match webhook_signature::verify(secret, id, sent, body, signature) {
        Ok(true) => Ok(()),
        Ok(false) => Err("the signature does not match this secret".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `✔ <event> <id>` and the body, indented.
fn describe(id: &str, body: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(event) => {
            let kind = event["event"].as_str().unwrap_or("(no event field)");
            let pretty = serde_json::to_string_pretty(&event).unwrap_or_default();
            format!("✔ {kind} {id}\n{pretty}")
        }
        Err(_) => format!("✔ {id}: a signed body that is not JSON ({} bytes)", body.len()),
    }
}

async fn forward(http: &reqwest::Client, url: &str, headers: &HeaderMap, body: Bytes) -> String {
    let mut request = http.post(url).body(body);
    for name in DELIVERY_HEADERS {
        if let Some(value) = headers.get(name).and_then(|v| v.to_str().ok()) {
            request = request.header(name, value);
        }
    }
    match request.send().await {
        Ok(response) => format!("→ forwarded to {url}: {}", response.status()),
        Err(e) => format!("→ could not forward to {url}: {e}"),
    }
}

/// One line (or block) on standard output, flushed at once: the listener's output is read live.
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deliveries_are_checked_as_a_receiver_must() {
        let secret = webhook_signature::generate_secret();
        let now = chrono::Utc::now().timestamp();
        let body = br#"{"event":"batch.completed"}"#;
        let signed = webhook_signature::sign(&secret, "msg_1", now, body).unwrap();
        assert_eq!(check(&secret, "msg_1", &now.to_string(), &signed, body), Ok(()));
        assert!(check(&secret, "msg_1", &now.to_string(), &signed, b"{}").is_err());
        let old = now - 600;
        let stale = webhook_signature::sign(&secret, "msg_1", old, body).unwrap();
        assert!(check(&secret, "msg_1", &old.to_string(), &stale, body)
            .unwrap_err()
            .contains("away from now"));
        assert!(check(&secret, "", &now.to_string(), &signed, body).is_err());
        assert!(check(&secret, "msg_1", "soon", &signed, body).is_err());
        assert!(describe("msg_1", body).starts_with("✔ batch.completed msg_1"));
    }

    #[test]
    fn a_test_secret_verifies_test_events_and_the_live_secret_refuses_them() {
        let live = webhook_signature::generate_secret_for(domain::vocabulary::Mode::Live);
        let test = webhook_signature::generate_secret_for(domain::vocabulary::Mode::Test);
        let now = chrono::Utc::now().timestamp();
        let body = br#"{"event":"verification.completed","livemode":false}"#;
        let signed = webhook_signature::sign(&test, "evt_1", now, body).unwrap();
        assert_eq!(check(&test, "evt_1", &now.to_string(), &signed, body), Ok(()));
        assert_eq!(
            check(&live, "evt_1", &now.to_string(), &signed, body),
            Err("the signature does not match this secret".into())
        );
    }
}
