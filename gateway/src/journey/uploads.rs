//! The session-scoped endpoints the journey page calls: `POST /v/{token}/files/{side}` (raw file
//! body), `POST /v/{token}/submit` and `GET /v/{token}/status`. The token in the path authorises;
//! writes are single use (refused once submitted), rate-limited per session and per IP, and guarded
//! against cross-site requests.
//!
//! CSRF: the token alone would let any site that learnt the link make the customer's browser
//! upload; no cookie is involved, so SameSite has nothing to protect. Every write therefore needs
//! the per-session CSRF token embedded in the page, sent in `X-CSRF-Token`. A custom header cannot
//! be sent cross-origin without a CORS preflight, which the gateway refuses outright, and the value
//! can only be read by a page of our origin. As defence in depth, a browser's own
//! `Sec-Fetch-Site` must say `same-origin` and an `Origin` header must be the public base's.
//!
//! These guards live in the handlers, not in router layers: the endpoints are ordinary entries of
//! the route table (and so of the OpenAPI document) under the same global layers as every route.

use crate::error::{ApiError, ApiResult};
use crate::rate_limit::RateLimiter;
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, Path, Request, State};
use axum::http::{header, Extensions, HeaderMap, StatusCode};
use common::document::{self, DocumentError};
use common::domain::{DocumentCategory, VerificationStatus};
use common::store::verifications::{self, Journey, NewUpload};
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

/// 10 MB per file, as for deposits.
pub const MAX_FILE_BYTES: usize = crate::api::deposits::MAX_DOCUMENT_BYTES;
/// Writes (uploads and submit) per session per minute: a few retries of each file, no more.
const PER_SESSION_PER_MINUTE: u32 = 60;
/// Requests (including status polls) per client IP per minute.
const PER_IP_PER_MINUTE: u32 = 300;

fn limiters() -> &'static (Arc<RateLimiter>, Arc<RateLimiter>) {
    static LIMITERS: OnceLock<(Arc<RateLimiter>, Arc<RateLimiter>)> = OnceLock::new();
    LIMITERS.get_or_init(|| {
        (
            Arc::new(RateLimiter::per_minute(PER_SESSION_PER_MINUTE)),
            Arc::new(RateLimiter::per_minute(PER_IP_PER_MINUTE)),
        )
    })
}

fn check_ip(extensions: &Extensions) -> Result<(), ApiError> {
    // The peer address; behind a reverse proxy this is the proxy's (forwarded headers are not
    // trusted), so the per-session limit is the one that holds.
    let Some(ConnectInfo(addr)) = extensions.get::<ConnectInfo<SocketAddr>>() else {
        return Ok(());
    };
    limiters().1.check(&addr.ip().to_string()).map_err(ApiError::rate_limited)
}

fn check_session(journey: &Journey) -> Result<(), ApiError> {
    limiters().0.check(journey.id.as_str()).map_err(ApiError::rate_limited)
}

fn forbidden(message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "browser_request_forbidden", message)
}

/// `scheme://host[:port]` of the public base, what a browser sends as `Origin`.
fn origin_of(base: &str) -> &str {
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    match base[after_scheme..].find('/') {
        Some(i) => &base[..after_scheme + i],
        None => base,
    }
}

fn check_same_origin(headers: &HeaderMap, public_base: &str) -> Result<(), ApiError> {
    if let Some(site) = headers.get("sec-fetch-site") {
        if site.as_bytes() != b"same-origin" {
            return Err(forbidden("Journey uploads are accepted from the journey page only."));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        if origin.as_bytes() != origin_of(public_base).as_bytes() {
            return Err(forbidden("Journey uploads are accepted from the journey page only."));
        }
    }
    Ok(())
}

fn check_csrf(headers: &HeaderMap, journey: &Journey) -> Result<(), ApiError> {
    let sent = headers.get("x-csrf-token").map(|v| v.as_bytes()).unwrap_or_default();
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

async fn find(state: &AppState, token: &str) -> Result<Journey, ApiError> {
    if !super::plausible_token(token) {
        return Err(ApiError::not_found());
    }
    let token = token.to_owned();
    state
        .store
        .read(move |c| verifications::journey(c, &token, chrono::Utc::now()))
        .await?
        .ok_or_else(ApiError::not_found)
}

/// The guards every write goes through, in order of cost.
async fn authorise_write(state: &AppState, headers: &HeaderMap, extensions: &Extensions, token: &str) -> Result<Journey, ApiError> {
    check_same_origin(headers, &state.public_base)?;
    check_ip(extensions)?;
    let journey = find(state, token).await?;
    check_session(&journey)?;
    check_csrf(headers, &journey)?;
    Ok(journey)
}

fn closed(journey: &Journey) -> ApiError {
    let message = match journey.status {
        VerificationStatus::Expired => "This verification link has expired.",
        _ => "This verification link has already been used.",
    };
    ApiError::new(StatusCode::CONFLICT, "invalid_state", message)
}

/// The answer to an upload (`JourneyFile` in the OpenAPI document).
#[derive(Serialize)]
pub struct Uploaded {
    pub side: String,
    pub kind: &'static str,
    pub bytes: usize,
}

/// The raw body of an upload. Over the hard cap of every request it answers the API's
/// `payload_too_large` rather than the framework's plain-text 413.
pub struct RawFile(Bytes);

impl<S: Send + Sync> FromRequest<S> for RawFile {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match Bytes::from_request(req, state).await {
            Ok(bytes) => Ok(RawFile(bytes)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(crate::input::payload_too_large()),
            Err(e) => Err(ApiError::malformed(format!("The file could not be read: {}", e.body_text()))),
        }
    }
}

/// Checks the bytes themselves (magic bytes, never the client's Content-Type) and the page count.
fn check_file(side: &'static str, bytes: &[u8], category: DocumentCategory) -> Result<document::FileKind, ApiError> {
    if bytes.is_empty() {
        return Err(ApiError::invalid_document(side, "The file is empty."));
    }
    if bytes.len() > MAX_FILE_BYTES {
        return Err(ApiError {
            field: Some(side),
            ..ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "document_too_large",
                "The file exceeds 10 MB (10,000,000 bytes).",
            )
        });
    }
    let kind = document::sniff(bytes).filter(|k| k.allowed_for(category)).ok_or_else(|| {
        let allowed = match category {
            DocumentCategory::Identite => "a JPEG, PNG or WebP image",
            DocumentCategory::Administratif => "a one-page PDF or a JPEG, PNG or WebP image",
        };
        ApiError::invalid_document(side, format!("This file type is not accepted: send {allowed}."))
    })?;
    match document::page_count(kind, bytes) {
        Ok(1) => Ok(kind),
        Ok(n) => Err(ApiError::invalid_document(side, format!("The file has {n} pages; one page only."))),
        Err(DocumentError::TooLarge(m)) | Err(DocumentError::Unsupported(m)) => Err(ApiError::invalid_document(side, m)),
        // Bytes that look right but do not parse are the analysis's finding (`analyse_impossible`).
        Err(_) => Ok(kind),
    }
}

/// `POST /v/{token}/files/{side}`: one file, encrypted into the blob store like a deposit. A new
/// upload of the same side replaces the previous one.
pub async fn upload(
    State(state): State<AppState>,
    Path((token, side)): Path<(String, String)>,
    headers: HeaderMap,
    extensions: Extensions,
    RawFile(body): RawFile,
) -> ApiResult<(StatusCode, axum::Json<Uploaded>)> {
    let journey = authorise_write(&state, &headers, &extensions, &token).await?;
    let Some((side, _)) = verifications::journey_sides(journey.category)
        .iter()
        .copied()
        .find(|(s, _)| *s == side)
    else {
        return Err(ApiError::invalid_request("side", "This journey takes no such file."));
    };
    if !journey.is_open() {
        return Err(closed(&journey));
    }
    let category = journey.category;
    let (kind, bytes) = tokio::task::spawn_blocking(move || check_file(side, &body, category).map(|k| (k, body)))
        .await
        .map_err(|e| ApiError::internal("journey file check", e))??;

    let blob = common::blobs::BlobStore::new_name();
    let context = verifications::upload_context(&journey.company_id, &journey.id);
    state
        .blobs
        .put(&blob, &context, &bytes)
        .await
        .map_err(|e| ApiError::internal("journey blob", e))?;
    let (id, name, size) = (journey.id.clone(), blob.clone(), bytes.len());
    let recorded = state
        .store
        .write(move |tx| {
            let upload = NewUpload {
                side,
                blob: &name,
                kind: kind.as_str(),
                bytes: size as i64,
            };
            verifications::record_upload(tx, &id, &upload, chrono::Utc::now())
        })
        .await;
    let stale = match recorded {
        Ok(previous) => previous,
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
    Ok((
        StatusCode::CREATED,
        axum::Json(Uploaded {
            side: side.to_owned(),
            kind: kind.as_str(),
            bytes: size,
        }),
    ))
}

/// Where a session stands (`JourneyStatus` in the OpenAPI document).
#[derive(Serialize)]
pub struct Status {
    pub status: VerificationStatus,
}

/// `POST /v/{token}/submit`: closes the session and queues its one real-time job.
pub async fn submit(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    extensions: Extensions,
) -> ApiResult<(StatusCode, axum::Json<Status>)> {
    let journey = authorise_write(&state, &headers, &extensions, &token).await?;
    if !journey.is_open() {
        return Err(closed(&journey));
    }
    let id = journey.id.clone();
    state
        .store
        .write(move |tx| verifications::submit(tx, &id, chrono::Utc::now()))
        .await?;
    state.outbox_wake.notify_one();
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(Status {
            status: VerificationStatus::Submitted,
        }),
    ))
}

/// `GET /v/{token}/status`: where the session stands, never its verdict.
pub async fn status(
    State(state): State<AppState>,
    Path(token): Path<String>,
    extensions: Extensions,
) -> ApiResult<([(header::HeaderName, &'static str); 1], axum::Json<Status>)> {
    check_ip(&extensions)?;
    let journey = find(&state, &token).await?;
    Ok(([(header::CACHE_CONTROL, "no-store")], axum::Json(Status { status: journey.status })))
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

    /// A body over the cap answers the API's JSON error, like every other route.
    #[tokio::test]
    async fn an_oversized_body_is_payload_too_large() {
        use axum::body::Body;
        use tower::ServiceExt as _;
        let app = axum::Router::new()
            .route("/", axum::routing::post(|RawFile(b): RawFile| async move { b.len().to_string() }))
            .layer(axum::extract::DefaultBodyLimit::max(8));
        let send = |body: &'static str| app.clone().oneshot(Request::post("/").body(Body::from(body)).unwrap());
        assert_eq!(send("12345678").await.unwrap().status(), StatusCode::OK);
        let refused = send("123456789").await.unwrap();
        assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body = axum::body::to_bytes(refused.into_body(), 1024).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"], "payload_too_large");
    }

    #[test]
    fn files_are_sniffed_not_trusted() {
        let text = b"hello, I am a JPEG, trust me";
        let e = check_file("front", text, DocumentCategory::Identite).unwrap_err();
        assert_eq!((e.status, e.code), (StatusCode::BAD_REQUEST, "invalid_document"));
        let big = vec![0u8; MAX_FILE_BYTES + 1];
        assert_eq!(
            check_file("front", &big, DocumentCategory::Identite).unwrap_err().code,
            "document_too_large"
        );
        let pdf = b"%PDF-1.4\n";
        assert_eq!(
            check_file("front", pdf, DocumentCategory::Identite).unwrap_err().code,
            "invalid_document"
        );
    }
}
