//! `/metrics` on a listener of its own (`SCEAU_METRICS_LISTEN`, loopback by default): the figures
//! are for the operator's scraper, never for whoever reaches the public listener. Its labels are
//! bounded so no client can grow the series without end: a method outside HTTP's own is `other`,
//! a path is its route template (`unmatched` when none).

use axum::extract::State;
use axum::http::{header, Method};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The `method` label of a request: the standard methods by name, anything else `other`.
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// The metrics listener's application: `GET /metrics`, nothing else.
pub fn app(handle: PrometheusHandle) -> Router {
    Router::new().route("/metrics", get(render)).with_state(handle)
}

async fn render(State(handle): State<PrometheusHandle>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render())
}

/// Serves `/metrics` on `listener` until `shutdown`.
pub async fn serve(listener: TcpListener, handle: PrometheusHandle, shutdown: CancellationToken) -> std::io::Result<()> {
    axum::serve(listener, app(handle))
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_methods_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::DELETE), "DELETE");
        for odd in ["FOOBAR", "PROPFIND", "get"] {
            assert_eq!(method_label(&Method::from_bytes(odd.as_bytes()).unwrap()), "other", "{odd}");
        }
    }
}
