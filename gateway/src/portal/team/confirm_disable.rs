//! The confirmation disabling a member asks for (PORTAL.md hooks `confirm-impact` and `confirm`,
//! reached from `member-disable`): what it ends, how many live API keys the member created, and
//! a box, ticked unless unticked, to revoke them with the member, since a key would otherwise
//! outlive whoever made it.

use crate::i18n::portal::disable_impact;
use crate::portal::error::PortalResult;
use crate::portal::layout;
use crate::portal::signed::Signed;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use common::store::api_keys;
use common::store::members::MemberState;
use domain::ids::MemberId;
use domain::team::Permission;
use maud::html;

/// Where the confirmation of disabling `member` is, and where its form posts.
pub fn url(member: &MemberId) -> String {
    format!("/portal/team/members/{member}/disable")
}

/// `GET /portal/team/members/{id}/disable`.
pub async fn page(State(state): State<AppState>, signed: Signed, Path(id): Path<String>) -> PortalResult<Response> {
    signed.require(Permission::ManageTeam)?;
    let member = super::managed(&state, &signed, &id).await?;
    // Nothing to confirm for an invitation (revoked at once) or a member already disabled.
    if member.state != MemberState::Active {
        return Ok(Redirect::to("/portal/team").into_response());
    }
    let (company, of) = (signed.company.id.clone(), member.id.clone());
    let keys = state.store.read(move |c| api_keys::live_created_by(c, &company, &of)).await?;
    let t = signed.lang.portal();
    let body = html! {
        p data-testid="confirm-impact" { (disable_impact(signed.lang, member.email.as_str(), keys.len())) }
        @if !keys.is_empty() {
            ul data-testid="confirm-keys" {
                @for prefix in &keys {
                    li { code { (prefix) "…" } }
                }
            }
        }
        form method="post" action=(url(&member.id)) {
            input type="hidden" name="csrf" value=(signed.session.csrf_token);
            @if !keys.is_empty() {
                p.check {
                    input #revokeKeys type="checkbox" name="revokeKeys" value="on" checked;
                    label for="revokeKeys" { (t.confirm_disable_revoke_keys) }
                }
            }
            input type="hidden" name="confirmed" value="on";
            button.danger type="submit" data-testid="confirm" { (t.confirm_disable) }
            " "
            a href="/portal/team" { (t.back_to_team) }
        }
    };
    Ok(layout::page(&signed, "/portal/team", t.confirm_disable_title, None, body))
}
