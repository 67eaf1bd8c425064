//! The gateway: the HTTP API, the journey and authenticity pages, the certificate. What writes
//! results (recorder, relay, sweeper) lives in the `recorder` crate.
pub mod api;
pub mod auth;
pub mod authenticity;
pub mod body_deadline;
pub mod certificate;
pub mod client_addr;
pub mod edge_turns;
pub mod error;
pub mod html;
pub mod i18n;
pub mod idempotency;
pub mod input;
pub mod inspect;
pub mod journey;
pub mod metrics_listener;
pub mod middleware;
pub mod openapi;
pub mod ops;
pub mod password_pool;
pub mod portal;
pub mod rate_limit;
pub mod request_id;
pub mod routes;
pub mod server;
pub mod state;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod test_support;

use state::AppState;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The full HTTP application.
pub fn app(state: AppState) -> axum::Router {
    use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutLayer};
    // Inside the common layers, so a timed-out request still carries its request id.
    let (routes, _) = routes::router().split_for_parts();
    let request_timeout = state.request_timeout;
    let https = state.public_base.starts_with("https://");
    let routes = routes
        .layer(axum::middleware::from_fn_with_state(state.clone(), idempotency::guard))
        .merge(portal::router(state.clone()))
        .with_state(state)
        .layer(RequestBodyTimeoutLayer::new(server::BODY_IDLE_TIMEOUT))
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ));
    let app = middleware::wrap(routes);
    if https {
        app.layer(axum::middleware::map_response(middleware::strict_transport))
    } else {
        app
    }
}

/// Serves HTTP on `listener` until `shutdown`, then lets in-flight requests finish; the
/// connection limits are [`server`]'s.
pub async fn serve_http(listener: TcpListener, state: AppState, shutdown: CancellationToken) -> std::io::Result<()> {
    let trusted_proxies = state.trusted_proxies.clone();
    server::serve(listener, app(state), trusted_proxies, shutdown).await
}
