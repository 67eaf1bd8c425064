//! Batches (PORTAL.md page 5): the company's batches newest first in keyset pages, a batch with
//! every document's state, and cancelling where the API allows it — through the API's own
//! operation (`api::batches::cancel_batch`), audited.

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::layout::{self, Notice};
use super::signed::Signed;
use crate::api::batches::cancel_batch;
use crate::i18n::portal::Words;
use crate::i18n::{labels, Lang};
use crate::request_id::CurrentRequest;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use common::store::{batches, RepoError};
use domain::batch::can_cancel;
use domain::ids::BatchId;
use domain::model::Counts;
use domain::team::{AuditAction, Permission};
use domain::vocabulary::{BatchStatus, ItemError, ItemStatus};
use maud::{html, Markup};
use serde::Deserialize;

const PATH: &str = "/portal/batches";
/// Batches per page: each costs one count of its documents, on their batch's index.
const PAGE: u32 = 25;

fn batch_status(s: BatchStatus, t: &Words) -> &'static str {
    match s {
        BatchStatus::Open => t.batch_state_open,
        BatchStatus::InProgress => t.batch_state_in_progress,
        BatchStatus::Ended => t.batch_state_ended,
        BatchStatus::Canceled => t.batch_state_canceled,
        BatchStatus::Expired => t.batch_state_expired,
    }
}

fn item_status(s: ItemStatus, t: &Words) -> &'static str {
    match s {
        ItemStatus::Uploading => t.item_state_uploading,
        ItemStatus::Pending => t.item_state_pending,
        ItemStatus::Processing => t.item_state_processing,
        ItemStatus::Succeeded => t.item_state_succeeded,
        ItemStatus::Errored => t.item_state_errored,
        ItemStatus::Canceled => t.item_state_canceled,
        ItemStatus::Expired => t.item_state_expired,
    }
}

fn item_error(e: ItemError, t: &Words) -> &'static str {
    match e {
        ItemError::IaDesactivee => t.item_error_ia,
        ItemError::UnreadableDocument => t.item_error_unreadable,
        ItemError::UnsupportedDocument => t.item_error_unsupported,
        ItemError::EngineFailure => t.item_error_engine,
    }
}

/// The documents per state, the empty states left out: "12 total · 8 analysés · 4 en attente".
fn counts(c: &Counts, t: &Words) -> Markup {
    let states = [
        (c.pending, t.batch_pending),
        (c.succeeded, t.batch_succeeded),
        (c.errored, t.batch_errored),
        (c.canceled, t.batch_canceled),
        (c.expired, t.batch_expired),
    ];
    html! {
        (c.total) " " (t.batch_total)
        @for (n, label) in states.iter().filter(|(n, _)| *n > 0) {
            " · " (n) " " (label)
        }
    }
}

fn date(t: Option<chrono::DateTime<chrono::Utc>>, lang: Lang) -> String {
    t.map_or_else(|| "—".to_owned(), |t| labels::date(t, lang))
}

#[derive(Deserialize)]
pub struct ListQuery {
    /// Keyset: the last batch of the previous page.
    before: Option<String>,
}

/// `GET /portal/batches`.
pub async fn list(State(state): State<AppState>, signed: Signed, Query(q): Query<ListQuery>) -> PortalResult<Response> {
    signed.require(Permission::ViewBatches)?;
    let (lang, t) = (signed.lang, signed.lang.portal());
    let before: Option<BatchId> = match q.before.as_deref() {
        Some(s) => Some(s.parse().map_err(|_| PortalError::NotFound)?),
        None => None,
    };
    let company = signed.company.id.clone();
    let paging = before.is_some();
    let mut rows = state
        .store
        .read(move |c| batches::list(c, &company, before.as_ref(), PAGE + 1))
        .await?;
    let next = (rows.len() > PAGE as usize).then(|| {
        rows.truncate(PAGE as usize);
        rows.last().map(|b| b.id.clone())
    });
    let body = html! {
        @if rows.is_empty() {
            p.muted { (t.batch_none) }
        } @else {
            table {
                thead {
                    tr {
                        th scope="col" { (t.batch_id) }
                        th scope="col" { (t.batch_ref) }
                        th scope="col" { (t.batch_status) }
                        th scope="col" { (t.batch_documents) }
                        th scope="col" { (t.batch_created) }
                        th scope="col" { (t.batch_submitted) }
                        th scope="col" { (t.batch_ended) }
                    }
                }
                tbody {
                    @for b in &rows {
                        tr data-testid="batch-row" {
                            td { a href=(format!("{PATH}/{}", b.id)) { code { (b.id) } } }
                            td { (b.external_ref.as_deref().unwrap_or("—")) }
                            td data-testid="batch-status" { (batch_status(b.status, t)) }
                            td { (counts(&b.counts, t)) }
                            td { (labels::date(b.created_at, lang)) }
                            td { (date(b.submitted_at, lang)) }
                            td { (date(b.ended_at, lang)) }
                        }
                    }
                }
            }
        }
        p {
            @if paging { a href=(PATH) { (t.batch_first) } " " }
            @if let Some(Some(last)) = &next { a href=(format!("{PATH}?before={last}")) rel="next" data-testid="batch-next" { (t.batch_next) } }
        }
    };
    Ok(layout::page(&signed, PATH, t.batch_title, None, body))
}

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// `GET /portal/batches/{id}`: the batch and each of its documents.
pub async fn detail(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Query(q): Query<Flash>,
) -> PortalResult<Response> {
    signed.require(Permission::ViewBatches)?;
    let (lang, t) = (signed.lang, signed.lang.portal());
    let id: BatchId = id.parse().map_err(|_| PortalError::NotFound)?;
    let company = signed.company.id.clone();
    let batch = state.store.read(move |c| batches::get_with_items(c, &company, &id)).await?;
    let notice = match q.flash.as_deref() {
        Some("canceled") => Some(Notice::Ok(t.batch_was_canceled)),
        Some("not_cancelable") => Some(Notice::Error(t.batch_not_cancelable)),
        _ => None,
    };
    let cancelable = can_cancel(batch.status) && signed.member().role.may(Permission::CancelBatches);
    let items = batch.items.as_deref().unwrap_or_default();
    let body = html! {
        p { a href=(PATH) { (t.batch_back) } }
        table {
            tbody {
                tr { th scope="row" { (t.batch_status) } td data-testid="batch-status" { (batch_status(batch.status, t)) } }
                tr { th scope="row" { (t.batch_ref) } td { (batch.external_ref.as_deref().unwrap_or("—")) } }
                tr { th scope="row" { (t.batch_documents) } td { (counts(&batch.counts, t)) } }
                tr { th scope="row" { (t.batch_created) } td { (labels::date(batch.created_at, lang)) } }
                tr { th scope="row" { (t.batch_submitted) } td { (date(batch.submitted_at, lang)) } }
                @if can_cancel(batch.status) {
                    tr { th scope="row" { (t.batch_expires) } td { (labels::date(batch.expires_at, lang)) } }
                }
                tr { th scope="row" { (t.batch_ended) } td { (date(batch.ended_at, lang)) } }
            }
        }
        @if cancelable {
            form method="post" action=(format!("{PATH}/{}/cancel", batch.id)) {
                input type="hidden" name="csrf" value=(signed.session.csrf_token);
                p.hint #cancel-hint { (t.batch_cancel_hint) }
                button.danger type="submit" data-testid="batch-cancel" aria-describedby="cancel-hint" { (t.batch_cancel) }
            }
        }
        h2 { (t.batch_documents) }
        @if items.is_empty() {
            p.muted { (t.batch_no_documents) }
        } @else {
            table {
                thead {
                    tr {
                        th scope="col" { (t.batch_position) }
                        th scope="col" { (t.batch_category) }
                        th scope="col" { (t.batch_ref) }
                        th scope="col" { (t.batch_item_status) }
                        th scope="col" { (t.batch_error) }
                        th scope="col" { (t.batch_result) }
                    }
                }
                tbody {
                    @for item in items {
                        tr data-testid="batch-item-row" {
                            td { (item.position) }
                            td { (labels::category(item.document_category, lang)) }
                            td { (item.external_ref.as_deref().unwrap_or("—")) }
                            td { (item_status(item.status, t)) }
                            td { (item.error.map_or("—", |e| item_error(e, t))) }
                            td {
                                @match &item.consultation_id {
                                    Some(c) => a href=(format!("/portal/consultations/{c}")) { (t.batch_see_result) },
                                    None => "—",
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let title = format!("{} {}", t.batch_id, batch.id);
    Ok(layout::page(&signed, PATH, &title, notice, body))
}

#[derive(Deserialize)]
pub struct Csrf {
    csrf: String,
}

/// `POST /portal/batches/{id}/cancel`: the API's cancel, with the audit row in its transaction.
pub async fn cancel(
    State(state): State<AppState>,
    signed: Signed,
    CurrentRequest(request_id): CurrentRequest,
    Path(id): Path<String>,
    Form(form): Form<Csrf>,
) -> PortalResult<Response> {
    signed.require(Permission::CancelBatches)?;
    signed.check_csrf(&form.csrf)?;
    let id: BatchId = id.parse().map_err(|_| PortalError::NotFound)?;
    let entry = signed.acting().entry(AuditAction::BatchCanceled, id.as_str(), chrono::Utc::now());
    let flash = match cancel_batch(&state, signed.company.id.clone(), id.clone(), request_id, Some(entry)).await {
        Ok(_) => "canceled",
        Err(RepoError::InvalidState(_)) => "not_cancelable",
        Err(e) => return Err(e.into()),
    };
    Ok(Redirect::to(&format!("{PATH}/{id}?flash={flash}")).into_response())
}
