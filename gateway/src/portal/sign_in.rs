//! Signing in and out (PORTAL.md, Security): e-mail and password, then a TOTP or recovery code
//! when the member enrolled one; the same answer for an unknown e-mail and a wrong password;
//! attempts throttled per account and per address (counted before they are checked, see
//! `sign_in_throttle`), passwords checked on the password pool; a new session id at each step.

use super::cookies::Cookie;
use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::guard;
use super::lang::portal_lang;
use super::layout::{self, Notice};
use super::password_check;
use super::signed::{session_of, Signed};
use crate::client_addr::ClientAddr;
use crate::i18n::Lang;
use crate::password_pool::HashError;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use common::crypto::session_token::Token;
use common::membership;
use common::store::members::{self, Credentials, Member, MemberState};
use common::store::portal_sessions::{self, Origin};
use common::store::sign_in_throttle::{self, Admitted, Attempt, Scope};
use common::store::{audit, RepoError};
use domain::team::{AuditAction, Email};
use maud::html;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// `GET /portal/login`.
pub async fn page(State(state): State<AppState>, headers: HeaderMap, Query(q): Query<Flash>) -> Response {
    let lang = portal_lang(&state, &headers);
    let t = lang.portal();
    let notice = match q.flash.as_deref() {
        Some("signed_out") => Some(Notice::Ok(t.signed_out)),
        Some("expired") => Some(Notice::Error(t.session_expired)),
        _ => None,
    };
    form_page(&state, &headers, lang, notice, StatusCode::OK)
}

/// The sign-in form, with a fresh form token when the browser has none yet.
fn form_page(state: &AppState, headers: &HeaderMap, lang: Lang, notice: Option<Notice<'_>>, status: StatusCode) -> Response {
    let t = lang.portal();
    let (token, fresh) = form_token(state, headers);
    let body = html! {
        h1 { (t.sign_in) }
        (layout::notice_markup(notice))
        form method="post" action="/portal/login" {
            input type="hidden" name="formToken" value=(token);
            label for="email" { (t.email) }
            input #email type="email" name="email" autocomplete="username" required;
            label for="password" { (t.password) }
            input #password type="password" name="password" autocomplete="current-password" required;
            button type="submit" { (t.sign_in) }
        }
    };
    let mut response = layout::with_status(layout::bare(lang, t.sign_in, body), status);
    if fresh {
        response
            .headers_mut()
            .append(header::SET_COOKIE, Cookie::FormToken.set(state, &token, None));
    }
    response
}

/// The browser's pre-session form token, or a new one to set.
pub fn form_token(state: &AppState, headers: &HeaderMap) -> (String, bool) {
    match Cookie::FormToken.read(state, headers).and_then(Token::parse) {
        Some(token) => (token.as_str().to_owned(), false),
        None => (Token::generate().as_str().to_owned(), true),
    }
}

/// Refuses a pre-session form whose token is not the browser's cookie (double submit).
pub fn check_form_token(state: &AppState, headers: &HeaderMap, presented: &str) -> PortalResult<()> {
    match Cookie::FormToken.read(state, headers) {
        Some(cookie) if guard::token_matches(cookie, presented) => Ok(()),
        _ => Err(PortalError::BadForm),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignIn {
    form_token: String,
    email: String,
    password: String,
}

/// `POST /portal/login`. A locked scope is refused at once; otherwise the request takes a hashing
/// slot, then counts its attempt (account and address) in one write before the password is
/// checked, so concurrent guesses get no more checks than the thresholds allow.
pub async fn submit(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: ClientAddr,
    Form(form): Form<SignIn>,
) -> PortalResult<Response> {
    check_form_token(&state, &headers, &form.form_token)?;
    let lang = portal_lang(&state, &headers);
    let t = lang.portal();
    let refuse = |state: &AppState, notice| form_page(state, &headers, lang, Some(Notice::Error(notice)), StatusCode::UNAUTHORIZED);
    let Ok(email) = Email::parse(&form.email) else {
        return Ok(refuse(&state, t.wrong_credentials));
    };
    let address = client.limit_key();
    let (e, a) = (email.clone(), address.clone());
    let locked = state
        .store
        .read(move |c| sign_in_throttle::locked_until(c, &scopes(&e, a.as_deref()), chrono::Utc::now()))
        .await?;
    if let Some(until) = locked {
        return Ok(password_check::locked(refuse(&state, t.locked), until));
    }
    let slot = match state.passwords.slot().await {
        Ok(slot) => slot,
        Err(HashError::Busy) => return Ok(password_check::busy(refuse(&state, t.busy))),
        Err(e) => return Err(e.into()),
    };
    let e = email.clone();
    let (attempt, credentials) = state
        .store
        .write(move |tx| {
            let attempt = sign_in_throttle::attempt(tx, &scopes(&e, address.as_deref()), chrono::Utc::now())?;
            let credentials = match attempt {
                Attempt::Admitted(_) => members::credentials(tx, &e)?,
                Attempt::Locked(_) => None,
            };
            Ok::<_, RepoError>((attempt, credentials))
        })
        .await?;
    let admitted = match attempt {
        Attempt::Admitted(admitted) => admitted,
        Attempt::Locked(until) => return Ok(password_check::locked(refuse(&state, t.locked), until)),
    };
    // An unknown e-mail, or a member who may not sign in, costs the same check against nothing.
    let (member, stored) = match credentials {
        Some(Credentials {
            member,
            password_hash: Some(hash),
            ..
        }) if member.state == MemberState::Active => (Some(member), Some(hash)),
        _ => (None, None),
    };
    let right = slot.verify(stored, form.password).await?;
    let Some(member) = member.filter(|_| right) else {
        return Ok(refuse(&state, t.wrong_credentials));
    };
    let second_factor_due = member.two_factor;
    open_session(&state, &headers, &client, &member, second_factor_due, None, Some(admitted)).await
}

/// What a password attempt counts against: the account, and the client's address when known.
fn scopes<'a>(email: &'a Email, address: Option<&'a str>) -> Vec<Scope<'a>> {
    let mut scopes = vec![Scope::Account(email)];
    scopes.extend(address.map(Scope::Address));
    scopes
}

/// Starts a session for `member` (replacing `previous`, the password step's), sets its cookie and
/// the member's language, and leads on: to the code when `second_factor_due`, else the dashboard.
/// The attempt `admitted` for the step just passed is undone; once no step is due, the account's
/// failures are forgotten.
pub async fn open_session(
    state: &AppState,
    headers: &HeaderMap,
    client: &ClientAddr,
    member: &Member,
    second_factor_due: bool,
    previous: Option<[u8; 32]>,
    admitted: Option<Admitted>,
) -> PortalResult<Response> {
    let token = Token::generate();
    let csrf = Token::generate();
    let origin = Origin {
        ip: client.for_audit(),
        user_agent: headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned),
    };
    let now = chrono::Utc::now();
    let (m, hash) = (member.clone(), token.hash());
    let acting = audit::Acting {
        actor: audit::Actor::Member {
            id: member.id.clone(),
            email: member.email.clone(),
        },
        ip: client.for_audit(),
    };
    state
        .store
        .write(move |tx| {
            if let Some(previous) = previous {
                portal_sessions::end(tx, &previous, now)?;
            }
            portal_sessions::start(tx, &m, &hash, csrf.as_str(), second_factor_due, &origin, now)?;
            if let Some(admitted) = &admitted {
                sign_in_throttle::undo(tx, admitted)?;
            }
            if !second_factor_due {
                sign_in_throttle::succeeded(tx, Scope::Account(&m.email))?;
                audit::record(tx, &m.company_id, &acting.entry(AuditAction::SignedIn, m.id.as_str(), now))?;
            }
            Ok::<_, RepoError>(())
        })
        .await?;
    let to = if second_factor_due { "/portal/login/code" } else { "/portal/" };
    let mut response = Redirect::to(to).into_response();
    let h = response.headers_mut();
    h.append(header::SET_COOKIE, Cookie::Session.set(state, token.as_str(), None));
    if let Some(lang) = member.lang.as_deref() {
        h.append(header::SET_COOKIE, Cookie::Lang.set(state, lang, Some(365 * 24 * 3600)));
    }
    Ok(response)
}

/// The session waiting for its second factor, from the request.
fn pending_session(state: &AppState, parts: &Parts) -> PortalResult<(portal_sessions::PortalSession, [u8; 32])> {
    match session_of(state, parts)? {
        Some((session, hash)) if session.second_factor_due => Ok((session, hash)),
        Some(_) => Err(PortalError::Redirect("/portal/".into())),
        None => Err(PortalError::SignIn),
    }
}

/// `GET /portal/login/code`.
pub async fn code_page(State(state): State<AppState>, parts: Parts) -> PortalResult<Response> {
    let (session, _) = pending_session(&state, &parts)?;
    let lang = portal_lang(&state, &parts.headers);
    Ok(code_form(lang, &session.csrf_token, None))
}

fn code_form(lang: Lang, csrf: &str, notice: Option<Notice<'_>>) -> Response {
    let t = lang.portal();
    let body = html! {
        h1 { (t.second_factor_title) }
        (layout::notice_markup(notice))
        p { (t.second_factor_text) }
        form method="post" action="/portal/login/code" {
            input type="hidden" name="csrf" value=(csrf);
            label for="code" { (t.code) }
            input #code type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required;
            button type="submit" { (t.verify) }
        }
    };
    layout::bare(lang, t.second_factor_title, body)
}

#[derive(Deserialize)]
pub struct Code {
    csrf: String,
    code: String,
}

/// `POST /portal/login/code`: a TOTP code (each step once) or an unused recovery code.
pub async fn code_submit(
    State(state): State<AppState>,
    parts: Parts,
    client: ClientAddr,
    Form(form): Form<Code>,
) -> PortalResult<Response> {
    let (session, hash) = pending_session(&state, &parts)?;
    if !guard::token_matches(&session.csrf_token, &form.csrf) {
        return Err(PortalError::BadForm);
    }
    let lang = portal_lang(&state, &parts.headers);
    let t = lang.portal();
    let member = session.member.clone();
    let now = chrono::Utc::now();
    let (id, email, keys) = (member.id.clone(), member.email.clone(), state.keys.clone());
    let code = form.code;
    // The attempt is counted and the lock checked in the same transaction as the code: one
    // decision, however many codes arrive at once.
    let checked = state
        .store
        .write(move |tx| {
            let admitted = match sign_in_throttle::attempt(tx, &[Scope::Account(&email)], now)? {
                Attempt::Admitted(admitted) => admitted,
                Attempt::Locked(until) => return Ok::<_, RepoError>(Err(until)),
            };
            let ok = membership::spend_second_factor(tx, &keys, &id, &code, now)?;
            Ok(Ok(ok.then_some(admitted)))
        })
        .await?;
    match checked {
        Ok(Some(admitted)) => open_session(&state, &parts.headers, &client, &member, false, Some(hash), Some(admitted)).await,
        Ok(None) => Ok(layout::with_status(
            code_form(lang, &session.csrf_token, Some(Notice::Error(t.wrong_code))),
            StatusCode::UNAUTHORIZED,
        )),
        Err(until) => Ok(password_check::locked(
            code_form(lang, &session.csrf_token, Some(Notice::Error(t.locked))),
            until,
        )),
    }
}

#[derive(Deserialize)]
pub struct SignOut {
    csrf: String,
}

/// `POST /portal/logout`: ends the session on the server, then clears its cookie.
pub async fn sign_out(State(state): State<AppState>, signed: Signed, Form(form): Form<SignOut>) -> PortalResult<Response> {
    signed.check_csrf(&form.csrf)?;
    let (hash, now) = (signed.token_hash, chrono::Utc::now());
    state.store.write(move |tx| portal_sessions::end(tx, &hash, now)).await?;
    let mut response = Redirect::to("/portal/login?flash=signed_out").into_response();
    response.headers_mut().append(header::SET_COOKIE, Cookie::Session.clear(&state));
    Ok(response)
}
