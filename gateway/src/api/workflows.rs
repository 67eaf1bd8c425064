//! `GET /api/v1/workflows`.

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use common::model::Workflow;
use serde::Serialize;

#[derive(Serialize)]
pub struct WorkflowList {
    pub data: Vec<Workflow>,
}

pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<WorkflowList>> {
    let company = caller.company_id;
    let details = state.store.read(move |c| common::store::workflows::list(c, &company)).await?;
    Ok(Json(WorkflowList {
        data: details.into_iter().map(|d| d.workflow).collect(),
    }))
}
