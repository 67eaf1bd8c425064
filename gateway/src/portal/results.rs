//! Results (PORTAL.md, Results): the filters of `GET /api/v1/consultations` as a GET form over
//! the same store function and its keyset cursor, so the portal and the API list alike and each
//! page costs the same however long the company's history is.

use super::error::PortalResult;
use super::layout::{self, Notice};
use super::signed::Signed;
use crate::i18n::{labels, Lang};
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::Response;
use chrono::{DateTime, NaiveDate, Utc};
use common::store::consultations::{self, Cursor, Filter};
use common::store::{workflows, RepoError};
use domain::ids::WorkflowId;
use domain::model::{Consultation, WorkflowDetail};
use domain::team::Permission;
use domain::vocabulary::{Decision, Verdict};
use maud::{html, Markup};
use serde::Deserialize;

/// Rows per page unless `limit` says otherwise (1 to 100, as the API).
const PAGE: u32 = 25;

/// The form's fields, named as the API's parameters, read as text: a value that does not parse
/// is dropped with a notice rather than failing the page.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ListQuery {
    workflow_id: Option<String>,
    verdict: Option<String>,
    decision: Option<String>,
    external_ref: Option<String>,
    /// A day (`YYYY-MM-DD`, the date input's value): results from its midnight UTC.
    created_after: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
}

/// The filters read from the form, with the raw values kept to refill it and to build the link
/// of the next page.
struct Read {
    filter: Filter,
    cursor: Option<Cursor>,
    limit: u32,
    /// The (name, value) pairs of the filters that applied.
    kept: Vec<(&'static str, String)>,
    bad: bool,
}

fn present(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

fn read(q: ListQuery) -> Read {
    let mut r = Read {
        filter: Filter::default(),
        cursor: None,
        limit: PAGE,
        kept: Vec::new(),
        bad: false,
    };
    let mut take = |name: &'static str, raw: Option<String>, ok: &mut dyn FnMut(&str) -> bool| {
        if let Some(raw) = present(raw) {
            if ok(&raw) {
                r.kept.push((name, raw));
            } else {
                r.bad = true;
            }
        }
    };
    let mut filter = Filter::default();
    take("workflowId", q.workflow_id, &mut |s| {
        filter.workflow_id = s.parse::<WorkflowId>().ok();
        filter.workflow_id.is_some()
    });
    take("verdict", q.verdict, &mut |s| {
        filter.verdict = s.parse::<Verdict>().ok();
        filter.verdict.is_some()
    });
    take("decision", q.decision, &mut |s| {
        filter.decision = s.parse::<Decision>().ok();
        filter.decision.is_some()
    });
    take("externalRef", q.external_ref, &mut |s| {
        let ok = s.chars().count() <= 255;
        filter.external_ref = ok.then(|| s.to_owned());
        ok
    });
    take("createdAfter", q.created_after, &mut |s| {
        filter.created_after = start_of_day(s);
        filter.created_after.is_some()
    });
    r.filter = filter;
    if let Some(c) = present(q.cursor) {
        r.cursor = Cursor::decode(&c);
        r.bad |= r.cursor.is_none();
    }
    if let Some(l) = present(q.limit) {
        match l.parse::<u32>().ok().filter(|n| (1..=100).contains(n)) {
            Some(n) => {
                r.limit = n;
                r.kept.push(("limit", l));
            }
            None => r.bad = true,
        }
    }
    r
}

fn start_of_day(s: &str) -> Option<DateTime<Utc>> {
    let day = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    Some(day.and_hms_opt(0, 0, 0)?.and_utc())
}

/// `name=value&…`, percent-encoded: what a link carrying the filters needs.
pub fn query_string(pairs: &[(&str, String)]) -> String {
    let encode = |s: &str| -> String {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A decision in a table cell: none is a dash, not the sentence of the certificate.
pub fn decision_cell(decision: Option<Decision>, lang: Lang) -> &'static str {
    match decision {
        Some(_) => labels::decision(decision, lang),
        None => "—",
    }
}

/// The name of a result's workflow, from the company's list.
pub fn workflow_name<'a>(workflows: &'a [WorkflowDetail], id: &'a WorkflowId) -> &'a str {
    workflows
        .iter()
        .find(|w| &w.workflow.id == id)
        .map_or(id.as_str(), |w| w.workflow.name.as_str())
}

/// `GET /portal/consultations`.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(q): Query<ListQuery>) -> PortalResult<Response> {
    signed.require(Permission::ViewResults)?;
    let (lang, t) = (signed.lang, signed.lang.portal());
    let read = read(q);
    let (company, filter, cursor, limit) = (signed.company.id.clone(), read.filter.clone(), read.cursor, read.limit);
    let (workflows, (rows, next)) = state
        .store
        .read(move |c| {
            let workflows = workflows::list(c, &company)?;
            let page = consultations::list(c, &company, &filter, cursor, limit)?;
            Ok::<_, RepoError>((workflows, page))
        })
        .await?;
    let value = |name: &str| read.kept.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str());
    let next_link = next.map(|c| {
        let mut pairs = read.kept.clone();
        pairs.push(("cursor", c.encode()));
        format!("/portal/consultations?{}", query_string(&pairs))
    });
    let body = html! {
        form.filters method="get" action="/portal/consultations" data-testid="results-filters" aria-label=(t.filters) {
            div {
                label for="f-workflow" { (t.workflow) }
                select #f-workflow name="workflowId" {
                    option value="" { (t.any) }
                    @for w in &workflows {
                        option value=(w.workflow.id) selected[value("workflowId") == Some(w.workflow.id.as_str())] { (w.workflow.name) }
                    }
                }
            }
            div {
                label for="f-verdict" { (t.verdict) }
                select #f-verdict name="verdict" {
                    option value="" { (t.any) }
                    @for v in Verdict::ALL {
                        option value=(v.as_str()) selected[value("verdict") == Some(v.as_str())] { (labels::verdict(*v, lang)) }
                    }
                }
            }
            div {
                label for="f-decision" { (t.decision) }
                select #f-decision name="decision" {
                    option value="" { (t.any) }
                    @for d in Decision::ALL {
                        option value=(d.as_str()) selected[value("decision") == Some(d.as_str())] { (labels::decision(Some(*d), lang)) }
                    }
                }
            }
            div {
                label for="f-ref" { (t.external_ref) }
                input #f-ref type="text" name="externalRef" maxlength="255" value=[value("externalRef")];
            }
            div {
                label for="f-after" { (t.created_after) }
                input #f-after type="date" name="createdAfter" value=[value("createdAfter")];
            }
            @if let Some(limit) = value("limit") {
                input type="hidden" name="limit" value=(limit);
            }
            div { button type="submit" data-testid="results-filter" { (t.filter) } }
        }
        (table(&rows, &workflows, lang))
        nav.pages aria-label=(t.next_page) {
            @if read.cursor.is_some() {
                a href="/portal/consultations" data-testid="first-page" { (t.first_page) }
                " "
            }
            @if let Some(href) = next_link {
                a href=(href) rel="next" data-testid="next-page" { (t.next_page) }
            }
        }
    };
    let notice = read.bad.then_some(Notice::Error(t.bad_filter));
    Ok(layout::page(&signed, "/portal/consultations", t.results_title, notice, body))
}

fn table(rows: &[Consultation], workflows: &[WorkflowDetail], lang: Lang) -> Markup {
    html! {
        @if rows.is_empty() {
            p.muted data-testid="no-results" { (lang.portal().no_results) }
        } @else {
            (consultation_table(rows, workflows, lang, Rows::Results))
        }
    }
}

/// Which list a table of results is drawn for: each has its rows' test hook, and the review
/// queue leaves out the review column (every row there is pending).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Rows {
    Results,
    ReviewQueue,
}

/// A table of results, one row each leading to the result: the results list's and the review
/// queue's.
pub(super) fn consultation_table(rows: &[Consultation], workflows: &[WorkflowDetail], lang: Lang, list: Rows) -> Markup {
    let t = lang.portal();
    let (row_hook, with_review) = match list {
        Rows::Results => ("result-row", true),
        Rows::ReviewQueue => ("review-row", false),
    };
    html! {
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
                    @if with_review {
                        th scope="col" { (t.review_status) }
                    }
                }
            }
            tbody {
                @for c in rows {
                    tr data-testid=(row_hook) {
                        td { (labels::date(c.created_at, lang)) }
                        td { a href=(format!("/portal/consultations/{}", c.id)) { code { (c.id) } } }
                        td { (workflow_name(workflows, &c.workflow_id)) }
                        td { (c.external_ref.as_deref().unwrap_or("—")) }
                        td { (labels::document_type(c.document_type, lang)) }
                        td { (labels::verdict(c.verdict, lang)) }
                        td { (decision_cell(c.decision, lang)) }
                        @if with_review {
                            td { (labels::review(c.review_status, lang)) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_read_and_bad_ones_dropped() {
        let r = read(ListQuery {
            verdict: Some("suspect".into()),
            decision: Some("nonsense".into()),
            external_ref: Some("a b&c".into()),
            created_after: Some("2026-11-02".into()),
            workflow_id: Some(String::new()),
            ..Default::default()
        });
        assert_eq!(r.filter.verdict, Some(Verdict::Suspect));
        assert_eq!(r.filter.decision, None);
        assert!(r.bad, "the decision could not be read");
        assert_eq!(r.filter.external_ref.as_deref(), Some("a b&c"));
        assert_eq!(
            r.filter.created_after.map(|t| t.to_rfc3339()),
            Some("2026-11-02T00:00:00+00:00".into())
        );
        assert_eq!(r.filter.workflow_id, None);
        assert_eq!(
            query_string(&r.kept),
            "verdict=suspect&externalRef=a%20b%26c&createdAfter=2026-11-02"
        );
    }
}
