//! Operational endpoints: liveness and readiness (metrics have their own listener, see
//! [`crate::metrics_listener`]).

use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;

crate::openapi::errors::errors!(ProbeErrors: Public);

/// Liveness.
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "Operations",
    responses(
        (status = 200, description = "The process is alive (`ok`).", body = String, content_type = "text/plain"),
        ProbeErrors,
    ),
)]
pub async fn healthz() -> &'static str {
    "ok"
}

/// Readiness (database reachable).
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "Operations",
    responses(
        (status = 200, description = "Ready (`ready`).", body = String, content_type = "text/plain"),
        (status = 503, description = "The database is unreachable.", body = String, content_type = "text/plain"),
        ProbeErrors,
    ),
)]
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match state.store.ping().await {
        Ok(_) => (StatusCode::OK, "ready"),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "database unavailable"),
    }
}
