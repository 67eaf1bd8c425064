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
use common::store::audit::AuditEntry;
use common::store::{batches, RepoError};
use common::telemetry::RequestId;
use domain::ids::{BatchId, CompanyId};
use domain::model::Batch;
use serde::{Deserialize, Serialize};

/// The body of `POST /api/v1/batches`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = CreateBatchRequest)]
pub struct CreateRequest {
    /// The client's reference, returned as given.
    #[schema(max_length = 255)]
    external_ref: Option<String>,
    /// Absolute `https` URL notified with `batch.completed` when the batch ends (`http` only for
    /// a host the operator allow-listed). Longer than 2,048 characters, or leading to a private,
    /// reserved or tunnelled address: `invalid_request`.
    #[schema(format = "uri", max_length = 2048, pattern = "^\\s*[Hh][Tt][Tt][Pp][Ss]://[^\\s/?#@]+")]
    webhook_url: Option<String>,
}

crate::openapi::errors::errors!(
    CreateErrors: Write + InvalidRequest + PayloadTooLarge + TooManyOpenBatches + ServiceUnavailable
);

/// Open a batch for 24 hours.
#[utoipa::path(
    post,
    path = "/api/v1/batches",
    operation_id = "createBatch",
    tag = "Batches",
    security(("bearerAuth" = [])),
    request_body = CreateRequest,
    responses((status = 201, description = "The batch, `open` for 24 hours.", body = Batch), CreateErrors),
)]
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

/// The page size of `GET /api/v1/batches`, read as text so a bad one names its parameter.
#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100, default = 20)]
    limit: Option<String>,
}

/// The company's batches.
#[derive(Serialize, utoipa::ToSchema)]
pub struct BatchList {
    pub data: Vec<Batch>,
}

crate::openapi::errors::errors!(ListErrors: Read + InvalidRequest);

/// List batches, most recent first.
#[utoipa::path(
    get,
    path = "/api/v1/batches",
    operation_id = "listBatches",
    tag = "Batches",
    security(("bearerAuth" = [])),
    params(ListQuery),
    responses((status = 200, description = "The batches, most recent first.", body = BatchList), ListErrors),
)]
pub async fn list(State(state): State<AppState>, caller: Caller, Query(q): Query<ListQuery>) -> ApiResult<axum::Json<BatchList>> {
    let limit = page_size(q.limit.as_deref())?;
    let company = caller.company_id;
    let data = state.store.read(move |c| batches::list(c, &company, None, limit)).await?;
    Ok(axum::Json(BatchList { data }))
}

crate::openapi::errors::errors!(GetErrors: Read + NotFound);

/// The detail read of a batch: a [`Batch`] whose `items` are always there.
pub struct WithItems;

impl utoipa::IntoResponses for WithItems {
    fn responses() -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder};
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let schema = AllOfBuilder::new()
            .item(Ref::from_schema_name("Batch"))
            .item(ObjectBuilder::new().required("items"));
        let response = ResponseBuilder::new()
            .description("The batch with its documents.")
            .content("application/json", ContentBuilder::new().schema(Some(schema)).build())
            .build();
        [("200".to_owned(), response.into())].into()
    }
}

/// Read a batch with its documents.
#[utoipa::path(
    get,
    path = "/api/v1/batches/{id}",
    operation_id = "getBatch",
    tag = "Batches",
    security(("bearerAuth" = [])),
    params(("id" = BatchId, Path, description = "Batch id.")),
    responses(WithItems, GetErrors),
)]
pub async fn get(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<Batch>> {
    let id: BatchId = path_id(&id)?;
    let company = caller.company_id;
    Ok(axum::Json(
        state.store.read(move |c| batches::get_with_items(c, &company, &id)).await?,
    ))
}

crate::openapi::errors::errors!(SubmitErrors: Write + NotFound + InvalidState + BatchEmpty + ServiceUnavailable);

/// Close a batch and start its processing.
///
/// Closes the batch to deposits; every result is returned before the new `expiresAt` (24 h).
#[utoipa::path(
    post,
    path = "/api/v1/batches/{id}/submit",
    operation_id = "submitBatch",
    tag = "Batches",
    security(("bearerAuth" = [])),
    params(("id" = BatchId, Path, description = "Batch id.")),
    responses((status = 200, description = "The batch, `in_progress`.", body = Batch), SubmitErrors),
)]
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

crate::openapi::errors::errors!(CancelErrors: Write + NotFound + InvalidState + ServiceUnavailable);

/// Cancel a batch.
///
/// Allowed from `open` and `in_progress`. Pending documents become `canceled`; a document already
/// being processed finishes and its result stays valid.
#[utoipa::path(
    post,
    path = "/api/v1/batches/{id}/cancel",
    operation_id = "cancelBatch",
    tag = "Batches",
    security(("bearerAuth" = [])),
    params(("id" = BatchId, Path, description = "Batch id.")),
    responses((status = 200, description = "The batch, `canceled`.", body = Batch), CancelErrors),
)]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    CurrentRequest(request_id): CurrentRequest,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Batch>> {
    let id: BatchId = path_id(&id)?;
    Ok(axum::Json(cancel_batch(&state, caller.company_id, id, request_id, None).await?))
}

/// Cancels a batch of `company` (the state machine of `batches::cancel`) and wakes the outbox
/// for the `batch.completed` it may emit: the one operation of the API and the portal, which
/// passes its audit row to be written in the same transaction.
pub async fn cancel_batch(
    state: &AppState,
    company: CompanyId,
    id: BatchId,
    request_id: Option<RequestId>,
    audit: Option<AuditEntry>,
) -> Result<Batch, RepoError> {
    let batch = state
        .store
        .write(move |tx| {
            let now = chrono::Utc::now();
            let batch = batches::cancel(tx, &company, &id, request_id.as_ref(), now)?;
            if let Some(entry) = &audit {
                common::store::audit::record(tx, &company, entry)?;
            }
            Ok::<_, RepoError>(batch)
        })
        .await?;
    state.outbox_wake.notify_one();
    Ok(batch)
}
