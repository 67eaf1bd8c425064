//! `POST /v/{token}`: the journey's form as a browser posts it without the script (multipart,
//! the page's CSRF token in its first field). Each file goes through the upload's own path
//! (`uploads::accept`); the form comes back with each file's state and advice, or, once every
//! required file is there and nothing needs a second look, the journey is submitted and the
//! browser sent to the page, which then shows where it stands.

use super::pages::{self, Outcome};
use super::templates::{SideState, SideStates};
use super::uploads::{self, MAX_FILE_BYTES};
use super::{check_address, check_session};
use crate::client_addr::ClientAddr;
use crate::error::ApiError;
use crate::i18n::journey::Strings;
use crate::i18n::Lang;
use crate::request_id::CurrentRequest;
use crate::state::AppState;
use axum::extract::multipart::{Multipart, MultipartError, MultipartRejection};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use common::store::verifications::{self, Journey};
use domain::vocabulary::{ErrorCode, JourneySide};

/// The largest form: three files of [`MAX_FILE_BYTES`] and the multipart framing around them.
pub const BODY_LIMIT: usize = 3 * MAX_FILE_BYTES + 1_000_000;
/// The longest value of a text field (the CSRF token, the consent box).
const MAX_TEXT_BYTES: usize = 256;

/// The fields of the journey's form, as a browser posts it (`multipart/form-data`), in the page's
/// order: `csrf` first.
#[derive(utoipa::ToSchema)]
#[schema(as = JourneyForm)]
#[allow(dead_code)]
pub struct FormFields {
    /// The page's CSRF token (its hidden field), sent first.
    csrf: String,
    /// The front of an identity document (JPEG, PNG or WebP), if chosen.
    #[schema(value_type = Option<String>, format = Binary)]
    front: Option<Vec<u8>>,
    /// Its back, optional.
    #[schema(value_type = Option<String>, format = Binary)]
    back: Option<Vec<u8>>,
    /// The customer's selfie.
    #[schema(value_type = Option<String>, format = Binary)]
    selfie: Option<Vec<u8>>,
    /// The administrative document (also a one-page PDF or TIFF).
    #[schema(value_type = Option<String>, format = Binary)]
    document: Option<Vec<u8>>,
    /// `true` when the consent box to the face comparison is ticked.
    #[schema(rename = "biometricConsent")]
    biometric_consent: Option<bool>,
}

/// Send the journey's files by a plain form post (without the page's script).
///
/// What the page's form posts when its script does not run: the files chosen, replacing earlier
/// ones, each checked as an upload is. The form comes back (200) with each file's state and the
/// quick look's advice, or (400) with why a file was refused or which one is missing; once every
/// required file is there and nothing new needs a second look, the journey is submitted and the
/// answer is 303 to the page. Same origin rules and limits as the uploads.
#[utoipa::path(
    post,
    path = "/v/{token}",
    operation_id = "postJourneyForm",
    tag = "Journey",
    params(("token" = String, Path, description = "The token of a verificationUrl.", pattern = "^[A-Za-z0-9]{1,128}$")),
    request_body(content = FormFields, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The form again, with each file's state and advice.", body = String, content_type = "text/html"),
        (status = 303, description = "Submitted: the page, which shows where the journey stands.",
            headers(("Location" = String, description = "The journey page."))),
        (status = 400, description = "The form again, saying which file was refused or is missing.", body = String, content_type = "text/html"),
        (status = 403, description = "Not posted by the journey page (another site, or a wrong CSRF token).", body = String, content_type = "text/html"),
        (status = 404, description = "Unknown link.", body = String, content_type = "text/html"),
        (status = 409, description = "The link has ended (expired, or already used): the page saying so.", body = String, content_type = "text/html"),
        (status = 413, description = "More than the form takes (three files of 10 MB).", body = String, content_type = "text/html"),
        (status = 429, description = "Too many requests from this session or address; `Retry-After` gives the seconds to wait.",
            body = String, content_type = "text/html", headers(("Retry-After" = u64, description = "Seconds to wait before retrying."))),
        (status = 500, description = "The service is unavailable; try again shortly.", body = String, content_type = "text/html"),
        (status = 503, description = "The files cannot be checked now; `Retry-After` gives the seconds to wait.",
            body = String, content_type = "text/html", headers(("Retry-After" = u64, description = "Seconds to wait before retrying."))),
    ),
)]
pub async fn post(
    State(state): State<AppState>,
    headers: HeaderMap,
    client: ClientAddr,
    CurrentRequest(request_id): CurrentRequest,
    Path(token): Path<String>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    let lang = Lang::from_headers(&headers);
    let t = lang.strings();
    let journey = match admit(&state, &headers, &client, &token).await {
        Ok(journey) => journey,
        Err(refusal) => return refusal,
    };
    if !journey.is_open() {
        return ended(lang, &token, &journey);
    }
    let Ok(mut multipart) = multipart else {
        return pages::message(StatusCode::BAD_REQUEST, lang, t.form_refused_title, t.form_refused_text);
    };
    if let Err(refusal) = read_csrf(&mut multipart, &journey).await {
        return refusal.into_page(lang);
    }
    let mut states = SideStates::default();
    let mut consent = false;
    let mut new_advice = false;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => return Unread::from(error).into_page(lang),
        };
        let name = field.name().unwrap_or_default().to_owned();
        if name == "biometricConsent" {
            consent = matches!(read_text(field).await, Ok(value) if value == "true");
            continue;
        }
        let Some(side) = name.parse::<JourneySide>().ok().filter(|side| side.belongs_to(journey.category)) else {
            continue;
        };
        let bytes = match read_file(field).await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(Unread::TooLarge) => {
                states.set(side, refused(t, &journey, ErrorCode::DocumentTooLarge));
                continue;
            }
            Err(other) => return other.into_page(lang),
        };
        match uploads::accept(&state, &journey, side, &bytes, lang).await {
            Ok(uploaded) => {
                new_advice |= !uploaded.warnings.is_empty();
                let warnings = uploaded.warnings.iter().map(|w| w.message).collect();
                states.set(
                    side,
                    SideState {
                        received: true,
                        error: None,
                        warnings,
                    },
                );
            }
            Err(error) if error.code == ErrorCode::InvalidState => return ended(lang, &token, &journey),
            Err(error) if matches!(error.code, ErrorCode::ServiceUnavailable | ErrorCode::RateLimited) => {
                states.set(side, refused(t, &journey, error.code));
            }
            Err(error) if error.status.is_server_error() => return pages::unavailable(lang, error.message),
            Err(error) => states.set(side, refused(t, &journey, error.code)),
        }
    }
    finish(&state, lang, &token, states, consent, new_advice, request_id.as_ref()).await
}

/// The guards of every journey write, as pages: a known open session, from the journey page,
/// within the session's and the address's limits.
async fn admit(state: &AppState, headers: &HeaderMap, client: &ClientAddr, token: &str) -> Result<Journey, Response> {
    let lang = Lang::from_headers(headers);
    let t = lang.strings();
    if uploads::check_same_origin(headers, &state.public_base).is_err() {
        return Err(pages::message(
            StatusCode::FORBIDDEN,
            lang,
            t.form_refused_title,
            t.form_refused_text,
        ));
    }
    let journey = uploads::find(state, client, token).await.map_err(|e| pages::refused(lang, e))?;
    check_session(&state.edge_limits.journey_writes, &journey)
        .and_then(|()| check_address(state, client))
        .map_err(|e| pages::refused(lang, e))?;
    Ok(journey)
}

/// After the files: the session as it now stands (re-read), then the form again when something
/// needs the customer, else the submit.
#[allow(clippy::too_many_arguments)]
async fn finish(
    state: &AppState,
    lang: Lang,
    token: &str,
    mut states: SideStates,
    consent: bool,
    new_advice: bool,
    request_id: Option<&common::telemetry::RequestId>,
) -> Response {
    let t = lang.strings();
    let lookup = token.to_owned();
    let journey = match state
        .store
        .read(move |c| verifications::journey_page(c, &lookup, chrono::Utc::now()))
        .await
    {
        Ok(Some(current)) => current,
        Ok(None) => return pages::unknown(lang),
        Err(error) => return pages::unavailable(lang, error),
    };
    for side in &journey.uploaded {
        let mut known = states.of(*side);
        known.received = true;
        states.set(*side, known);
    }
    let refused = states.0.iter().any(|(_, s)| s.error.is_some());
    let missing = JourneySide::of(journey.category)
        .iter()
        .any(|file| file.required && !journey.uploaded.contains(&file.side));
    let again = |status, message| {
        let outcome = Outcome {
            states: states.clone(),
            message,
            status,
        };
        let csrf = journey.csrf_token.as_deref().unwrap_or_default();
        let page_url = crate::api::verifications::journey_url(&state.public_base, token);
        pages::form(lang, token, &journey, csrf, &page_url, &outcome)
    };
    if refused {
        return again(StatusCode::BAD_REQUEST, None);
    }
    if missing {
        return again(StatusCode::BAD_REQUEST, Some(t.err_missing));
    }
    if new_advice {
        return again(StatusCode::OK, Some(t.warn_before_sending));
    }
    let (id, request_id) = (journey.id.clone(), request_id.cloned());
    match state
        .store
        .write(move |tx| verifications::submit(tx, &id, consent, request_id.as_ref(), chrono::Utc::now()))
        .await
    {
        Ok(_) => {
            state.outbox_wake.notify_one();
            page(token)
        }
        Err(error) => {
            let error = ApiError::from(error);
            if error.code == ErrorCode::InvalidState {
                ended(lang, token, &journey)
            } else {
                pages::unavailable(lang, error.message)
            }
        }
    }
}

/// 409: the link has ended (expired or used) before or while the form was posted; the page
/// says so, with the reference and the way back.
fn ended(lang: Lang, token: &str, journey: &Journey) -> Response {
    let t = lang.strings();
    let (title, text) = match journey.status {
        domain::vocabulary::VerificationStatus::Expired => (t.expired_title, t.expired_text),
        _ => (t.used_title, t.used_text),
    };
    pages::ended(StatusCode::CONFLICT, lang, token, journey, title, text)
}

/// 303 to the journey's page, which shows where the session stands.
fn page(token: &str) -> Response {
    Redirect::to(&format!("/v/{token}")).into_response()
}

/// A file refused, in the customer's words (the script's words for the same refusals).
fn refused(t: &Strings, journey: &Journey, code: ErrorCode) -> SideState {
    let words = match code {
        ErrorCode::InvalidDocument => t.err_type(journey.category),
        ErrorCode::DocumentTooLarge | ErrorCode::PayloadTooLarge => t.err_size.to_owned(),
        ErrorCode::RateLimited => t.err_busy.to_owned(),
        _ => t.err_network.to_owned(),
    };
    SideState {
        received: false,
        error: Some(words),
        warnings: Vec::new(),
    }
}

/// Why the form could not be read.
enum Unread {
    /// A file over 10 MB, or a body over [`BODY_LIMIT`].
    TooLarge,
    /// Not the page's form: its CSRF token missing, wrong or not first, or a malformed body.
    Refused,
}

impl From<MultipartError> for Unread {
    fn from(error: MultipartError) -> Self {
        if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Unread::TooLarge
        } else {
            Unread::Refused
        }
    }
}

impl Unread {
    fn into_page(self, lang: Lang) -> Response {
        let t = lang.strings();
        match self {
            Unread::TooLarge => pages::message(StatusCode::PAYLOAD_TOO_LARGE, lang, t.form_too_large_title, t.err_size),
            Unread::Refused => pages::message(StatusCode::FORBIDDEN, lang, t.form_refused_title, t.form_refused_text),
        }
    }
}

/// The first field must be the page's CSRF token: nothing else is read before it is checked.
async fn read_csrf(multipart: &mut Multipart, journey: &Journey) -> Result<(), Unread> {
    let field = multipart.next_field().await?.ok_or(Unread::Refused)?;
    if field.name() != Some("csrf") {
        return Err(Unread::Refused);
    }
    let sent = read_text(field).await?;
    uploads::check_csrf_value(sent.as_bytes(), journey).map_err(|_| Unread::Refused)
}

async fn read_text(mut field: axum::extract::multipart::Field<'_>) -> Result<String, Unread> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await? {
        if bytes.len() + chunk.len() > MAX_TEXT_BYTES {
            return Err(Unread::Refused);
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|_| Unread::Refused)
}

/// A file field's bytes, at most [`MAX_FILE_BYTES`]; `None` when no file was chosen (browsers
/// send an empty part).
async fn read_file(mut field: axum::extract::multipart::Field<'_>) -> Result<Option<Vec<u8>>, Unread> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await? {
        if bytes.len() + chunk.len() > MAX_FILE_BYTES {
            return Err(Unread::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((!bytes.is_empty()).then_some(bytes))
}
