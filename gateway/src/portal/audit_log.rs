//! The audit log page (PORTAL.md page 10): who did what, on which object, from where and when,
//! filtered by action and actor, newest first in keyset pages, and exported as CSV.

use super::error::PortalResult;
use super::layout;
use super::signed::Signed;
use crate::i18n::labels;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::Response;
use common::store::audit::{self, AuditEntry, Filter};
use domain::team::{AuditAction, Permission};
use maud::html;
use serde::Deserialize;

const PAGE: u32 = 50;
/// The most rows one export holds.
const EXPORT: u32 = 50_000;

#[derive(Deserialize, Default)]
pub struct Params {
    action: Option<String>,
    actor: Option<String>,
    before: Option<i64>,
}

impl Params {
    /// The filter these parameters ask for; unknown actions and empty fields are ignored.
    fn filter(&self) -> Filter {
        Filter {
            action: self.action.as_deref().and_then(|a| a.parse::<AuditAction>().ok()),
            actor: self
                .actor
                .as_deref()
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(|a| a.to_lowercase()),
            before: self.before,
        }
    }

    /// The query string of these filters (not the page position).
    fn query(&self, filter: &Filter) -> String {
        let mut parts = Vec::new();
        if let Some(a) = filter.action {
            parts.push(format!("action={}", a.as_str()));
        }
        if let Some(actor) = &filter.actor {
            parts.push(format!("actor={}", url_escape(actor)));
        }
        parts.join("&")
    }
}

fn url_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn rows(state: &AppState, signed: &Signed, filter: Filter, limit: u32) -> PortalResult<Vec<(i64, AuditEntry)>> {
    let company = signed.company.id.clone();
    Ok(state.store.read(move |c| audit::list(c, &company, &filter, limit)).await?)
}

/// `GET /portal/audit`.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(params): Query<Params>) -> PortalResult<Response> {
    signed.require(Permission::ViewAudit)?;
    let (lang, t) = (signed.lang, signed.lang.portal());
    let filter = params.filter();
    let query = params.query(&filter);
    let list = rows(&state, &signed, filter.clone(), PAGE + 1).await?;
    let more = list.len() > PAGE as usize;
    let shown = &list[..list.len().min(PAGE as usize)];
    let body = html! {
        form.filters method="get" action="/portal/audit" {
            div {
                label for="action" { (t.action) }
                select #action name="action" {
                    option value="" { (t.all) }
                    @for a in AuditAction::ALL {
                        option value=(a.as_str()) selected[filter.action == Some(*a)] { (a.as_str()) }
                    }
                }
            }
            div {
                label for="actor" { (t.actor) }
                input #actor type="text" name="actor" value=(filter.actor.as_deref().unwrap_or(""));
            }
            button type="submit" { (t.filter) }
        }
        p { a href=(format!("/portal/audit.csv?{query}")) data-testid="audit-export" { (t.export_csv) } }
        table {
            thead { tr { th scope="col" { (t.when) } th scope="col" { (t.actor) } th scope="col" { (t.action) } th scope="col" { (t.object) } th scope="col" { (t.address) } } }
            tbody {
                @for (_, e) in shown {
                    tr data-testid="audit-row" {
                        td { (labels::date(e.at, lang)) }
                        td { @if e.actor == "operator" { (t.operator) } @else { (e.actor) } }
                        td { code { (e.action.as_str()) } }
                        td { (e.target) }
                        td { (e.ip.as_deref().unwrap_or("—")) }
                    }
                }
            }
        }
        @if more {
            @if let Some((id, _)) = shown.last() {
                p { a href=(format!("/portal/audit?{query}&before={id}")) rel="next" { (t.next_page) } }
            }
        }
    };
    Ok(layout::page(&signed, "/portal/audit", t.audit_title, None, body))
}

/// `GET /portal/audit.csv`: the filtered log, newest first.
pub async fn export(State(state): State<AppState>, signed: Signed, Query(params): Query<Params>) -> PortalResult<Response> {
    signed.require(Permission::ViewAudit)?;
    let list = rows(
        &state,
        &signed,
        Filter {
            before: None,
            ..params.filter()
        },
        EXPORT,
    )
    .await?;
    let mut csv = super::csv::Writer::new(&["at", "actor", "action", "target", "ip"]);
    for (_, e) in &list {
        csv.row(&[
            &domain::time::format(e.at),
            &e.actor,
            e.action.as_str(),
            &e.target,
            e.ip.as_deref().unwrap_or(""),
        ]);
    }
    Ok(super::csv::download(csv, "audit.csv"))
}
