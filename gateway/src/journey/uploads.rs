//! The session-scoped endpoints the journey page calls: `POST /v/{token}/files/{side}` (raw file
//! body), `POST /v/{token}/submit` and `GET /v/{token}/status`. The token in the path authorises;
//! writes are single use (refused once submitted), rate-limited per session then per client address
//! (see the module above), and guarded against cross-site requests.
//!
//! CSRF: the token alone would let any site that learnt the link make the customer's browser
//! upload; no cookie is involved, so SameSite has nothing to protect. Every write therefore needs
//! the per-session CSRF token embedded in the page, sent in `X-CSRF-Token`. A custom header cannot
//! be sent cross-origin without a CORS preflight, which the gateway refuses outright, and the value
//! can only be read by a page of our origin. As defence in depth, a browser's own
//! `Sec-Fetch-Site` must say `same-origin` and an `Origin` header must be the public base's.
//!
//! These guards live in the handlers, not in router layers: the endpoints are ordinary entries of
//! the router (each with its OpenAPI description) under the same global layers as every route.

use super::{check_address, check_session, no_such_session};
use crate::client_addr::ClientAddr;
use crate::edge_turns::Sender;
use crate::error::{ApiError, ApiResult};
use crate::i18n::Lang;
use crate::input::Query;
use crate::inspect;
use crate::request_id::CurrentRequest;
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use common::document::{self, DocumentError, FileKind};
use common::photo_quality::QualityTask;
use common::store::verifications::{self, Journey, NewUpload};
use domain::journey::UploadWarning;
use domain::vocabulary::{DocumentCategory, VerificationStatus};
use domain::vocabulary::{ErrorCode, JourneySide};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use serde::Serialize;

/// Longest a refused upload's body is read and dropped before its connection closes.
const DISCARD_TIME: std::time::Duration = std::time::Duration::from_secs(10);
/// 10 MB per file, as for deposits.
pub const MAX_FILE_BYTES: usize = crate::api::deposits::MAX_DOCUMENT_BYTES;

fn forbidden(message: &str) -> ApiError {
    ApiError::new(ErrorCode::BrowserRequestForbidden, message)
}

/// `scheme://host[:port]` of the public base, what a browser sends as `Origin`.
fn origin_of(base: &str) -> &str {
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    match base[after_scheme..].find('/') {
        Some(i) => &base[..after_scheme + i],
        None => base,
    }
}

/// Refuses a request a browser says comes from another site. `Origin: null` says nothing: it is
/// what a browser sends for the page's own form post, the page being served with
/// `Referrer-Policy: no-referrer` (Fetch, "serialize a request origin"); the CSRF token is what
/// proves the page then.
pub(super) fn check_same_origin(headers: &HeaderMap, public_base: &str) -> Result<(), ApiError> {
    if let Some(site) = headers.get("sec-fetch-site") {
        if site.as_bytes() != b"same-origin" {
            return Err(forbidden("Journey uploads are accepted from the journey page only."));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN).filter(|origin| origin.as_bytes() != b"null") {
        if origin.as_bytes() != origin_of(public_base).as_bytes() {
            return Err(forbidden("Journey uploads are accepted from the journey page only."));
        }
    }
    Ok(())
}

fn check_csrf(headers: &HeaderMap, journey: &Journey) -> Result<(), ApiError> {
    let sent = headers.get("x-csrf-token").map(|v| v.as_bytes()).unwrap_or_default();
    check_csrf_value(sent, journey)
}

/// The session's CSRF token against what a request `sent` (its header, or the form's field).
pub(super) fn check_csrf_value(sent: &[u8], journey: &Journey) -> Result<(), ApiError> {
    let expected = journey.csrf_token.as_deref().unwrap_or_default().as_bytes();
    // Equal-length digests compared in constant time: the timing says nothing of the secret.
    let digest = |b: &[u8]| ring::digest::digest(&ring::digest::SHA256, b).as_ref().to_vec();
    if expected.is_empty() || !common::crypto::api_key::hashes_match(&digest(sent), &digest(expected)) {
        return Err(forbidden(
            "The CSRF token of the journey page is missing or wrong; reload the page.",
        ));
    }
    Ok(())
}

/// The session behind `token`; a token that names none is refused as [`no_such_session`] says.
pub(super) async fn find(state: &AppState, client: &ClientAddr, token: &str) -> Result<Journey, ApiError> {
    if !super::plausible_token(token) {
        return Err(no_such_session(state, client));
    }
    let token = token.to_owned();
    state
        .store
        .read(move |c| verifications::journey(c, &token, chrono::Utc::now()))
        .await?
        .ok_or_else(|| no_such_session(state, client))
}

/// The guards every write goes through, before its body is read: the session's own limit first,
/// so customers behind one address do not share theirs, then the address's.
async fn authorise_write(state: &AppState, headers: &HeaderMap, client: &ClientAddr, token: &str) -> Result<Journey, ApiError> {
    check_same_origin(headers, &state.public_base)?;
    let journey = find(state, client, token).await?;
    check_session(&state.edge_limits.journey_writes, &journey)?;
    check_csrf(headers, &journey)?;
    check_address(state, client)?;
    Ok(journey)
}

fn closed(journey: &Journey) -> ApiError {
    let message = match journey.status {
        VerificationStatus::Expired => "This verification link has expired.",
        _ => "This verification link has already been used.",
    };
    ApiError::new(ErrorCode::InvalidState, message)
}

/// The answer to an upload.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = JourneyFile)]
pub struct Uploaded {
    pub side: JourneySide,
    /// The type read from the file's bytes.
    pub kind: FileKind,
    #[schema(minimum = 1)]
    pub bytes: usize,
    /// What the quick look at the photo found that may keep it from being read (empty when
    /// nothing, and for a PDF or TIFF). Advice only: the file is stored and may be sent as is.
    pub warnings: Vec<Warning>,
}

/// One piece of advice on an uploaded photo.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = JourneyUploadWarning)]
pub struct Warning {
    pub code: UploadWarning,
    /// The advice in words, in the language of the request's `Accept-Language`.
    pub message: &'static str,
}

/// Every check of an upload that needs no byte of its body.
async fn admit(
    state: &AppState,
    headers: &HeaderMap,
    client: &ClientAddr,
    token: &str,
    side: &str,
) -> Result<(Journey, JourneySide), ApiError> {
    let journey = authorise_write(state, headers, client, token).await?;
    let Some(side) = side.parse::<JourneySide>().ok().filter(|side| side.belongs_to(journey.category)) else {
        return Err(ApiError::invalid_request("side", "This journey takes no such file."));
    };
    if !journey.is_open() {
        return Err(closed(&journey));
    }
    Ok((journey, side))
}

/// A refused client may still be sending: the refusal is answered at once, and the rest of a body
/// within the cap is read and dropped in the background (for at most [`DISCARD_TIME`]), so the
/// connection closes cleanly and the client sees the answer rather than a reset. A body declared
/// over the cap is not waited for: the connection simply closes.
fn discard(headers: &HeaderMap, mut body: Body) {
    if declared_length(headers).is_some_and(|length| length > MAX_FILE_BYTES as u64) {
        return;
    }
    tokio::spawn(async move {
        let drain = async {
            let mut read = 0usize;
            while let Some(Ok(frame)) = body.frame().await {
                read += frame.data_ref().map_or(0, |data| data.len());
                if read > MAX_FILE_BYTES {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(DISCARD_TIME, drain).await;
    });
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// Reads an upload's body once its guards have passed, up to [`MAX_FILE_BYTES`]: a declared length
/// over the cap is refused before a byte is read, an undeclared one as soon as it passes the cap.
async fn read_file(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    if declared_length(headers).is_some_and(|length| length > MAX_FILE_BYTES as u64) {
        return Err(file_too_large());
    }
    match Limited::new(body, MAX_FILE_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => Err(file_too_large()),
        Err(error) => Err(ApiError::malformed(format!("The file could not be read: {error}"))),
    }
}

fn file_too_large() -> ApiError {
    ApiError::new(ErrorCode::PayloadTooLarge, "The file exceeds 10 MB (10,000,000 bytes).")
}

/// Checks the bytes themselves (magic bytes, never the client's Content-Type).
fn check_file(side: &'static str, bytes: &[u8], category: DocumentCategory) -> Result<document::FileKind, ApiError> {
    if bytes.is_empty() {
        return Err(ApiError::invalid_document(side, "The file is empty."));
    }
    if bytes.len() > MAX_FILE_BYTES {
        return Err(ApiError {
            field: Some(side),
            ..ApiError::new(ErrorCode::DocumentTooLarge, "The file exceeds 10 MB (10,000,000 bytes).")
        });
    }
    let kind = document::sniff(bytes).filter(|k| k.allowed_for(category)).ok_or_else(|| {
        let allowed = document::describe_accepted(category, &document::AcceptedWords::ENGLISH);
        ApiError::invalid_document(side, format!("This file type is not accepted: send {allowed}."))
    })?;
    Ok(kind)
}

/// One page only; counted in the sandbox for a PDF (see `inspect`).
async fn check_pages(
    state: &AppState,
    journey: &Journey,
    side: &'static str,
    kind: document::FileKind,
    bytes: &[u8],
) -> Result<(), ApiError> {
    let sender = Sender::Journey(journey.id.clone());
    match inspect::page_count(&state.sandbox, &state.edge_turns, sender, kind, bytes).await? {
        Ok(1) => Ok(()),
        Ok(n) => Err(ApiError::invalid_document(side, format!("The file has {n} pages; one page only."))),
        Err(DocumentError::TooLarge(m)) | Err(DocumentError::Unsupported(m)) => Err(ApiError::invalid_document(side, m)),
        // Bytes that look right but do not parse are the analysis's finding (`analyse_impossible`).
        Err(_) => Ok(()),
    }
}

/// The path of [`upload`], whose body's media types the OpenAPI document lists from `FileKind`.
pub const UPLOAD_PATH: &str = "/v/{token}/files/{side}";

crate::openapi::errors::errors!(
    UploadErrors: Public
        + InvalidRequest
        + InvalidDocument
        + BrowserRequestForbidden
        + NotFound
        + InvalidState
        + DocumentTooLarge
        + PayloadTooLarge
        + RateLimited
        + ServiceUnavailable
);

/// Upload one file of a journey (raw body), replacing an earlier upload of that side.
///
/// Called by the journey page's script. The file type is read from the bytes, never from
/// `Content-Type`: identity journeys take JPEG, PNG or WebP, administrative ones also a one-page
/// PDF or TIFF. A side the journey does not take answers 400 `invalid_request`; a journey already
/// submitted, completed or expired 409 `invalid_state`. A browser's request must come from the
/// journey page itself (`Sec-Fetch-Site: same-origin`, `Origin` the public base URL). Limited per
/// session (60 writes a minute), then per client address (300 journey requests a minute).
// The file is encrypted into the blob store like a deposit.
#[utoipa::path(
    post,
    path = "/v/{token}/files/{side}",
    operation_id = "uploadJourneyFile",
    tag = "Journey",
    params(
        ("token" = String, Path, description = "The token of a verificationUrl.", pattern = "^[A-Za-z0-9]{1,128}$"),
        ("side" = JourneySide, Path, description = "Which file of the journey: `front`, `back` (optional) and `selfie` for identity, `document` for administrative."),
        CsrfToken,
    ),
    responses(
        (status = 201, description = "The file is stored, encrypted, until the journey is submitted; `kind` is the type read from its bytes.", body = Uploaded),
        UploadErrors,
    ),
)]
pub async fn upload(
    State(state): State<AppState>,
    Path((token, side)): Path<(String, String)>,
    headers: HeaderMap,
    client: ClientAddr,
    body: Body,
) -> ApiResult<(StatusCode, axum::Json<Uploaded>)> {
    let (journey, side) = match admit(&state, &headers, &client, &token, &side).await {
        Ok(admitted) => admitted,
        Err(refusal) => {
            discard(&headers, body);
            return Err(refusal);
        }
    };
    let bytes = read_file(&headers, body).await?;
    let uploaded = accept(&state, &journey, side, &bytes, Lang::from_headers(&headers)).await?;
    Ok((StatusCode::CREATED, axum::Json(uploaded)))
}

/// Checks a file of an open journey's `side` (type from its bytes, one page), stores it sealed in
/// place of an earlier one, and takes the quick look at it: the one path of a file into a journey,
/// from the script's upload and from the plain form post alike.
pub(super) async fn accept(state: &AppState, journey: &Journey, side: JourneySide, bytes: &[u8], lang: Lang) -> ApiResult<Uploaded> {
    let kind = check_file(side.as_str(), bytes, journey.category)?;
    check_pages(state, journey, side.as_str(), kind, bytes).await?;

    let blob = common::blobs::BlobStore::new_name();
    let context = verifications::upload_context(&journey.company_id, &journey.id);
    let size = bytes.len();
    // The quick look runs while the file is sealed and stored: it adds no wait of its own.
    let store = state.blobs.put_then_record(&state.store, &blob, &context, bytes.to_vec());
    let (stored, warnings) = tokio::join!(store, warnings_of(state, journey, side, kind, bytes, lang));
    stored.map_err(|e| ApiError::blob("journey blob", e))?;
    let (id, name) = (journey.id.clone(), blob.clone());
    let recorded = state
        .store
        .write(move |tx| {
            let upload = NewUpload {
                side,
                blob: &name,
                kind,
                bytes: size as i64,
            };
            verifications::record_upload(tx, &id, &upload, chrono::Utc::now())
        })
        .await;
    let stale = match recorded {
        Ok(previous) => previous,
        Err(e) if e.committed() => {
            // Recorded, but its flush failed: the row names the file, which stays.
            tracing::error!(error = %e, "journey upload recorded but not flushed to disk; its file is kept");
            return Err(e.into());
        }
        Err(e) => {
            if let Err(del) = state.blobs.delete(&blob).await {
                tracing::error!(error = %del, "cannot delete the file of a refused journey upload");
            }
            return Err(e.into());
        }
    };
    if let Some(previous) = stale {
        if let Err(e) = state.blobs.delete(&previous).await {
            tracing::error!(error = %e, "cannot delete a replaced journey file");
        }
    }
    Ok(Uploaded {
        side,
        kind,
        bytes: size,
        warnings,
    })
}

/// The quick look at a stored photo, in the customer's words.
async fn warnings_of(state: &AppState, journey: &Journey, side: JourneySide, kind: FileKind, bytes: &[u8], lang: Lang) -> Vec<Warning> {
    // A PDF or TIFF is a scan or a file, not a photo to take again: no child is asked.
    if !matches!(kind, FileKind::Jpeg | FileKind::Png | FileKind::Webp) {
        return Vec::new();
    }
    let sender = Sender::Journey(journey.id.clone());
    let task = QualityTask {
        side,
        face_match: state.face_match,
    };
    inspect::photo_warnings(&state.sandbox, &state.edge_turns, sender, task, bytes)
        .await
        .into_iter()
        .map(|code| Warning {
            code,
            message: lang.strings().upload_warning(code, side),
        })
        .collect()
}

/// Where a session stands, never its verdict.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = JourneyStatus)]
pub struct Status {
    pub status: VerificationStatus,
}

crate::openapi::errors::errors!(
    SubmitErrors: Public + InvalidRequest + BrowserRequestForbidden + NotFound + InvalidState + RateLimited + ServiceUnavailable
);

/// The customer's answers the page sends with the submit.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubmitQuery {
    /// `true` when the customer ticked the consent to the biometric comparison of the selfie with
    /// the document (asked before the selfie). Absent or `false`: the selfie is kept for a human
    /// reviewer and never compared (`selfie_not_checked`).
    #[serde(rename = "biometricConsent", default)]
    #[param(rename = "biometricConsent")]
    biometric_consent: bool,
}

/// Close a journey to uploads and start its analysis.
///
/// Single use: the link then takes no more uploads nor a second submit (409 `invalid_state`). A
/// required file not uploaded yet answers 400 `invalid_request` with `field` naming its side. Same
/// origin rules and limits as the upload. Queues the session's one real-time job.
#[utoipa::path(
    post,
    path = "/v/{token}/submit",
    operation_id = "submitJourney",
    tag = "Journey",
    params(
        ("token" = String, Path, description = "The token of a verificationUrl.", pattern = "^[A-Za-z0-9]{1,128}$"),
        SubmitQuery,
        CsrfToken,
    ),
    responses(
        (status = 202, description = "The journey is `submitted`: its analysis is queued; poll the status.", body = Status),
        SubmitErrors,
    ),
)]
pub async fn submit(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    client: ClientAddr,
    CurrentRequest(request_id): CurrentRequest,
    Query(answers): Query<SubmitQuery>,
) -> ApiResult<(StatusCode, axum::Json<Status>)> {
    let journey = authorise_write(&state, &headers, &client, &token).await?;
    if !journey.is_open() {
        return Err(closed(&journey));
    }
    let id = journey.id.clone();
    state
        .store
        .write(move |tx| verifications::submit(tx, &id, answers.biometric_consent, request_id.as_ref(), chrono::Utc::now()))
        .await?;
    state.outbox_wake.notify_one();
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(Status {
            status: VerificationStatus::Submitted,
        }),
    ))
}

crate::openapi::errors::errors!(StatusErrors: Public + NotFound + RateLimited);

/// Where a journey stands (never its verdict), polled by the page.
///
/// Polled by the page while the analysis runs; limited per session (60 polls a minute), then per
/// client address (300 journey requests a minute). An unknown token counts against the address.
#[utoipa::path(
    get,
    path = "/v/{token}/status",
    operation_id = "getJourneyStatus",
    tag = "Journey",
    params(("token" = String, Path, description = "The token of a verificationUrl.", pattern = "^[A-Za-z0-9]{1,128}$")),
    responses(
        (status = 200, description = "The status of the session (`completed` once its result is recorded); never the verdict.", body = Status),
        StatusErrors,
    ),
)]
pub async fn status(
    State(state): State<AppState>,
    Path(token): Path<String>,
    client: ClientAddr,
) -> ApiResult<([(header::HeaderName, &'static str); 1], axum::Json<Status>)> {
    let journey = find(&state, &client, &token).await?;
    check_session(&state.edge_limits.journey_polls, &journey)?;
    check_address(&state, &client)?;
    Ok(([(header::CACHE_CONTROL, "no-store")], axum::Json(Status { status: journey.status })))
}

/// `X-CSRF-Token`: what every journey write needs besides the session token.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct CsrfToken {
    /// The token of the journey page's `<meta name="csrf-token">`, given when the link is
    /// opened. Missing or wrong: 403 `browser_request_forbidden`.
    #[param(rename = "X-CSRF-Token", min_length = 1)]
    #[allow(dead_code)]
    csrf_token: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_of_the_public_base() {
        assert_eq!(origin_of("https://sceau.example"), "https://sceau.example");
        assert_eq!(origin_of("https://sceau.example:8443/app"), "https://sceau.example:8443");
        assert_eq!(origin_of("http://127.0.0.1:3000"), "http://127.0.0.1:3000");
    }

    #[test]
    fn cross_site_requests_are_refused() {
        let mut h = HeaderMap::new();
        assert!(
            check_same_origin(&h, "https://s.example").is_ok(),
            "non-browser clients send neither header"
        );
        h.insert("sec-fetch-site", "same-origin".parse().unwrap());
        h.insert(header::ORIGIN, "https://s.example".parse().unwrap());
        assert!(check_same_origin(&h, "https://s.example").is_ok());
        h.insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        assert!(check_same_origin(&h, "https://s.example").is_err());
        h.remove(header::ORIGIN);
        h.insert("sec-fetch-site", "cross-site".parse().unwrap());
        assert!(check_same_origin(&h, "https://s.example").is_err());
    }

    /// A file over 10 MB is refused from its declared length before a byte is read, or as soon as
    /// an undeclared body passes the cap.
    #[tokio::test]
    async fn an_oversized_file_is_payload_too_large() {
        let mut declared = HeaderMap::new();
        declared.insert(header::CONTENT_LENGTH, (MAX_FILE_BYTES + 1).into());
        let refused = read_file(&declared, Body::from("small")).await.unwrap_err();
        assert_eq!(
            (refused.status, refused.code),
            (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::PayloadTooLarge)
        );
        let undeclared = read_file(&HeaderMap::new(), Body::from(vec![0u8; MAX_FILE_BYTES + 1]))
            .await
            .unwrap_err();
        assert_eq!(undeclared.code, ErrorCode::PayloadTooLarge);
        let fine = read_file(&HeaderMap::new(), Body::from(vec![7u8; MAX_FILE_BYTES])).await.unwrap();
        assert_eq!(fine.len(), MAX_FILE_BYTES);
    }

    #[test]
    fn files_are_sniffed_not_trusted() {
        let text = b"hello, I am a JPEG, trust me";
        let e = check_file("front", text, DocumentCategory::Identite).unwrap_err();
        assert_eq!((e.status, e.code), (StatusCode::BAD_REQUEST, ErrorCode::InvalidDocument));
        let big = vec![0u8; MAX_FILE_BYTES + 1];
        assert_eq!(
            check_file("front", &big, DocumentCategory::Identite).unwrap_err().code,
            ErrorCode::DocumentTooLarge
        );
        let pdf = b"%PDF-1.4\n";
        assert_eq!(
            check_file("front", pdf, DocumentCategory::Identite).unwrap_err().code,
            ErrorCode::InvalidDocument
        );
    }
}
