//! HTML of the journey: the capture form, the "being checked" and thank-you states, and the pages
//! for an unknown, expired or already used link. Rendered on the server in the customer's
//! language; the thank-you page never reveals the verdict (the client decides what to tell).

use super::assets::{CSS, JS};
use super::templates;
use super::{check_address, check_session, no_such_session};
use crate::client_addr::ClientAddr;
use crate::error::ApiError;
use crate::html;
use crate::i18n::journey::Strings;
use crate::i18n::{privacy, Lang};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use common::document::accepted;
use common::store::verifications::{self, Journey};
use common::store::RepoError;
use domain::vocabulary::{DocumentCategory, JourneySide, VerificationStatus};
use maud::Markup;
use std::sync::OnceLock;

/// The Content-Security-Policy of every journey page: nothing but the inline CSS and JS by hash
/// (and the company's theme, see `templates::theme`), images from the same origin (the logo) and
/// previews from `blob:` URLs, requests to the same origin, no framing, no form posts elsewhere.
fn content_security_policy(theme: Option<&str>) -> String {
    fn hash(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(ring::digest::digest(&ring::digest::SHA256, s.as_bytes()))
    }
    static FIXED: OnceLock<(String, String)> = OnceLock::new();
    let (js, css) = FIXED.get_or_init(|| (hash(JS), hash(CSS)));
    let theme = theme.map(|css| format!(" 'sha256-{}'", hash(css))).unwrap_or_default();
    format!(
        "default-src 'none'; script-src 'sha256-{js}'; style-src 'sha256-{css}'{theme}; img-src 'self' blob:; connect-src 'self'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// A page as the templates made it, with its head.
struct Page<'a> {
    status: StatusCode,
    title: &'a str,
    csrf: Option<&'a str>,
    body: Markup,
    script: bool,
    theme: Option<String>,
    refresh_without_script: bool,
}

fn respond(lang: Lang, page: Page<'_>) -> Response {
    let t = lang.strings();
    let csp = content_security_policy(page.theme.as_deref());
    let head = templates::Head {
        title: page.title,
        csrf: page.csrf,
        script: page.script,
        theme: page.theme.as_deref(),
        refresh_without_script: page.refresh_without_script,
    };
    let html = templates::document(t, &head, page.body);
    let mut response = html::page(page.status, lang, &csp, html.into_string());
    response
        .headers_mut()
        .insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// What every page of a session shows of its company: its logo and name, its colours.
fn brand(token: &str, journey: &Journey) -> Markup {
    templates::brand(&journey.company, &format!("/v/{token}/logo"))
}

fn theme(journey: &Journey) -> Option<String> {
    journey.company.settings.accent_color.map(templates::theme)
}

/// "<display name> — vérification d'identité" (or "de document" for an administrative one).
fn session_title(t: &Strings, journey: &Journey) -> String {
    let suffix = match journey.category {
        DocumentCategory::Identite => t.title_suffix,
        DocumentCategory::Administratif => t.title_suffix_document,
    };
    format!("{} — {suffix}", journey.company.display_name())
}

/// A page with a title and one sentence: unknown links and errors (no session, so no company).
pub fn message(status: StatusCode, lang: Lang, title: &str, text: &str) -> Response {
    let page_title = format!("{title} — Sceau");
    let page = Page {
        status,
        title: &page_title,
        csrf: None,
        body: templates::message(title, text),
        script: false,
        theme: None,
        refresh_without_script: false,
    };
    respond(lang, page)
}

/// The page of a session that has ended (expired, or its link used), with the test banner of a
/// test-mode session, under its company's name.
pub(super) fn ended(status: StatusCode, lang: Lang, token: &str, journey: &Journey, title: &str, text: &str) -> Response {
    let t = lang.strings();
    let body = templates::ended(t, journey.mode, brand(token, journey), title, text, &end(journey));
    let page_title = session_title(t, journey);
    let page = Page {
        status,
        title: &page_title,
        csrf: None,
        body,
        script: false,
        theme: theme(journey),
        refresh_without_script: false,
    };
    respond(lang, page)
}

/// The reference and the way back every end of the session shows.
fn end(journey: &Journey) -> templates::End<'_> {
    templates::End {
        reference: journey.id.reference(),
        return_url: journey.return_url.as_ref().map(|url| url.as_str()),
    }
}

/// The data the script needs, as JSON (see `templates::configuration`).
fn config(t: &Strings, token: &str, journey: &Journey, polling: bool) -> String {
    let sides: Vec<serde_json::Value> = JourneySide::of(journey.category)
        .iter()
        .map(|file| serde_json::json!({ "id": file.side, "required": file.required }))
        .collect();
    let types: Vec<&str> = accepted(journey.category).iter().map(|kind| kind.content_type()).collect();
    let cfg = serde_json::json!({
        "base": format!("/v/{token}"),
        "sides": sides,
        "uploaded": journey.uploaded,
        "types": types,
        "maxBytes": super::uploads::MAX_FILE_BYTES,
        "polling": polling,
        "t": {
            "uploading": t.uploading, "uploaded": t.uploaded, "errType": t.err_type(journey.category), "errSize": t.err_size,
            "errMissing": t.err_missing, "errNetwork": t.err_network, "errBusy": t.err_busy,
            "retake": t.retake, "warnKeep": t.warn_keep,
        },
    });
    cfg.to_string()
}

/// What the form says after a plain form post: each file's state, a message, the status.
pub struct Outcome<'a> {
    pub states: templates::SideStates,
    pub message: Option<&'a str>,
    pub status: StatusCode,
}

impl Outcome<'_> {
    /// The form as opened: the files the session holds already.
    pub fn opened(journey: &Journey) -> Self {
        Self {
            states: templates::SideStates::received(&journey.uploaded),
            message: None,
            status: StatusCode::OK,
        }
    }
}

/// The capture form of an open session.
pub fn form(lang: Lang, token: &str, journey: &Journey, csrf: &str, page_url: &str, outcome: &Outcome<'_>) -> Response {
    let t = lang.strings();
    let intro = match journey.category {
        DocumentCategory::Identite => t.intro_identity,
        DocumentCategory::Administratif => t.intro_document,
    };
    let notice = privacy::notice(lang, &journey.company, journey.category);
    let config = config(t, token, journey, false);
    let end = end(journey);
    let body = templates::form(
        t,
        &templates::FormPage {
            mode: journey.mode,
            category: journey.category,
            brand: brand(token, journey),
            intro,
            notice: &notice,
            config: &config,
            end: &end,
            handoff: &handoff(t, page_url),
            action: &format!("/v/{token}"),
            csrf,
            states: &outcome.states,
            message: outcome.message,
        },
    );
    let title = session_title(t, journey);
    let page = Page {
        status: outcome.status,
        title: &title,
        csrf: Some(csrf),
        body,
        script: true,
        theme: theme(journey),
        refresh_without_script: false,
    };
    respond(lang, page)
}

/// The QR code of the page's own link, offered on a wide screen to go on on a phone (markup of
/// fixed text and numbers only, see `common::qr::svg`); empty if the link could not be encoded.
fn handoff(t: &Strings, page_url: &str) -> String {
    common::qr::svg(page_url, 4)
        .map(|svg| {
            let label = maud::html! { (t.handoff_qr_label) }.into_string().replace('"', "&quot;");
            svg.replacen(
                "<svg ",
                &format!("<svg data-testid=\"journey-handoff-qr\" role=\"img\" aria-label=\"{label}\" "),
                1,
            )
        })
        .unwrap_or_default()
}

/// A submitted session: the "being checked" state, polling until the result is recorded.
pub fn checking(lang: Lang, token: &str, journey: &Journey) -> Response {
    let t = lang.strings();
    let body = templates::checking(
        t,
        journey.mode,
        brand(token, journey),
        &config(t, token, journey, true),
        &end(journey),
    );
    let title = session_title(t, journey);
    // The script reads a CSRF meta even when it will not write; an empty one keeps it simple.
    let page = Page {
        status: StatusCode::OK,
        title: &title,
        csrf: Some(""),
        body,
        script: true,
        theme: theme(journey),
        refresh_without_script: true,
    };
    respond(lang, page)
}

pub fn unknown(lang: Lang) -> Response {
    let t = lang.strings();
    message(StatusCode::NOT_FOUND, lang, t.unknown_title, t.unknown_text)
}

/// Too many requests from this session or address: retry after `retry_after` seconds.
fn busy(lang: Lang, retry_after: u64) -> Response {
    let t = lang.strings();
    let mut response = message(StatusCode::TOO_MANY_REQUESTS, lang, t.busy_title, t.err_busy);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after.max(1)));
    response
}

/// The page of a refusal of the session's guards (a rate limit or an unknown link).
pub(super) fn refused(lang: Lang, error: ApiError) -> Response {
    match error.retry_after {
        Some(wait) if error.status == StatusCode::TOO_MANY_REQUESTS => busy(lang, wait),
        _ if error.status == StatusCode::NOT_FOUND => unknown(lang),
        _ => unavailable(lang, error.message),
    }
}

/// The session could not be started for want of disk space: 503, retry later.
fn full(lang: Lang) -> Response {
    let t = lang.strings();
    let error = ApiError::out_of_space("journey page");
    let mut response = message(StatusCode::SERVICE_UNAVAILABLE, lang, t.error_title, t.error_text);
    if let Some(wait) = error.retry_after {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(wait));
    }
    response
}

pub(super) fn unavailable(lang: Lang, error: impl std::fmt::Display) -> Response {
    let t = lang.strings();
    tracing::error!(%error, "journey page");
    message(StatusCode::INTERNAL_SERVER_ERROR, lang, t.error_title, t.error_text)
}

/// The customer journey page behind a verificationUrl.
///
/// Opening the link starts the session. Limited per session (30 openings a minute), then per
/// client address (300 journey requests a minute); an unknown link counts against the address.
#[utoipa::path(
    get,
    path = "/v/{token}",
    operation_id = "journeyPage",
    tag = "Journey",
    params(("token" = String, Path, description = "The token of a verificationUrl.", pattern = "^[A-Za-z0-9]{1,128}$")),
    responses(
        (status = 200, description = "The journey page, or a page saying the link was already used.", body = String, content_type = "text/html"),
        (status = 404, description = "Unknown link.", body = String, content_type = "text/html"),
        (status = 410, description = "Expired link.", body = String, content_type = "text/html"),
        (status = 429, description = "Too many pages from this session or address; `Retry-After` gives the seconds to wait.",
            body = String, content_type = "text/html", headers(("Retry-After" = u64, description = "Seconds to wait before retrying."))),
        (status = 500, description = "The service is unavailable; try again shortly.", body = String, content_type = "text/html"),
        (status = 503, description = "The session cannot be started now (the disk is full); `Retry-After` gives the seconds to wait.",
            body = String, content_type = "text/html", headers(("Retry-After" = u64, description = "Seconds to wait before retrying."))),
    ),
)]
// Opening the link starts the session (`created → started`). The session is looked up read-only
// first: only a real, open session not yet started costs a write.
pub async fn journey(State(state): State<AppState>, headers: HeaderMap, client: ClientAddr, Path(token): Path<String>) -> Response {
    let lang = Lang::from_headers(&headers);
    let t = lang.strings();
    if !super::plausible_token(&token) {
        return refused(lang, no_such_session(&state, &client));
    }
    let lookup = token.clone();
    let found = state
        .store
        .read(move |c| verifications::journey_page(c, &lookup, chrono::Utc::now()))
        .await;
    let journey = match found {
        Ok(Some(journey)) => journey,
        Ok(None) => return refused(lang, no_such_session(&state, &client)),
        Err(e) => return unavailable(lang, e),
    };
    if let Err(limited) = check_session(&state.edge_limits.journey_pages, &journey).and_then(|()| check_address(&state, &client)) {
        return refused(lang, limited);
    }
    let journey = if verifications::needs_opening(&journey) {
        let lookup = token.clone();
        match state
            .store
            .write(move |tx| verifications::open_journey(tx, &lookup, chrono::Utc::now()))
            .await
        {
            Ok(Some(journey)) => journey,
            Ok(None) => return unknown(lang),
            Err(RepoError::Store(e)) if e.is_out_of_space() => return full(lang),
            Err(e) => return unavailable(lang, e),
        }
    } else {
        journey
    };
    match (journey.status, journey.csrf_token.as_deref()) {
        (VerificationStatus::Created | VerificationStatus::Started, Some(csrf)) => {
            let page_url = crate::api::verifications::journey_url(&state.public_base, &token);
            form(lang, &token, &journey, csrf, &page_url, &Outcome::opened(&journey))
        }
        (VerificationStatus::Submitted, _) => checking(lang, &token, &journey),
        (VerificationStatus::Expired, _) => ended(StatusCode::GONE, lang, &token, &journey, t.expired_title, t.expired_text),
        _ => ended(StatusCode::OK, lang, &token, &journey, t.used_title, t.used_text),
    }
}
