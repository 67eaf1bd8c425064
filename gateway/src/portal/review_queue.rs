//! The review queue (PORTAL.md, Review queue): the company's results waiting for a human
//! review, oldest first, in keyset pages over the partial index of pending reviews; each row
//! leads to the result, where the images sit beside the findings and the decision is taken.

use super::error::PortalResult;
use super::layout;
use super::results::{decision_cell, workflow_name};
use super::signed::Signed;
use crate::i18n::labels;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::Response;
use common::store::consultations::{self, Cursor};
use common::store::{workflows, RepoError};
use common::team::Permission;
use maud::html;
use serde::Deserialize;

const PAGE: u32 = 25;

#[derive(Deserialize)]
pub struct QueueQuery {
    cursor: Option<String>,
}

/// `GET /portal/reviews`.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(q): Query<QueueQuery>) -> PortalResult<Response> {
    signed.require(Permission::Review)?;
    let (lang, t) = (signed.lang, signed.lang.portal());
    // A cursor that does not read is the first page: the queue has no other filter to keep.
    let cursor = q.cursor.as_deref().and_then(Cursor::decode);
    let company = signed.company.id.clone();
    let (workflows, (rows, next)) = state
        .store
        .read(move |c| {
            let workflows = workflows::list(c, &company)?;
            let page = consultations::pending_page(c, &company, cursor, PAGE)?;
            Ok::<_, RepoError>((workflows, page))
        })
        .await?;
    let body = html! {
        p.muted { (t.reviews_intro) }
        @if rows.is_empty() {
            p data-testid="no-reviews" { (t.no_reviews) }
        } @else {
            table {
                thead {
                    tr {
                        th scope="col" { (t.date) }
                        th scope="col" { (t.result_id) }
                        th scope="col" { (t.workflow) }
                        th scope="col" { (t.external_ref) }
                        th scope="col" { (t.document_type) }
                        th scope="col" { (t.verdict) }
                        th scope="col" { (t.decision) }
                    }
                }
                tbody {
                    @for c in &rows {
                        tr data-testid="review-row" {
                            td { (labels::date(c.created_at, lang)) }
                            td { a href=(format!("/portal/consultations/{}", c.id)) { code { (c.id) } } }
                            td { (workflow_name(&workflows, &c.workflow_id)) }
                            td { (c.external_ref.as_deref().unwrap_or("—")) }
                            td { (labels::document_type(c.document_type, lang)) }
                            td { (labels::verdict(c.verdict, lang)) }
                            td { (decision_cell(c.decision, lang)) }
                        }
                    }
                }
            }
        }
        nav.pages aria-label=(t.next_page) {
            @if cursor.is_some() {
                a href="/portal/reviews" data-testid="first-page" { (t.first_page) }
                " "
            }
            @if let Some(next) = next {
                a href=(format!("/portal/reviews?cursor={}", next.encode())) rel="next" data-testid="next-page" { (t.next_page) }
            }
        }
    };
    Ok(layout::page(&signed, "/portal/reviews", t.reviews_title, None, body))
}
