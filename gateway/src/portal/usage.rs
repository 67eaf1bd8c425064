//! Usage (PORTAL.md page 11): acts per month over the last 12 months as a table and a chart, and
//! the same figures as CSV; the counting rules are the CLI's (`store::usage`).

use super::chart::{stacked_bars, Series};
use super::error::PortalResult;
use super::layout;
use super::signed::Signed;
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use chrono::{Datelike, NaiveDate};
use common::store::usage::{self, Usage};
use domain::team::Permission;
use maud::html;

/// The last 12 months, this one included.
async fn last_year(state: &AppState, signed: &Signed) -> PortalResult<Vec<Usage>> {
    let today = chrono::Utc::now().date_naive();
    let this = NaiveDate::from_ymd_opt(today.year(), today.month(), 1).unwrap_or(today);
    let back = this.year() * 12 + this.month0() as i32 - 11;
    let first = NaiveDate::from_ymd_opt(back.div_euclid(12), back.rem_euclid(12) as u32 + 1, 1).unwrap_or(this);
    let company = signed.company.id.clone();
    Ok(state.store.read(move |c| usage::months(c, &company, first, this)).await?)
}

/// `GET /portal/usage`.
pub async fn page(State(state): State<AppState>, signed: Signed) -> PortalResult<Response> {
    signed.require(Permission::ViewUsage)?;
    let t = signed.lang.portal();
    let months = last_year(&state, &signed).await?;
    let series = [
        Series {
            name: t.usage_batch_documents,
            colour: "#0b4f9c",
        },
        Series {
            name: t.journeys,
            colour: "#b45309",
        },
    ];
    let columns: Vec<(String, Vec<i64>)> = months
        .iter()
        .map(|u| (u.month.clone(), vec![u.batch_documents, u.journeys]))
        .collect();
    let body = html! {
        (stacked_bars(t.acts_per_month, &series, &columns, t.no_data))
        p { a href="/portal/usage.csv" data-testid="usage-export" { (t.export_csv) } }
        table {
            thead { tr { th scope="col" { (t.month) } th scope="col" { (t.acts) } th scope="col" { (t.usage_batch_documents) } th scope="col" { (t.journeys) } } }
            tbody {
                @for u in months.iter().rev() {
                    tr data-testid="usage-row" { th scope="row" { (u.month) } td { (u.acts) } td { (u.batch_documents) } td { (u.journeys) } }
                }
            }
        }
    };
    Ok(layout::page(&signed, "/portal/usage", t.usage_title, None, body))
}

/// `GET /portal/usage.csv`.
pub async fn export(State(state): State<AppState>, signed: Signed) -> PortalResult<Response> {
    signed.require(Permission::ViewUsage)?;
    let months = last_year(&state, &signed).await?;
    let mut csv = super::csv::Writer::new(&["month", "acts", "batchDocuments", "journeys"]);
    for u in &months {
        csv.row(&[
            &u.month,
            &u.acts.to_string(),
            &u.batch_documents.to_string(),
            &u.journeys.to_string(),
        ]);
    }
    Ok(super::csv::download(csv, "usage.csv"))
}
