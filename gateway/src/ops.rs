//! Operational endpoints: liveness and readiness (metrics have their own listener, see
//! [`crate::metrics_listener`]).

use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use common::capabilities::Capabilities;
use serde::Serialize;

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

/// Readiness, with what the analysis engine can do on this machine.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Readiness {
    /// `ready`, or `database unavailable`.
    #[schema(example = "ready")]
    status: &'static str,
    /// The engine's capabilities on the machine serving this request: each optional
    /// program (`tesseract` with its languages, `pdftoppm`, `xmlsec1`) as probed at start, with
    /// `available` and a `detail`, and the ANTS trust list in use now (`origin` shipped or imported,
    /// `sequence`, `issued`, `nextUpdate`), with `trustListExpired`.
    #[schema(value_type = Object)]
    engine: Capabilities,
}

/// Readiness (database reachable) and the engine's capabilities.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "Operations",
    responses(
        (status = 200, description = "Ready (`status` is `ready`).", body = Readiness),
        (status = 503, description = "The database is unreachable.", body = Readiness),
        ProbeErrors,
    ),
)]
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let (code, status) = match state.store.ping().await {
        Ok(_) => (StatusCode::OK, "ready"),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "database unavailable"),
    };
    let engine = state.capabilities.now();
    (code, Json(Readiness { status, engine }))
}
