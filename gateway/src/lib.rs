//! The gateway: the HTTP API and journey pages, the recorder (the one writer of results), the
//! outbox relay and the housekeeping sweeper.
pub mod api;
pub mod auth;
pub mod authenticity;
pub mod certificate;
pub mod error;
pub mod html;
pub mod input;
pub mod journey;
pub mod middleware;
pub mod openapi;
pub mod ops;
pub mod rate_limit;
pub mod recorder;
pub mod relay;
pub mod routes;
pub mod state;
pub mod sweeper;

use state::AppState;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The hard cap on request bodies (`payload_too_large` beyond).
pub const BODY_LIMIT: usize = 30_000_000;

/// The full HTTP application.
pub fn app(state: AppState) -> axum::Router {
    middleware::wrap(routes::router().with_state(state))
}

/// Serves HTTP on `listener` until `shutdown`, then lets in-flight requests finish.
pub async fn serve_http(listener: TcpListener, state: AppState, shutdown: CancellationToken) -> std::io::Result<()> {
    let service = app(state).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, service)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
