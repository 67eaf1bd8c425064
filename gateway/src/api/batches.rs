//! Batches: create, list, detail with items, submit, cancel.

use super::consultations::page_size;
use super::path_id;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::input::{external_ref, Json, Query};
use crate::request_id::CurrentRequest;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use common::ids::BatchId;
use common::model::Batch;
use common::store::batches;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateRequest {
    external_ref: Option<String>,
    webhook_url: Option<String>,
}

pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(req): Json<CreateRequest>,
) -> ApiResult<(StatusCode, axum::Json<Batch>)> {
    let external_ref = external_ref("externalRef", req.external_ref)?;
    let webhook_url = req
        .webhook_url
        .map(|u| {
            notifier::destination::validate_url(&u, &state.webhook_allow_hosts)
                .map(|_| u)
                .map_err(|e| ApiError::invalid_request("webhookUrl", e.to_string()))
        })
        .transpose()?;
    let (company, window) = (caller.company_id, state.batch_window);
    let batch = state
        .store
        .write(move |tx| {
            batches::create(
                tx,
                &company,
                external_ref.as_deref(),
                webhook_url.as_deref(),
                window,
                chrono::Utc::now(),
            )
        })
        .await?;
    Ok((StatusCode::CREATED, axum::Json(batch)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    limit: Option<String>,
}

#[derive(Serialize)]
pub struct BatchList {
    pub data: Vec<Batch>,
}

pub async fn list(State(state): State<AppState>, caller: Caller, Query(q): Query<ListQuery>) -> ApiResult<axum::Json<BatchList>> {
    let limit = page_size(q.limit.as_deref())?;
    let company = caller.company_id;
    let data = state.store.read(move |c| batches::list(c, &company, limit)).await?;
    Ok(axum::Json(BatchList { data }))
}

pub async fn get(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Batch>> {
    let id: BatchId = path_id(&id)?;
    let company = caller.company_id;
    Ok(axum::Json(
        state.store.read(move |c| batches::get_with_items(c, &company, &id)).await?,
    ))
}

pub async fn submit(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Batch>> {
    let id: BatchId = path_id(&id)?;
    let (company, window) = (caller.company_id, state.batch_window);
    let batch = state
        .store
        .write(move |tx| batches::submit(tx, &company, &id, window, chrono::Utc::now()))
        .await?;
    state.outbox_wake.notify_one();
    Ok(axum::Json(batch))
}

pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    CurrentRequest(request_id): CurrentRequest,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Batch>> {
    let id: BatchId = path_id(&id)?;
    let company = caller.company_id;
    let batch = state
        .store
        .write(move |tx| batches::cancel(tx, &company, &id, request_id.as_ref(), chrono::Utc::now()))
        .await?;
    state.outbox_wake.notify_one();
    Ok(axum::Json(batch))
}
