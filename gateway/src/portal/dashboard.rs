//! The dashboard (PORTAL.md, Dashboard): acts this month and last, results per verdict over 30
//! days, reviews waiting, open batches and failing webhook deliveries.

use super::chart::{stacked_bars, Series};
use super::error::PortalResult;
use super::layout::{self, Notice};
use super::signed::Signed;
use crate::i18n::labels;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::Response;
use common::store::dashboard;
use domain::team::Permission;
use domain::vocabulary::Verdict;
use maud::html;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// The colour of each verdict in charts: green, teal, amber, red, grey (each ≥ 3:1 on white).
pub fn verdict_colour(v: Verdict) -> &'static str {
    match v {
        Verdict::Conforme => "#15803d",
        Verdict::SansAnomalie => "#0f766e",
        Verdict::Suspect => "#b45309",
        Verdict::NonConforme => "#b91c1c",
        Verdict::AnalyseImpossible => "#4b5563",
    }
}

/// `GET /portal/`.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(q): Query<Flash>) -> PortalResult<Response> {
    signed.require(Permission::ViewResults)?;
    let (lang, t) = (signed.lang, signed.lang.portal());
    let (company, now) = (signed.company.id.clone(), chrono::Utc::now());
    let f = state.store.read(move |c| dashboard::figures(c, &company, now)).await?;
    let series: Vec<Series> = Verdict::ALL
        .iter()
        .map(|v| Series {
            name: labels::verdict(*v, lang),
            colour: verdict_colour(*v),
        })
        .collect();
    let columns: Vec<(String, Vec<i64>)> = f
        .verdicts_per_day
        .iter()
        .map(|d| {
            let values = Verdict::ALL
                .iter()
                .map(|v| d.verdicts.iter().find(|(w, _)| w == v).map_or(0, |(_, n)| *n))
                .collect();
            (d.day.format("%d/%m").to_string(), values)
        })
        .collect();
    let cards = [
        (t.acts_this_month, f.acts_this_month, None),
        (t.acts_last_month, f.acts_last_month, None),
        (
            t.reviews_waiting,
            f.reviews_waiting,
            signed.member().role.may(Permission::Review).then_some("/portal/reviews"),
        ),
        (
            t.open_batches,
            f.open_batches,
            signed.member().role.may(Permission::ViewBatches).then_some("/portal/batches"),
        ),
        (
            t.failing_deliveries,
            f.failing_deliveries,
            signed.member().role.may(Permission::ManageWorkflows).then_some("/portal/workflows"),
        ),
    ];
    let privacy_link = signed
        .member()
        .role
        .may(Permission::ManageSettings)
        .then_some("/portal/settings#journey");
    let body = html! {
        // GDPR art. 13: the journey must name the controller and a contact; until the company
        // does, its customers see a notice built from its name, and the company is told here.
        @if signed.company.journey.privacy_incomplete() {
            p.flash.error role="note" data-testid="privacy-warning" {
                (t.privacy_incomplete)
                @if let Some(href) = privacy_link {
                    " " a href=(href) { (t.journey_title) }
                }
            }
        }
        div.cards {
            @for (label, n, link) in cards {
                div.card {
                    div.n { (n) }
                    @match link { Some(href) => a href=(href) { (label) }, None => span { (label) } }
                }
            }
        }
        (stacked_bars(t.verdicts_30_days, &series, &columns, t.no_data))
    };
    let notice = (q.flash.as_deref() == Some("welcome")).then_some(Notice::Ok(t.welcome));
    Ok(layout::page(&signed, "/portal/", t.dashboard_title, notice, body))
}
