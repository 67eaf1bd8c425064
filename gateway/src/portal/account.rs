//! The member's own account: password change (their other sessions end), active sessions with
//! revoke, two-factor enrolment (TOTP with QR code and recovery codes shown once), replacement
//! (their other sessions end too) and removal, and the portal's language. The current password these changes ask for is checked
//! under the sign-in throttle (see `password_check`).

use super::cookies::Cookie;
use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::invitation::password_problem;
use super::layout::{self, Notice};
use super::password_check::{self, Checked};
use super::signed::Signed;
use crate::i18n::labels;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use common::crypto::password::Password;
use common::crypto::recovery_codes::{self, RecoveryKeys};
use common::crypto::totp;
use common::membership::{self, EnrolmentRefused};
use common::store::{audit, members, portal_sessions, sign_in_throttle, RepoError};
use domain::ids::PortalSessionId;
use domain::team::AuditAction;
use maud::{html, PreEscaped};
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// `GET /portal/account`.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(q): Query<Flash>) -> PortalResult<Response> {
    let t = signed.lang.portal();
    let notice = match q.flash.as_deref() {
        Some("password") => Some(Notice::Ok(t.password_changed)),
        Some("revoked") => Some(Notice::Ok(t.session_revoked)),
        Some("two_factor_off") => Some(Notice::Ok(t.two_factor_disabled)),
        _ => None,
    };
    render(&state, &signed, notice, StatusCode::OK).await
}

async fn render(state: &AppState, signed: &Signed, notice: Option<Notice<'_>>, status: StatusCode) -> PortalResult<Response> {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let (member, now) = (signed.member().id.clone(), chrono::Utc::now());
    let sessions = state.store.read(move |c| portal_sessions::list(c, &member, now)).await?;
    let csrf = &signed.session.csrf_token;
    let body = html! {
        @if signed.must_enrol() {
            p.flash.error role="alert" { (t.two_factor_required) " " a href="/portal/account/two-factor" { (t.two_factor_enrol) } }
        }
        h2 { (t.change_password) }
        form method="post" action="/portal/account/password" data-testid="password-form" {
            input type="hidden" name="csrf" value=(csrf);
            label for="currentPassword" { (t.current_password) }
            input #currentPassword type="password" name="currentPassword" autocomplete="current-password" required;
            label for="password" { (t.new_password) }
            input #password type="password" name="password" autocomplete="new-password" minlength="12" required aria-describedby="password-rule";
            p.hint #password-rule { (t.password_rule) }
            label for="passwordConfirm" { (t.password_confirm) }
            input #passwordConfirm type="password" name="passwordConfirm" autocomplete="new-password" minlength="12" required;
            button type="submit" { (t.save) }
        }
        h2 { (t.two_factor) }
        @if signed.member().two_factor {
            p data-testid="two-factor-state" { (t.two_factor_on) }
            p { a.button.secondary href="/portal/account/two-factor" data-testid="two-factor-replace-link" { (t.two_factor_replace) } }
            @if signed.company.two_factor_required {
                p.muted { (t.two_factor_mandatory) }
            } @else {
                form method="post" action="/portal/account/two-factor/disable" {
                    input type="hidden" name="csrf" value=(csrf);
                    label for="disablePassword" { (t.current_password) }
                    input #disablePassword type="password" name="currentPassword" autocomplete="current-password" required;
                    label for="disableCode" { (t.current_code) }
                    input #disableCode type="text" name="currentCode" autocomplete="one-time-code" required;
                    button.danger type="submit" { (t.two_factor_disable) }
                }
            }
        } @else {
            p data-testid="two-factor-state" { (t.two_factor_off) }
            p { a.button href="/portal/account/two-factor" data-testid="two-factor-enrol" { (t.two_factor_enrol) } }
        }
        h2 { (t.language) }
        form method="post" action="/portal/account/language" {
            input type="hidden" name="csrf" value=(csrf);
            label for="lang" { (t.language) }
            select #lang name="lang" {
                option value="fr" selected[lang.code() == "fr"] { "Français" }
                option value="en" selected[lang.code() == "en"] { "English" }
            }
            button type="submit" { (t.save) }
        }
        h2 { (t.sessions) }
        table {
            thead { tr { th scope="col" { (t.started) } th scope="col" { (t.last_seen) } th scope="col" { (t.address) } th scope="col" { (t.browser) } th {} } }
            tbody {
                @for s in &sessions {
                    tr data-testid="session-row" {
                        td { (labels::date(s.created_at, lang)) }
                        td { (labels::date(s.last_seen_at, lang)) }
                        td { (s.ip.as_deref().unwrap_or("—")) }
                        td { (s.user_agent.as_deref().unwrap_or("—")) }
                        td {
                            @if s.id == signed.session.id {
                                span.muted { (t.this_session) }
                            } @else {
                                form method="post" action=(format!("/portal/account/sessions/{}/revoke", s.id)) {
                                    input type="hidden" name="csrf" value=(csrf);
                                    button.secondary type="submit" data-testid="session-revoke" { (t.revoke) }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(layout::with_status(
        layout::page(signed, "/portal/account", t.account_title, notice, body),
        status,
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangePassword {
    csrf: String,
    current_password: String,
    password: String,
    password_confirm: String,
}

/// `POST /portal/account/password`: the new password's rules first, so that a typo in it costs
/// no attempt; then the current password, under the account's throttle.
pub async fn change_password(State(state): State<AppState>, signed: Signed, Form(form): Form<ChangePassword>) -> PortalResult<Response> {
    signed.check_csrf(&form.csrf)?;
    let (lang, t) = (signed.lang, signed.lang.portal());
    let refuse = |notice, status| render(&state, &signed, Some(Notice::Error(notice)), status);
    let chosen = match Password::parse(&form.password) {
        Ok(p) => p,
        Err(e) => return refuse(password_problem(&e, lang), StatusCode::UNPROCESSABLE_ENTITY).await,
    };
    if form.password != form.password_confirm {
        return refuse(t.passwords_differ, StatusCode::UNPROCESSABLE_ENTITY).await;
    }
    let (hash, admitted) = match password_check::check_then_hash(&state, signed.member(), form.current_password, chosen).await? {
        Checked::Right { value, admitted } => (value, admitted),
        Checked::Wrong => return refuse(t.wrong_password, StatusCode::UNPROCESSABLE_ENTITY).await,
        Checked::Locked(until) => return Ok(password_check::locked(refuse(t.locked, StatusCode::OK).await?, until)),
    };
    let (id, company, keep, acting, now) = (
        signed.member().id.clone(),
        signed.company.id.clone(),
        signed.token_hash,
        signed.acting(),
        chrono::Utc::now(),
    );
    state
        .store
        .write(move |tx| {
            sign_in_throttle::undo(tx, &admitted)?;
            members::set_password(tx, &id, &hash)?;
            portal_sessions::end_others(tx, &id, &keep, now)?;
            audit::record(tx, &company, &acting.entry(AuditAction::PasswordChanged, id.as_str(), now))
        })
        .await?;
    Ok(Redirect::to("/portal/account?flash=password").into_response())
}

#[derive(Deserialize)]
pub struct Csrf {
    csrf: String,
}

/// `POST /portal/account/sessions/{id}/revoke`: ends one of the member's other sessions.
pub async fn revoke_session(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<Csrf>,
) -> PortalResult<Response> {
    signed.check_csrf(&form.csrf)?;
    let id: PortalSessionId = id.parse().map_err(|_| PortalError::NotFound)?;
    let (member, company, acting, now) = (
        signed.member().id.clone(),
        signed.company.id.clone(),
        signed.acting(),
        chrono::Utc::now(),
    );
    state
        .store
        .write(move |tx| {
            portal_sessions::revoke(tx, &member, &id, now)?;
            audit::record(tx, &company, &acting.entry(AuditAction::SessionRevoked, id.as_str(), now))
        })
        .await?;
    Ok(Redirect::to("/portal/account?flash=revoked").into_response())
}

#[derive(Deserialize)]
pub struct Language {
    csrf: String,
    lang: String,
}

/// `POST /portal/account/language`: kept on the member and in a cookie.
pub async fn set_language(State(state): State<AppState>, signed: Signed, Form(form): Form<Language>) -> PortalResult<Response> {
    signed.check_csrf(&form.csrf)?;
    let lang = super::lang::parse(&form.lang).ok_or(PortalError::BadForm)?;
    let id = signed.member().id.clone();
    let code = lang.code();
    state.store.write(move |tx| members::set_lang(tx, &id, Some(code))).await?;
    let mut response = Redirect::to("/portal/account").into_response();
    response
        .headers_mut()
        .append(header::SET_COOKIE, Cookie::Lang.set(&state, code, Some(365 * 24 * 3600)));
    Ok(response)
}

/// The secret being enrolled travels sealed in the form (bound to the member, with when it was
/// shown), so nothing is stored before the member proves their app has it, and a form kept
/// beyond `membership::ENROLMENT_VALIDITY` enrols nothing.
fn seal_enrolment(state: &AppState, signed: &Signed, secret: &totp::TotpSecret) -> String {
    let sealed = membership::seal_enrolment(&state.keys, &signed.member().id, secret, chrono::Utc::now());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sealed)
}

fn open_enrolment(state: &AppState, signed: &Signed, sealed: &str) -> Result<totp::TotpSecret, EnrolmentRefused> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sealed)
        .map_err(|_| EnrolmentRefused::Invalid)?;
    membership::open_enrolment(&state.keys, &signed.member().id, &bytes, chrono::Utc::now())
}

/// The enrolment page: a new secret's QR code and key, and the form confirming it with a code.
/// A member who already has a second factor replaces it, and proves it is them first: the
/// current password and a code of the current factor (or a recovery code).
fn enrolment_page(
    state: &AppState,
    signed: &Signed,
    secret: &totp::TotpSecret,
    notice: Option<Notice<'_>>,
    status: StatusCode,
) -> PortalResult<Response> {
    let t = signed.lang.portal();
    let replacing = signed.member().two_factor;
    let url = totp::otpauth_url(secret, signed.member().email.as_str()).map_err(|e| PortalError::Internal(e.to_string()))?;
    let qr = totp::qr_svg(&url).map_err(|e| PortalError::Internal(e.to_string()))?;
    let body = html! {
        (layout::notice_markup(notice))
        @if replacing {
            p data-testid="two-factor-replace" { (t.two_factor_replace_text) }
        }
        p { (t.two_factor_scan) }
        // The SVG is our own drawing of the QR modules: numbers and fixed markup only.
        div.qr role="img" aria-label=(t.two_factor_enrol) { (PreEscaped(qr)) }
        p { (t.two_factor_key) " : " code data-testid="totp-secret" { (secret.base32()) } }
        form method="post" action="/portal/account/two-factor" {
            input type="hidden" name="csrf" value=(signed.session.csrf_token);
            input type="hidden" name="enrolment" value=(seal_enrolment(state, signed, secret));
            @if replacing {
                label for="currentPassword" { (t.current_password) }
                input #currentPassword type="password" name="currentPassword" autocomplete="current-password" required;
                label for="currentCode" { (t.current_code) }
                input #currentCode type="text" name="currentCode" autocomplete="one-time-code" required;
            }
            label for="code" { (if replacing { t.new_code } else { t.code }) }
            input #code type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required;
            button type="submit" { (t.verify) }
        }
    };
    let title = if replacing { t.two_factor_replace } else { t.two_factor_enrol };
    Ok(layout::with_status(
        layout::page(signed, "/portal/account", title, None, body),
        status,
    ))
}

/// `GET /portal/account/two-factor`: a new secret, its QR code and key (to replace the current
/// one, for a member who has one).
pub async fn enrol_page(State(state): State<AppState>, signed: Signed) -> PortalResult<Response> {
    let t = signed.lang.portal();
    let notice = signed.must_enrol().then_some(Notice::Error(t.two_factor_required));
    enrolment_page(&state, &signed, &totp::TotpSecret::generate(), notice, StatusCode::OK)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Enrol {
    csrf: String,
    enrolment: String,
    code: String,
    /// Asked when a second factor is replaced.
    #[serde(default)]
    current_password: String,
    #[serde(default)]
    current_code: String,
}

/// What the proof of the current factor found, in the write that enrols the new one.
enum Replaced {
    Done,
    /// The password was right but the code of the current factor was not.
    WrongCode,
    /// The member enrolled (elsewhere) after this form was shown without asking for proof.
    Changed,
}

/// `POST /portal/account/two-factor`: the first code proves the app holds the new secret; a
/// factor already enrolled is replaced only with the current password (under the sign-in
/// throttle, like every current password) and a code of that factor; the recovery codes are
/// shown once.
pub async fn enrol(State(state): State<AppState>, signed: Signed, Form(form): Form<Enrol>) -> PortalResult<Response> {
    signed.check_csrf(&form.csrf)?;
    let t = signed.lang.portal();
    let secret = match open_enrolment(&state, &signed, &form.enrolment) {
        Ok(secret) => secret,
        Err(_) => {
            let notice = Some(Notice::Error(t.enrolment_expired));
            return enrolment_page(
                &state,
                &signed,
                &totp::TotpSecret::generate(),
                notice,
                StatusCode::UNPROCESSABLE_ENTITY,
            );
        }
    };
    let now = chrono::Utc::now();
    let refuse = |notice, status| enrolment_page(&state, &signed, &secret, Some(Notice::Error(notice)), status);
    let Some(step) = totp::verify(&secret, &form.code, now, None) else {
        return refuse(t.wrong_code, StatusCode::UNPROCESSABLE_ENTITY);
    };
    let replacing = signed.member().two_factor;
    let admitted = if replacing {
        if form.current_password.is_empty() || form.current_code.trim().is_empty() {
            return refuse(t.wrong_password_or_code, StatusCode::UNPROCESSABLE_ENTITY);
        }
        match password_check::check(&state, signed.member(), form.current_password).await? {
            Checked::Right { admitted, .. } => Some(admitted),
            Checked::Wrong => return refuse(t.wrong_password_or_code, StatusCode::UNPROCESSABLE_ENTITY),
            Checked::Locked(until) => return Ok(password_check::locked(refuse(t.locked, StatusCode::OK)?, until)),
        }
    } else {
        None
    };
    let (codes, hashes) = recovery_codes::generate(&RecoveryKeys::of(&state.keys));
    let sealed = membership::seal_totp(&state.keys, &signed.member().id, &secret);
    let (id, company, acting, keys, keep) = (
        signed.member().id.clone(),
        signed.company.id.clone(),
        signed.acting(),
        state.keys.clone(),
        signed.token_hash,
    );
    let current_code = form.current_code;
    let replaced = state
        .store
        .write(move |tx| {
            let has_factor = members::credentials_of(tx, &id)?.totp_secret_sealed.is_some();
            match &admitted {
                // The attempt counted for the password stays counted when the code is wrong.
                Some(admitted) => {
                    if !membership::spend_second_factor(tx, &keys, &id, &current_code, now)? {
                        return Ok::<_, RepoError>(Replaced::WrongCode);
                    }
                    sign_in_throttle::undo(tx, admitted)?;
                    // A session opened with the factor replaced (perhaps by whoever held it)
                    // ends with it, as with a password change.
                    portal_sessions::end_others(tx, &id, &keep, now)?;
                }
                None if has_factor => return Ok(Replaced::Changed),
                None => {}
            }
            members::enable_two_factor(tx, &id, &sealed, step, &hashes)?;
            audit::record(tx, &company, &acting.entry(AuditAction::TwoFactorEnabled, id.as_str(), now))?;
            Ok(Replaced::Done)
        })
        .await?;
    match replaced {
        Replaced::Done => {}
        Replaced::WrongCode => return refuse(t.wrong_password_or_code, StatusCode::UNPROCESSABLE_ENTITY),
        Replaced::Changed => {
            return Ok(layout::with_status(
                layout::page(
                    &signed,
                    "/portal/account",
                    t.two_factor,
                    Some(Notice::Error(t.two_factor_changed)),
                    html! {
                        p { a href="/portal/account/two-factor" { (t.two_factor_replace) } }
                    },
                ),
                StatusCode::CONFLICT,
            ))
        }
    }
    let body = html! {
        h2 { (t.recovery_codes) }
        ul.codes data-testid="recovery-codes" { @for c in &codes { li { code { (c) } } } }
        p { a href="/portal/account" { (t.account_title) } }
    };
    Ok(layout::page(
        &signed,
        "/portal/account",
        t.two_factor,
        Some(Notice::Ok(t.two_factor_enabled)),
        body,
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Disable {
    csrf: String,
    current_password: String,
    #[serde(default)]
    current_code: String,
}

/// `POST /portal/account/two-factor/disable`: with the password and a code of the factor (or a
/// recovery code), as a replacement asks, so that a stolen session with the password cannot
/// remove the factor and enrol its own; refused where the company requires a second factor.
pub async fn disable(State(state): State<AppState>, signed: Signed, Form(form): Form<Disable>) -> PortalResult<Response> {
    signed.check_csrf(&form.csrf)?;
    let t = signed.lang.portal();
    if signed.company.two_factor_required {
        return Err(PortalError::Forbidden);
    }
    let refuse = |notice, status| render(&state, &signed, Some(Notice::Error(notice)), status);
    if form.current_code.trim().is_empty() {
        return refuse(t.wrong_password_or_code, StatusCode::UNPROCESSABLE_ENTITY).await;
    }
    let admitted = match password_check::check(&state, signed.member(), form.current_password).await? {
        Checked::Right { admitted, .. } => admitted,
        Checked::Wrong => return refuse(t.wrong_password_or_code, StatusCode::UNPROCESSABLE_ENTITY).await,
        Checked::Locked(until) => return Ok(password_check::locked(refuse(t.locked, StatusCode::OK).await?, until)),
    };
    let (id, company, acting, keys, now) = (
        signed.member().id.clone(),
        signed.company.id.clone(),
        signed.acting(),
        state.keys.clone(),
        chrono::Utc::now(),
    );
    let code = form.current_code;
    let removed = state
        .store
        .write(move |tx| {
            // The attempt counted for the password stays counted when the code is wrong.
            if !membership::spend_second_factor(tx, &keys, &id, &code, now)? {
                return Ok::<_, RepoError>(false);
            }
            sign_in_throttle::undo(tx, &admitted)?;
            members::disable_two_factor(tx, &id)?;
            audit::record(tx, &company, &acting.entry(AuditAction::TwoFactorDisabled, id.as_str(), now))?;
            Ok(true)
        })
        .await?;
    if !removed {
        return refuse(t.wrong_password_or_code, StatusCode::UNPROCESSABLE_ENTITY).await;
    }
    Ok(Redirect::to("/portal/account?flash=two_factor_off").into_response())
}
