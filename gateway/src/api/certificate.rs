//! `GET /api/v1/consultations/{id}/certificate`: the PDF, regenerated on each call.

use super::path_id;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use common::ids::ConsultationId;

pub async fn download(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    let id: ConsultationId = path_id(&id)?;
    let company = caller.company_id;
    let consultation = state
        .store
        .read(move |c| common::store::consultations::get(c, &company, &id))
        .await?;
    let pdf = tokio::task::spawn_blocking(move || crate::certificate::render(&consultation))
        .await
        .map_err(|e| ApiError::internal("certificate task", e))?
        .map_err(|e| ApiError::internal("certificate", e))?;
    Ok((
        [(header::CONTENT_TYPE, "application/pdf"), (header::CACHE_CONTROL, "no-store")],
        pdf,
    )
        .into_response())
}
