//! Accepting an invitation (PORTAL.md, Test hooks): the link's page asks for a password twice;
//! on success the member is signed in on the dashboard. Expired, used and unknown links all say
//! the same thing.

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::lang::portal_lang;
use super::layout::{self, Notice};
use super::sign_in::{check_form_token, form_token, open_session};
use crate::client_addr::ClientAddr;
use crate::i18n::Lang;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use common::crypto::password::{Password, PasswordError};
use common::crypto::session_token::Token;
use common::store::members::Member;
use common::store::{audit, invitations, RepoError};
use domain::team::AuditAction;
use maud::html;
use serde::Deserialize;

/// The invitation's member, or the "no longer valid" page.
async fn open(state: &AppState, token: &str) -> PortalResult<Option<Member>> {
    let Some(token) = Token::parse(token) else { return Ok(None) };
    let (hash, now) = (token.hash(), chrono::Utc::now());
    match state.store.read(move |c| invitations::open(c, &hash, now)).await {
        Ok(member) => Ok(Some(member)),
        Err(RepoError::NotFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn invalid(lang: Lang) -> Response {
    let t = lang.portal();
    let page = layout::bare(
        lang,
        t.invitation_title,
        layout::message(t.invitation_title, t.invitation_invalid, Some(("/portal/login", t.sign_in))),
    );
    layout::with_status(page, StatusCode::NOT_FOUND)
}

fn form(state: &AppState, headers: &HeaderMap, lang: Lang, member: &Member, notice: Option<Notice<'_>>, status: StatusCode) -> Response {
    let t = lang.portal();
    let (token, fresh) = form_token(state, headers);
    let body = html! {
        h1 { (t.invitation_title) }
        (layout::notice_markup(notice))
        p { (t.invitation_text) " " strong { (member.email) } "." }
        form method="post" {
            input type="hidden" name="formToken" value=(token);
            label for="password" { (t.password) }
            input #password type="password" name="password" autocomplete="new-password" minlength="12" required aria-describedby="password-rule";
            p.hint #password-rule { (t.password_rule) }
            label for="passwordConfirm" { (t.password_confirm) }
            input #passwordConfirm type="password" name="passwordConfirm" autocomplete="new-password" minlength="12" required;
            button type="submit" { (t.create_account) }
        }
    };
    let mut response = layout::with_status(layout::bare(lang, t.invitation_title, body), status);
    if fresh {
        response
            .headers_mut()
            .append(header::SET_COOKIE, super::cookies::Cookie::FormToken.set(state, &token, None));
    }
    response
}

/// `GET /portal/invitations/{token}`.
pub async fn page(State(state): State<AppState>, headers: HeaderMap, Path(token): Path<String>) -> PortalResult<Response> {
    let lang = portal_lang(&state, &headers);
    Ok(match open(&state, &token).await? {
        Some(member) => form(&state, &headers, lang, &member, None, StatusCode::OK),
        None => invalid(lang),
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accept {
    form_token: String,
    password: String,
    password_confirm: String,
}

/// The message for a password that does not follow the rules.
pub fn password_problem(e: &PasswordError, lang: Lang) -> &'static str {
    match e {
        PasswordError::TooShort => lang.portal().password_too_short,
        PasswordError::TooLong => lang.portal().password_too_long,
    }
}

/// `POST /portal/invitations/{token}`: the password chosen, the member joins and is signed in.
pub async fn accept(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: ClientAddr,
    Path(token): Path<String>,
    Form(input): Form<Accept>,
) -> PortalResult<Response> {
    check_form_token(&state, &headers, &input.form_token)?;
    let lang = portal_lang(&state, &headers);
    let Some(member) = open(&state, &token).await? else {
        return Ok(invalid(lang));
    };
    let refuse = |text| {
        form(
            &state,
            &headers,
            lang,
            &member,
            Some(Notice::Error(text)),
            StatusCode::UNPROCESSABLE_ENTITY,
        )
    };
    let chosen = match Password::parse(&input.password) {
        Ok(p) => p,
        Err(e) => return Ok(refuse(password_problem(&e, lang))),
    };
    if input.password != input.password_confirm {
        return Ok(refuse(lang.portal().passwords_differ));
    }
    let hash = state.passwords.slot().await?.hash(chosen).await?;
    let token = Token::parse(&token).ok_or(PortalError::NotFound)?.hash();
    let now = chrono::Utc::now();
    let acting = audit::Acting {
        actor: audit::Actor::Member {
            id: member.id.clone(),
            email: member.email.clone(),
        },
        ip: client.for_audit(),
    };
    let joined = state
        .store
        .write(move |tx| {
            let joined = invitations::accept(tx, &token, &hash, now)?;
            audit::record(
                tx,
                &joined.company_id,
                &acting.entry(AuditAction::InvitationAccepted, joined.id.as_str(), now),
            )?;
            Ok::<_, RepoError>(joined)
        })
        .await;
    match joined {
        Ok(joined) => open_session(&state, &headers, &client, &joined, false, None, None).await,
        Err(RepoError::NotFound) => Ok(invalid(lang)),
        Err(e) => Err(e.into()),
    }
}
