//! `GET /api/v1/consultations` (filters, keyset cursor) and `GET /api/v1/consultations/{id}`.

use super::path_id;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::input::Query;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use common::store::consultations::{self, Cursor, Filter};
use domain::ids::{ConsultationId, WorkflowId};
use domain::model::Consultation;
use domain::vocabulary::{Decision, Verdict};
use serde::{Deserialize, Serialize};

/// The filters and page of `GET /api/v1/consultations`, read as text and checked one by one, so
/// each refusal names its parameter.
#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100, default = 20)]
    limit: Option<String>,
    /// The `nextCursor` of the previous page (opaque); empty is the first page.
    #[param(pattern = "^[A-Za-z0-9_-]*$", max_length = 128)]
    cursor: Option<String>,
    /// Only results of this workflow.
    #[param(value_type = Option<WorkflowId>)]
    workflow_id: Option<String>,
    /// Only results with this verdict.
    #[param(value_type = Option<Verdict>)]
    verdict: Option<String>,
    /// Only results with this decision (journey verifications).
    #[param(value_type = Option<Decision>)]
    decision: Option<String>,
    /// Only results with exactly this client reference.
    #[param(max_length = 255)]
    external_ref: Option<String>,
    /// Only results recorded after this instant (RFC 3339).
    #[param(value_type = Option<chrono::DateTime<chrono::Utc>>)]
    created_after: Option<String>,
}

/// One page of results.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ConsultationPage)]
pub struct Page {
    pub data: Vec<Consultation>,
    /// Pass as `cursor` for the next page; null on the last page.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

/// `limit`: 1 to 100, default 20.
pub fn page_size(raw: Option<&str>) -> Result<u32, ApiError> {
    match raw {
        None => Ok(20),
        Some(s) => s
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=100).contains(n))
            .ok_or_else(|| ApiError::invalid_request("limit", "limit must be an integer from 1 to 100.")),
    }
}

fn parse_enum<T: std::str::FromStr>(field: &'static str, raw: Option<String>, allowed: &str) -> Result<Option<T>, ApiError> {
    raw.map(|s| {
        s.parse()
            .map_err(|_| ApiError::invalid_request(field, format!("{field} must be one of {allowed}.")))
    })
    .transpose()
}

fn filter(q: ListQuery) -> Result<(Filter, Option<Cursor>, u32), ApiError> {
    let limit = page_size(q.limit.as_deref())?;
    // `cursor=` is the first page, as no cursor: clients that always send the parameter work.
    let cursor = q
        .cursor
        .filter(|c| !c.is_empty())
        .map(|c| Cursor::decode(&c).ok_or_else(|| ApiError::invalid_request("cursor", "cursor is not a value returned as nextCursor.")))
        .transpose()?;
    let workflow_id = q
        .workflow_id
        .map(|w| {
            w.parse::<WorkflowId>()
                .map_err(|_| ApiError::invalid_request("workflowId", "workflowId is not a workflow id."))
        })
        .transpose()?;
    let created_after = q
        .created_after
        .map(|t| {
            domain::time::parse(&t).ok_or_else(|| ApiError::invalid_request("createdAfter", "createdAfter must be an RFC 3339 date-time."))
        })
        .transpose()?;
    let external_ref = crate::input::external_ref("externalRef", q.external_ref)?;
    let filter = Filter {
        workflow_id,
        verdict: parse_enum(
            "verdict",
            q.verdict,
            "conforme, sans_anomalie, non_conforme, suspect, analyse_impossible",
        )?,
        decision: parse_enum("decision", q.decision, "conforme, a_verifier, refuse")?,
        external_ref,
        created_after,
    };
    Ok((filter, cursor, limit))
}

crate::openapi::errors::errors!(ListErrors: Read + InvalidRequest);

/// List results, most recent first, with filters and a cursor.
///
/// Keyset pagination, stable under inserts. Images and data extracted from documents are never
/// exposed.
#[utoipa::path(
    get,
    path = "/api/v1/consultations",
    operation_id = "listConsultations",
    tag = "Consultations",
    security(("bearerAuth" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "One page of results; `nextCursor` is null on the last page.", body = Page),
        ListErrors,
    ),
)]
pub async fn list(State(state): State<AppState>, caller: Caller, Query(q): Query<ListQuery>) -> ApiResult<Json<Page>> {
    let (filter, cursor, limit) = filter(q)?;
    let company = caller.company_id;
    let (data, next) = state
        .store
        .read(move |c| consultations::list(c, &company, &filter, cursor, limit))
        .await?;
    Ok(Json(Page {
        data,
        next_cursor: next.map(Cursor::encode),
    }))
}

crate::openapi::errors::errors!(GetErrors: Read + NotFound);

/// Read one result.
#[utoipa::path(
    get,
    path = "/api/v1/consultations/{id}",
    operation_id = "getConsultation",
    tag = "Consultations",
    security(("bearerAuth" = [])),
    params(("id" = ConsultationId, Path, description = "Consultation id (`consultationId` of a webhook or a list).")),
    responses((status = 200, description = "The result.", body = Consultation), GetErrors),
)]
pub async fn get(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Json<Consultation>> {
    let id: ConsultationId = path_id(&id)?;
    let company = caller.company_id;
    Ok(Json(state.store.read(move |c| consultations::get(c, &company, &id)).await?))
}
