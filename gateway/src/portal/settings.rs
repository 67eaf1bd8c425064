//! Company settings: AI use, image retention and the two-factor requirement, through the same
//! store operations as `sceau admin company set`; the API obeys them at once. The "Parcours
//! client" section ([`journey`]) has its own form.
//! A lower retention is saved only once confirmed ([`confirm`]): it deletes images.

mod confirm;
pub mod journey;

pub use confirm::page as confirm_page;

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::layout::{self, Notice};
use super::signed::Signed;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use common::store::{audit, companies, RepoError};
use domain::team::{AuditAction, Permission};
use maud::html;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// `GET /portal/settings`.
pub async fn page(signed: Signed, Query(q): Query<Flash>) -> PortalResult<Response> {
    signed.require(Permission::ManageSettings)?;
    let t = signed.lang.portal();
    let notice = match q.flash.as_deref() {
        Some("saved") => Some(Notice::Ok(t.settings_saved)),
        Some("journey") => Some(Notice::Ok(t.journey_saved)),
        _ => None,
    };
    Ok(render(&signed, notice, &signed.company.retention_days.to_string(), None))
}

/// The page after a refused "Parcours client" form, which shows again what the member filled.
fn render_with_journey(signed: &Signed, notice: Option<Notice<'_>>, filled: &journey::Filled) -> Response {
    render(signed, notice, &signed.company.retention_days.to_string(), Some(filled))
}

fn render(signed: &Signed, notice: Option<Notice<'_>>, retention: &str, journey: Option<&journey::Filled>) -> Response {
    let t = signed.lang.portal();
    let c = &signed.company;
    let body = html! {
        form method="post" action="/portal/settings" data-testid="settings-form" {
            input type="hidden" name="csrf" value=(signed.session.csrf_token);
            p.check {
                input #aiEnabled type="checkbox" name="aiEnabled" value="on" checked[c.ai_enabled] aria-describedby="ai-hint";
                label for="aiEnabled" { (t.ai_enabled) }
            }
            p.hint #ai-hint { (t.ai_hint) }
            label for="retentionDays" { (t.retention_days) }
            input #retentionDays type="number" name="retentionDays" min="0" max="3650" value=(retention) required aria-describedby="retention-hint";
            p.hint #retention-hint { (t.retention_hint) " " (t.retention_held) }
            p.check {
                input #twoFactorRequired type="checkbox" name="twoFactorRequired" value="on" checked[c.two_factor_required];
                label for="twoFactorRequired" { (t.two_factor_for_all) }
            }
            button type="submit" { (t.save) }
        }
        @match journey {
            Some(filled) => (journey::section(signed, filled)),
            None => (journey::section(signed, &journey::Filled::current(&c.journey))),
        }
    };
    layout::page(signed, "/portal/settings", t.settings_title, notice, body)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsForm {
    csrf: String,
    ai_enabled: Option<String>,
    retention_days: String,
    two_factor_required: Option<String>,
    /// Sent by the confirmation page: the member saw what a lower retention deletes.
    confirmed: Option<String>,
}

/// `POST /portal/settings`.
pub async fn save(State(state): State<AppState>, signed: Signed, Form(form): Form<SettingsForm>) -> PortalResult<Response> {
    signed.require(Permission::ManageSettings)?;
    signed.check_csrf(&form.csrf)?;
    let t = signed.lang.portal();
    let retention = match form.retention_days.trim().parse::<u32>() {
        Ok(days) if days <= 3650 => days,
        _ => {
            let page = render(&signed, Some(Notice::Error(t.invalid_retention)), &form.retention_days, None);
            return Ok(layout::with_status(page, StatusCode::UNPROCESSABLE_ENTITY));
        }
    };
    let ai = form.ai_enabled.is_some();
    let two_factor = form.two_factor_required.is_some();
    if retention < signed.company.retention_days && form.confirmed.is_none() {
        let proposed = confirm::Proposed::new(ai, retention, two_factor);
        return Ok(Redirect::to(&proposed.url()).into_response());
    }
    let (company, acting, now) = (signed.company.id.clone(), signed.acting(), chrono::Utc::now());
    let target = format!("ai={ai}; retentionDays={retention}; twoFactorRequired={two_factor}");
    state
        .store
        .write(move |tx| {
            companies::set(tx, &company, Some(ai), Some(retention))?;
            companies::set_two_factor_required(tx, &company, two_factor)?;
            audit::record(tx, &company, &acting.entry(AuditAction::SettingsChanged, target, now))?;
            Ok::<_, RepoError>(())
        })
        .await
        .map_err(PortalError::from)?;
    Ok(Redirect::to("/portal/settings?flash=saved").into_response())
}
