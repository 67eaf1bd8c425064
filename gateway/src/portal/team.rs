//! The Team page (PORTAL.md page 8): invite (e-mail and role; the link shown to whoever invited,
//! and e-mailed when SMTP is configured), pending invitations with revoke, role changes and
//! disabling. Only owners make, change or disable owners; a company always keeps one. Disabling
//! is confirmed first ([`confirm_disable`]), which offers to revoke the member's API keys; a new
//! role takes from their keys the scopes it lacks (`membership::change_role`).

mod confirm_disable;

pub use confirm_disable::page as confirm_disable_page;

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::layout::{self, Notice};
use super::signed::Signed;
use crate::i18n::portal::{disabled_with_keys, role as role_name};
use crate::i18n::{labels, Lang};
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use common::membership::{self, Invited};
use common::store::members::{self, Member, MemberState};
use common::store::{invitations, RepoError};
use domain::ids::MemberId;
use domain::team::{Email, Permission, Role};
use maud::{html, Markup};
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
    /// With `flash=disabled`: how many of the member's API keys were revoked with them (anything
    /// else than a count is ignored, as an unknown flash is).
    keys: Option<String>,
}

/// `GET /portal/team`.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(q): Query<Flash>) -> PortalResult<Response> {
    signed.require(Permission::ManageTeam)?;
    let t = signed.lang.portal();
    let with_keys = q
        .keys
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .map(|n| disabled_with_keys(signed.lang, n));
    let notice = match (q.flash.as_deref(), &with_keys) {
        (Some("role"), _) => Some(Notice::Ok(t.role_changed)),
        (Some("disabled"), Some(text)) => Some(Notice::Ok(text.as_str())),
        (Some("disabled"), None) => Some(Notice::Ok(t.member_disabled)),
        (Some("revoked"), _) => Some(Notice::Ok(t.invitation_revoked)),
        _ => None,
    };
    render(&state, &signed, notice, None, StatusCode::OK).await
}

fn state_name(state: MemberState, lang: Lang) -> &'static str {
    let t = lang.portal();
    match state {
        MemberState::Active => t.state_active,
        MemberState::Invited => t.state_invited,
        MemberState::Disabled => t.state_disabled,
    }
}

async fn render(
    state: &AppState,
    signed: &Signed,
    notice: Option<Notice<'_>>,
    invited: Option<(&Invited, bool)>,
    status: StatusCode,
) -> PortalResult<Response> {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let company = signed.company.id.clone();
    let (list, pending) = state
        .store
        .read(move |c| Ok::<_, RepoError>((members::list(c, &company)?, invitations::pending(c, &company)?)))
        .await?;
    let mine = signed.member().role;
    let csrf = &signed.session.csrf_token;
    let now = chrono::Utc::now();
    let body = html! {
        @if let Some((invited, mailed)) = invited {
            p { (if mailed { t.invited_mailed } else { t.invited }) }
            code.secret data-testid="invite-url" { (invited.url) }
        }
        h2 { (t.invite_title) }
        form method="post" action="/portal/team/invitations" data-testid="team-invite" {
            input type="hidden" name="csrf" value=(csrf);
            label for="email" { (t.email) }
            input #email type="email" name="email" required;
            label for="role" { (t.role) }
            (role_select("role", Role::Viewer, mine, lang))
            button type="submit" { (t.invite) }
        }
        h2 { (t.members) }
        table {
            thead { tr { th scope="col" { (t.email) } th scope="col" { (t.role) } th scope="col" { (t.state) } th scope="col" { (t.two_factor) } th scope="col" { (t.change_role) } th {} } }
            tbody {
                @for m in list.iter().filter(|m| m.state != MemberState::Invited) {
                    tr data-testid="member-row" {
                        td { (m.email) }
                        td { (role_name(m.role, lang)) }
                        td { (state_name(m.state, lang)) }
                        td { (if m.two_factor { t.yes } else { t.no }) }
                        td { (role_form(signed, m)) }
                        td {
                            @if m.state == MemberState::Active && mine.may_manage(m.role) {
                                form method="post" action=(format!("/portal/team/members/{}/disable", m.id)) {
                                    input type="hidden" name="csrf" value=(csrf);
                                    button.danger type="submit" data-testid="member-disable" aria-label=(format!("{} {}", t.disable, m.email)) { (t.disable) }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { (t.pending_invitations) }
        table {
            thead { tr { th scope="col" { (t.email) } th scope="col" { (t.role) } th scope="col" { (t.expires) } th {} } }
            tbody {
                @for p in &pending {
                    tr data-testid="invitation-row" {
                        td { (p.member.email) }
                        td { (role_name(p.member.role, lang)) }
                        td { (labels::date(p.expires_at, lang)) @if p.expires_at <= now { " (" (t.expired) ")" } }
                        td {
                            @if mine.may_manage(p.member.role) {
                                form method="post" action=(format!("/portal/team/members/{}/disable", p.member.id)) {
                                    input type="hidden" name="csrf" value=(csrf);
                                    button.secondary type="submit" data-testid="invitation-revoke" aria-label=(format!("{} {}", t.revoke, p.member.email)) { (t.revoke) }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(layout::with_status(
        layout::page(signed, "/portal/team", t.team_title, notice, body),
        status,
    ))
}

/// The roles `mine` may give, `selected` first chosen.
fn role_select(name: &str, selected: Role, mine: Role, lang: Lang) -> Markup {
    html! {
        select id=(name) name=(name) {
            @for r in Role::ALL.iter().filter(|r| mine.may_assign(**r)) {
                option value=(r.as_str()) selected[*r == selected] { (role_name(*r, lang)) }
            }
        }
    }
}

fn role_form(signed: &Signed, m: &Member) -> Markup {
    let (lang, t, mine) = (signed.lang, signed.lang.portal(), signed.member().role);
    html! {
        @if m.state == MemberState::Active && mine.may_manage(m.role) {
            form method="post" action=(format!("/portal/team/members/{}/role", m.id)) {
                input type="hidden" name="csrf" value=(signed.session.csrf_token);
                label.sr-only for=(format!("role-{}", m.id)) { (t.role) " " (m.email) }
                select id=(format!("role-{}", m.id)) name="role" {
                    @for r in Role::ALL.iter().filter(|r| mine.may_assign(**r)) {
                        option value=(r.as_str()) selected[*r == m.role] { (role_name(*r, lang)) }
                    }
                }
                button.secondary type="submit" data-testid="member-role-save" { (t.change_role) }
            }
        }
    }
}

#[derive(Deserialize)]
pub struct InviteForm {
    csrf: String,
    email: String,
    role: String,
}

/// `POST /portal/team/invitations`.
pub async fn invite(State(state): State<AppState>, signed: Signed, Form(form): Form<InviteForm>) -> PortalResult<Response> {
    signed.require(Permission::ManageTeam)?;
    signed.check_csrf(&form.csrf)?;
    let t = signed.lang.portal();
    let role: Role = form.role.parse().map_err(|_| PortalError::BadForm)?;
    if !signed.member().role.may_assign(role) {
        return Err(PortalError::Forbidden);
    }
    let Ok(email) = Email::parse(&form.email) else {
        return render(
            &state,
            &signed,
            Some(Notice::Error(t.invalid_email)),
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
        )
        .await;
    };
    let (company, acting, base, now) = (
        signed.company.id.clone(),
        signed.acting(),
        state.public_base.clone(),
        chrono::Utc::now(),
    );
    let invited = state
        .store
        .write(move |tx| membership::invite(tx, &company, &email, role, &acting, &base, now))
        .await;
    match invited {
        Ok(invited) => {
            let mailed = match &state.mailer {
                Some(mailer) => mailer.send_invitation(&invited, &signed.company.name).await.is_ok(),
                None => false,
            };
            render(&state, &signed, None, Some((&invited, mailed)), StatusCode::OK).await
        }
        Err(e) => refused(&state, &signed, e).await,
    }
}

#[derive(Deserialize)]
pub struct RoleForm {
    csrf: String,
    role: String,
}

/// The member `id` of the company, if the signed-in member may manage them.
async fn managed(state: &AppState, signed: &Signed, id: &str) -> PortalResult<Member> {
    let id: MemberId = id.parse().map_err(|_| PortalError::NotFound)?;
    let company = signed.company.id.clone();
    let member = state.store.read(move |c| members::get(c, &company, &id)).await?;
    if !signed.member().role.may_manage(member.role) {
        return Err(PortalError::Forbidden);
    }
    Ok(member)
}

/// `POST /portal/team/members/{id}/role`: the member's sessions end, so their next one carries
/// the new role under a new id; the keys they made lose the scopes the new role lacks.
pub async fn change_role(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<RoleForm>,
) -> PortalResult<Response> {
    signed.require(Permission::ManageTeam)?;
    signed.check_csrf(&form.csrf)?;
    let role: Role = form.role.parse().map_err(|_| PortalError::BadForm)?;
    if !signed.member().role.may_assign(role) {
        return Err(PortalError::Forbidden);
    }
    let member = managed(&state, &signed, &id).await?;
    let (company, acting, now) = (signed.company.id.clone(), signed.acting(), chrono::Utc::now());
    let changed = state
        .store
        .write(move |tx| membership::change_role(tx, &company, &member.id, role, &acting, now).map(|_| ()))
        .await;
    settled(&state, &signed, changed, "/portal/team?flash=role").await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DisableForm {
    csrf: String,
    /// Sent by the confirmation page: whoever disables saw what it ends.
    confirmed: Option<String>,
    /// The confirmation page's box, ticked unless unticked: revoke the member's API keys too.
    revoke_keys: Option<String>,
}

/// `POST /portal/team/members/{id}/disable`: revokes an invitation at once; disables a member
/// once confirmed (else on to the confirmation page), with their API keys if the box was ticked.
pub async fn disable(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<DisableForm>,
) -> PortalResult<Response> {
    signed.require(Permission::ManageTeam)?;
    signed.check_csrf(&form.csrf)?;
    let member = managed(&state, &signed, &id).await?;
    let invited = member.state == MemberState::Invited;
    if !invited && form.confirmed.is_none() {
        return Ok(Redirect::to(&confirm_disable::url(&member.id)).into_response());
    }
    let (company, acting, now) = (signed.company.id.clone(), signed.acting(), chrono::Utc::now());
    let revoke_keys = form.revoke_keys.is_some();
    let done = state
        .store
        .write(move |tx| membership::disable(tx, &company, &member.id, revoke_keys, &acting, now))
        .await;
    let to = match &done {
        _ if invited => "/portal/team?flash=revoked".to_owned(),
        Ok(done) if !done.revoked_keys.is_empty() => format!("/portal/team?flash=disabled&keys={}", done.revoked_keys.len()),
        _ => "/portal/team?flash=disabled".to_owned(),
    };
    settled(&state, &signed, done.map(|_| ()), &to).await
}

/// On to `to`, or the page again with why the store refused.
async fn settled(state: &AppState, signed: &Signed, result: Result<(), RepoError>, to: &str) -> PortalResult<Response> {
    match result {
        Ok(()) => Ok(Redirect::to(to).into_response()),
        Err(e) => refused(state, signed, e).await,
    }
}

/// The page again, saying in the member's language why the team rules refused the change.
async fn refused(state: &AppState, signed: &Signed, e: RepoError) -> PortalResult<Response> {
    let t = signed.lang.portal();
    let why = match e {
        RepoError::Invalid { field: "email", .. } => t.email_taken,
        RepoError::Invalid { field: "role", .. } => t.keep_an_owner,
        RepoError::InvalidState(_) => t.state_changed,
        other => return Err(other.into()),
    };
    render(state, signed, Some(Notice::Error(why)), None, StatusCode::UNPROCESSABLE_ENTITY).await
}
