//! The confirmation a lower image retention asks for before it is saved (PORTAL.md hooks
//! `confirm-impact` and `confirm`): how many images the new value deletes now, counted as the
//! purge counts them, so never those of a result waiting for a review, which are kept until it
//! is settled.

use crate::i18n::portal::retention_impact;
use crate::portal::error::{PortalError, PortalResult};
use crate::portal::layout;
use crate::portal::signed::Signed;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use common::store::consultations;
use domain::team::Permission;
use maud::html;
use serde::Deserialize;

/// The settings the member submitted, carried to the confirmation page in its address (nothing
/// is saved before the confirmation posts them again).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposed {
    ai_enabled: Option<String>,
    retention_days: String,
    two_factor_required: Option<String>,
}

impl Proposed {
    pub fn new(ai: bool, retention: u32, two_factor: bool) -> Self {
        let on = |set: bool| set.then(|| "on".to_owned());
        Self {
            ai_enabled: on(ai),
            retention_days: retention.to_string(),
            two_factor_required: on(two_factor),
        }
    }

    /// The confirmation page of these settings (numbers and `on` only: nothing to escape).
    pub fn url(&self) -> String {
        let mut url = format!("/portal/settings/confirm?retentionDays={}", self.retention_days);
        if self.ai_enabled.is_some() {
            url.push_str("&aiEnabled=on");
        }
        if self.two_factor_required.is_some() {
            url.push_str("&twoFactorRequired=on");
        }
        url
    }

    fn retention(&self) -> Option<u32> {
        self.retention_days.trim().parse().ok().filter(|days| *days <= 3650)
    }
}

/// `GET /portal/settings/confirm`: what the lower retention deletes, and the button that saves it.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(proposed): Query<Proposed>) -> PortalResult<Response> {
    signed.require(Permission::ManageSettings)?;
    let current = signed.company.retention_days;
    // Nothing to confirm for a value that is not lower (or not a value): back to the form.
    let Some(days) = proposed.retention().filter(|days| *days < current) else {
        return Ok(Redirect::to("/portal/settings").into_response());
    };
    let (company, now) = (signed.company.id.clone(), chrono::Utc::now());
    let images = state
        .store
        .read(move |c| consultations::purged_by_retention(c, &company, days, now))
        .await
        .map_err(PortalError::from)?;
    let t = signed.lang.portal();
    let body = html! {
        p data-testid="confirm-impact" { (retention_impact(signed.lang, current, days, images)) }
        p.hint { (t.retention_held) }
        form method="post" action="/portal/settings" {
            input type="hidden" name="csrf" value=(signed.session.csrf_token);
            @if proposed.ai_enabled.is_some() {
                input type="hidden" name="aiEnabled" value="on";
            }
            input type="hidden" name="retentionDays" value=(days);
            @if proposed.two_factor_required.is_some() {
                input type="hidden" name="twoFactorRequired" value="on";
            }
            input type="hidden" name="confirmed" value="on";
            // "Delete" only when something will be.
            @if images > 0 {
                button.danger type="submit" data-testid="confirm" { (t.confirm_retention) }
            } @else {
                button type="submit" data-testid="confirm" { (t.confirm_retention_keeps) }
            }
            p { a href="/portal/settings" { (t.back_to_settings) } }
        }
    };
    Ok(layout::page(&signed, "/portal/settings", t.confirm_retention_title, None, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confirmation_address_carries_the_settings_submitted() {
        assert_eq!(
            Proposed::new(true, 0, false).url(),
            "/portal/settings/confirm?retentionDays=0&aiEnabled=on"
        );
        assert_eq!(
            Proposed::new(false, 7, true).url(),
            "/portal/settings/confirm?retentionDays=7&twoFactorRequired=on"
        );
        assert_eq!(Proposed::new(false, 3650, false).retention(), Some(3650));
    }
}
