//! Workflows (PORTAL.md page 6): the company's list with the create form, and a workflow's
//! settings tab (name and rules). Creating and editing go through `store::workflows`, the same
//! operation and rule check as `sceau admin workflow create`. The Diffusion tab is `diffusion`.

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::layout::{self, Notice};
use super::signed::Signed;
use super::workflow_form::{self, RulesInput};
use crate::i18n::labels;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use common::store::{audit, workflows, RepoError};
use domain::ids::WorkflowId;
use domain::model::WorkflowDetail;
use domain::team::{AuditAction, Permission};
use maud::{html, Markup};
use serde::Deserialize;

pub const SECTION: &str = "/portal/workflows";

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// The workflow named in the path, of the member's company; any other id is not found.
pub async fn load(state: &AppState, signed: &Signed, raw: &str) -> PortalResult<WorkflowDetail> {
    let id: WorkflowId = raw.parse().map_err(|_| PortalError::NotFound)?;
    let company = signed.company.id.clone();
    Ok(state.store.read(move |c| workflows::get(c, &company, &id)).await?)
}

/// The two tabs of a workflow, `current` marked.
pub fn tabs(signed: &Signed, wf: &WorkflowDetail, diffusion: bool) -> Markup {
    let t = signed.lang.portal();
    let base = format!("{SECTION}/{}", wf.workflow.id);
    html! {
        nav.tabs aria-label=(t.wf_tabs) {
            ul {
                li { a href=(base) data-testid="tab-settings" aria-current=[(!diffusion).then_some("page")] { (t.wf_tab_settings) } }
                li { a href=(format!("{base}/diffusion")) data-testid="tab-diffusion" aria-current=[diffusion.then_some("page")] { (t.wf_tab_diffusion) } }
            }
        }
    }
}

/// `GET /portal/workflows`.
pub async fn list(State(state): State<AppState>, signed: Signed, Query(q): Query<Flash>) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    let t = signed.lang.portal();
    let notice = (q.flash.as_deref() == Some("created")).then_some(Notice::Ok(t.wf_created));
    render_list(&state, &signed, &RulesInput::default(), notice, StatusCode::OK).await
}

async fn render_list(
    state: &AppState,
    signed: &Signed,
    input: &RulesInput,
    notice: Option<Notice<'_>>,
    status: StatusCode,
) -> PortalResult<Response> {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let company = signed.company.id.clone();
    // A company has a handful of workflows (configuration, not history): the whole list is one page.
    let all = state.store.read(move |c| workflows::list(c, &company)).await?;
    let body = html! {
        @if all.is_empty() {
            p { (t.wf_none) }
        } @else {
            table {
                thead { tr {
                    th scope="col" { (t.wf_name) }
                    th scope="col" { (t.wf_category) }
                    th scope="col" { (t.wf_rules) }
                    th scope="col" { (t.wf_webhook) }
                    th scope="col" { (t.wf_created_at) }
                } }
                tbody {
                    @for wf in &all {
                        tr data-testid="workflow-row" {
                            th scope="row" {
                                a href=(format!("{SECTION}/{}", wf.workflow.id)) { (wf.workflow.name) }
                                @if wf.default_batch { " " span.muted { "(" (t.wf_default_batch) ")" } }
                                br; code.muted { (wf.workflow.id) }
                            }
                            td { (labels::category(wf.workflow.document_category, lang)) }
                            td { (workflow_form::summary(&wf.rules, lang)) }
                            td { @match &wf.webhook_url { Some(url) => code { (url) }, None => span.muted { (t.wf_none_set) } } }
                            td { (labels::date(wf.workflow.created_at, lang)) }
                        }
                    }
                }
            }
        }
        h2 #new-workflow { (t.wf_new) }
        form method="post" action=(SECTION) data-testid="workflow-create" aria-labelledby="new-workflow" {
            input type="hidden" name="csrf" value=(signed.session.csrf_token);
            (workflow_form::fields(input, lang))
            button type="submit" { (t.wf_create) }
        }
    };
    Ok(layout::with_status(layout::page(signed, SECTION, t.wf_title, notice, body), status))
}

/// `POST /portal/workflows`.
pub async fn create(State(state): State<AppState>, signed: Signed, Form(pairs): Form<Vec<(String, String)>>) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    let input = RulesInput::from_pairs(pairs);
    signed.check_csrf(&input.csrf)?;
    let refused = match written_workflow(&state, &signed, &input).await? {
        None => return Ok(Redirect::to(&format!("{SECTION}?flash=created")).into_response()),
        Some(text) => text,
    };
    render_list(
        &state,
        &signed,
        &input,
        Some(Notice::Error(&refused)),
        StatusCode::UNPROCESSABLE_ENTITY,
    )
    .await
}

/// Creates the workflow with its audit row; `Some(why)` when the input is refused.
async fn written_workflow(state: &AppState, signed: &Signed, input: &RulesInput) -> PortalResult<Option<String>> {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let Some(category) = input.category() else {
        return Ok(Some(t.wf_err_category.to_owned()));
    };
    let rules = match input.rules(category, lang) {
        Ok(rules) => rules,
        Err(problem) => return Ok(Some(problem.text)),
    };
    let (company, acting, name, now) = (signed.company.id.clone(), signed.acting(), input.name.clone(), chrono::Utc::now());
    let written = state
        .store
        .write(move |tx| {
            let wf = workflows::create(tx, &company, &name, category, None, &rules, false, now)?;
            audit::record(
                tx,
                &company,
                &acting.entry(AuditAction::WorkflowCreated, wf.workflow.id.as_str(), now),
            )?;
            Ok::<_, RepoError>(wf)
        })
        .await;
    match written {
        Ok(_) => Ok(None),
        // The form checks what the store checks; should they ever differ, the store's word stands.
        Err(RepoError::Invalid { message, .. }) => Ok(Some(message)),
        Err(e) => Err(e.into()),
    }
}

/// `GET /portal/workflows/{id}`: the settings tab.
pub async fn settings(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Query(q): Query<Flash>,
) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    let wf = load(&state, &signed, &id).await?;
    let t = signed.lang.portal();
    let notice = (q.flash.as_deref() == Some("saved")).then_some(Notice::Ok(t.wf_saved));
    Ok(render_settings(&signed, &wf, &RulesInput::of(&wf), notice, StatusCode::OK))
}

fn render_settings(signed: &Signed, wf: &WorkflowDetail, input: &RulesInput, notice: Option<Notice<'_>>, status: StatusCode) -> Response {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let body = html! {
        (tabs(signed, wf, false))
        p {
            code { (wf.workflow.id) } " · " (labels::category(wf.workflow.document_category, lang))
            " · " (t.wf_created_at) " " (labels::date(wf.workflow.created_at, lang))
        }
        form method="post" action=(format!("{SECTION}/{}", wf.workflow.id)) data-testid="workflow-settings" {
            input type="hidden" name="csrf" value=(signed.session.csrf_token);
            (workflow_form::fields(input, lang))
            button type="submit" { (t.wf_save) }
        }
    };
    layout::with_status(layout::page(signed, SECTION, &wf.workflow.name, notice, body), status)
}

/// `POST /portal/workflows/{id}`: renames the workflow, sets its category and replaces its
/// rules. A form without a category keeps the workflow's.
pub async fn update(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    let input = RulesInput::from_pairs(pairs);
    signed.check_csrf(&input.csrf)?;
    let wf = load(&state, &signed, &id).await?;
    let lang = signed.lang;
    let refuse = |text: String| render_settings(&signed, &wf, &input, Some(Notice::Error(&text)), StatusCode::UNPROCESSABLE_ENTITY);
    let category = match input.category.as_str() {
        "" => wf.workflow.document_category,
        _ => match input.category() {
            Some(category) => category,
            None => return Ok(refuse(signed.lang.portal().wf_err_category.to_owned())),
        },
    };
    let rules = match input.rules(category, lang) {
        Ok(rules) => rules,
        Err(problem) => return Ok(refuse(problem.text)),
    };
    let (company, acting, name, now) = (signed.company.id.clone(), signed.acting(), input.name.clone(), chrono::Utc::now());
    let wf_id = wf.workflow.id.clone();
    let written = state
        .store
        .write(move |tx| {
            let wf = workflows::update(tx, &company, &wf_id, &name, category, &rules)?;
            audit::record(tx, &company, &acting.entry(AuditAction::WorkflowUpdated, wf_id.as_str(), now))?;
            Ok::<_, RepoError>(wf)
        })
        .await;
    match written {
        Ok(_) => Ok(Redirect::to(&format!("{SECTION}/{}?flash=saved", wf.workflow.id)).into_response()),
        Err(RepoError::Invalid { field: "category", .. }) => Ok(refuse(signed.lang.portal().wf_err_default_batch.to_owned())),
        Err(RepoError::Invalid { message, .. }) => Ok(refuse(message)),
        Err(e) => Err(e.into()),
    }
}
