//! The review queue (PORTAL.md, Review queue): the company's results waiting for a human
//! review, oldest first, in keyset pages over the partial index of pending reviews; each row
//! leads to the result, where the images sit beside the findings and the decision is taken.

use super::error::PortalResult;
use super::layout;
use super::results::{consultation_table, Rows};
use super::signed::Signed;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::Response;
use common::store::consultations::{self, Cursor};
use common::store::{workflows, RepoError};
use domain::team::Permission;
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
            (consultation_table(&rows, &workflows, lang, Rows::ReviewQueue))
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
