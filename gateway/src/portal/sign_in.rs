//! Signing in and out (PORTAL.md, Security): e-mail and password, then a TOTP or recovery code
//! when the member enrolled one; the same answer for an unknown e-mail and a wrong password;
//! failures throttled per account and per address; a new session id at each step.

use super::cookies::Cookie;
use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::guard;
use super::lang::portal_lang;
use super::layout::{self, Notice};
use super::signed::{session_of, Signed};
use crate::client_addr::ClientAddr;
use crate::i18n::Lang;
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use common::crypto::session_token::Token;
use common::crypto::{password, recovery_codes, totp};
use common::membership;
use common::store::members::{self, Credentials, Member, MemberState};
use common::store::portal_sessions::{self, Origin};
use common::store::sign_in_throttle::{self, Scope};
use common::store::{audit, RepoError};
use common::team::{AuditAction, Email};
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

/// `POST /portal/login`.
pub async fn submit(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: ClientAddr,
    Form(form): Form<SignIn>,
) -> PortalResult<Response> {
    check_form_token(&state, &headers, &form.form_token)?;
    let lang = portal_lang(&state, &headers);
    let t = lang.portal();
    let wrong = |state: &AppState, notice| form_page(state, &headers, lang, Some(Notice::Error(notice)), StatusCode::UNAUTHORIZED);
    let Ok(email) = Email::parse(&form.email) else {
        return Ok(wrong(&state, t.wrong_credentials));
    };
    let now = chrono::Utc::now();
    let (e, ip) = (email.clone(), client.0);
    let (locked, credentials) = state
        .store
        .read(move |c| {
            let mut scopes = vec![Scope::Account(&e)];
            scopes.extend(ip.map(Scope::Address));
            Ok::<_, RepoError>((sign_in_throttle::locked_until(c, &scopes, now)?, members::credentials(c, &e)?))
        })
        .await?;
    if locked.is_some() {
        return Ok(layout::with_status(wrong(&state, t.locked), StatusCode::TOO_MANY_REQUESTS));
    }
    let Some(member) = check_password(credentials, form.password).await? else {
        let (e, ip) = (email.clone(), client.0);
        state
            .store
            .write(move |tx| {
                sign_in_throttle::failed(tx, Scope::Account(&e), now)?;
                ip.map(|ip| sign_in_throttle::failed(tx, Scope::Address(ip), now)).transpose()?;
                Ok::<_, RepoError>(())
            })
            .await?;
        return Ok(wrong(&state, t.wrong_credentials));
    };
    let second_factor_due = member.two_factor;
    let response = open_session(&state, &headers, &client, &member, second_factor_due, None).await?;
    Ok(response)
}

/// The member if `password` is theirs and they may sign in; an unknown e-mail costs the same
/// time as a wrong password. Argon2 runs off the async threads.
async fn check_password(credentials: Option<Credentials>, password: String) -> PortalResult<Option<Member>> {
    tokio::task::spawn_blocking(move || match credentials {
        Some(Credentials {
            member,
            password_hash: Some(hash),
            ..
        }) if member.state == MemberState::Active => password::verify(&hash, &password).then_some(member),
        _ => {
            password::verify_against_nothing(&password);
            None
        }
    })
    .await
    .map_err(|e| PortalError::Internal(e.to_string()))
}

/// Starts a session for `member` (replacing `previous`, the password step's), sets its cookie and
/// the member's language, and leads on: to the code when `second_factor_due`, else the dashboard.
pub async fn open_session(
    state: &AppState,
    headers: &HeaderMap,
    client: &ClientAddr,
    member: &Member,
    second_factor_due: bool,
    previous: Option<[u8; 32]>,
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
    let accepted = state
        .store
        .write(move |tx| {
            if sign_in_throttle::locked_until(tx, &[Scope::Account(&email)], now)?.is_some() {
                return Ok::<_, RepoError>(None);
            }
            let credentials = members::credentials_of(tx, &id)?;
            let secret = credentials
                .totp_secret_sealed
                .as_deref()
                .and_then(|s| membership::open_totp(&keys, &id, s));
            let by_totp = match secret.and_then(|s| totp::verify(&s, &code, now, credentials.totp_last_step)) {
                Some(step) => members::use_totp_step(tx, &id, step)?,
                None => false,
            };
            let ok = by_totp || members::use_recovery_code(tx, &id, &recovery_codes::hash(&code))?;
            if !ok {
                sign_in_throttle::failed(tx, Scope::Account(&email), now)?;
            }
            Ok(Some(ok))
        })
        .await?;
    match accepted {
        Some(true) => open_session(&state, &parts.headers, &client, &member, false, Some(hash)).await,
        Some(false) => Ok(layout::with_status(
            code_form(lang, &session.csrf_token, Some(Notice::Error(t.wrong_code))),
            StatusCode::UNAUTHORIZED,
        )),
        None => Ok(layout::with_status(
            code_form(lang, &session.csrf_token, Some(Notice::Error(t.locked))),
            StatusCode::TOO_MANY_REQUESTS,
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
