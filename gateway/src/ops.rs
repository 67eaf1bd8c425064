//! Operational endpoints: liveness, readiness, Prometheus metrics.

use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;

pub async fn healthz() -> &'static str {
    "ok"
}

pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let ping = state
        .store
        .read(|c| {
            c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))
                .map_err(common::store::StoreError::from)
        })
        .await;
    match ping {
        Ok(_) => (StatusCode::OK, "ready"),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "database unavailable"),
    }
}

pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let body = state.metrics.as_ref().map(|h| h.render()).unwrap_or_default();
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}
