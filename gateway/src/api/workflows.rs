//! `GET /api/v1/workflows`.

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use domain::model::Workflow;
use serde::Serialize;

/// The company's workflows.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowList {
    pub data: Vec<Workflow>,
}

crate::openapi::errors::errors!(ListErrors: Read);

/// List the company's workflows, most recent first.
#[utoipa::path(
    get,
    path = "/api/v1/workflows",
    operation_id = "listWorkflows",
    tag = "Workflows",
    security(("bearerAuth" = [])),
    responses((status = 200, description = "The workflows, most recent first.", body = WorkflowList), ListErrors),
)]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<WorkflowList>> {
    let company = caller.company_id;
    let details = state.store.read(move |c| common::store::workflows::list(c, &company)).await?;
    Ok(Json(WorkflowList {
        data: details.into_iter().map(|d| d.workflow).collect(),
    }))
}
