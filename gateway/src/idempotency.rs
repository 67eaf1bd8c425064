//! `Idempotency-Key` on every POST of the API (`API.md`, Idempotency), as integrators know it from
//! Stripe: for 24 h, the same key with the same request replays the first response with
//! `Idempotent-Replayed: true`; with another request it answers 422 `idempotency_key_reused`;
//! while the first is in flight, 409 `idempotency_key_in_use`. Keys are scoped to the company.
//!
//! The key is claimed in the store before the request runs, so two concurrent requests cannot both
//! do the work. The request's body is fingerprinted as the handler streams it (a deposit is never
//! held in memory for this), and its response kept sealed once it answered.

use crate::auth::Caller;
use crate::body_deadline::Deadline;
use crate::error::ApiError;
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use common::store::idempotency::{self, Claim, Remembered, Scope};
use domain::vocabulary::ErrorCode;
use http_body::{Body as HttpBody, Frame, SizeHint};
use ring::digest::{Context, SHA256};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use tracing::Instrument as _;

pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
/// Longest key accepted (`API.md`).
pub const MAX_KEY_LEN: usize = 255;
/// Largest response kept for replay; the API's POSTs answer a few hundred bytes.
const MAX_REMEMBERED_RESPONSE: usize = 1 << 20;

/// The middleware: a POST of `/api/v1/` carrying `Idempotency-Key` is claimed, replayed or refused;
/// anything else passes untouched.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let applies = request.method() == Method::POST && request.uri().path().starts_with("/api/v1/");
    let Some(value) = request.headers().get(&IDEMPOTENCY_KEY).filter(|_| applies) else {
        return next.run(request).await;
    };
    let key = match parse_key(value) {
        Ok(key) => key,
        Err(refusal) => return refusal.into_response(),
    };
    let (mut parts, body) = request.into_parts();
    let caller = match Caller::from_request_parts(&mut parts, &state).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal.into_response(),
    };
    parts.extensions.insert(caller.clone());
    let held = HeldKey {
        company: caller.company_id,
        mode: caller.mode,
        key,
    };
    run_to_the_end(state, held, parts, body, next).await
}

/// Claims the key, then replays, refuses or runs the request.
async fn claim_and_run(state: AppState, held: HeldKey, parts: Parts, body: Body, next: Next) -> Response {
    let claimed = {
        let held = held.clone();
        let now = chrono::Utc::now();
        state.store.write(move |tx| idempotency::claim(tx, held.scope(), now)).await
    };
    match claimed {
        Err(error) => ApiError::from(error).into_response(),
        Ok(Claim::InFlight) => ApiError::new(
            ErrorCode::IdempotencyKeyInUse,
            "A request with this Idempotency-Key is still being processed.",
        )
        .into_response(),
        Ok(Claim::Answered(remembered)) => replay(&state, &held, remembered, &parts, body).await,
        Ok(Claim::Claimed) => run_and_remember(&state, held, parts, body, next).await,
    }
}

/// A key and whose it is, owned so it can go into the store's writer.
#[derive(Clone)]
struct HeldKey {
    company: domain::ids::CompanyId,
    mode: domain::vocabulary::Mode,
    key: String,
}

impl HeldKey {
    fn scope(&self) -> Scope<'_> {
        Scope {
            company: &self.company,
            mode: self.mode,
            key: &self.key,
        }
    }

    /// What the sealed response is bound to: it opens for this key of this company only.
    fn associated_data(&self) -> String {
        format!("idempotency:{}:{}", self.company.as_str(), self.key)
    }
}

/// 1 to 255 printable ASCII characters.
fn parse_key(value: &HeaderValue) -> Result<String, ApiError> {
    let bytes = value.as_bytes();
    let printable = bytes.iter().all(|b| (0x20..=0x7e).contains(b));
    if bytes.is_empty() || bytes.len() > MAX_KEY_LEN || !printable {
        return Err(ApiError::invalid_request(
            "Idempotency-Key",
            "Idempotency-Key must be 1 to 255 printable ASCII characters.",
        ));
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// A key that answered before: the same request gets the same answer, another request a 422.
async fn replay(state: &AppState, held: &HeldKey, remembered: Remembered, parts: &Parts, body: Body) -> Response {
    let fingerprint = Fingerprint::new(parts);
    let mut stream = Fingerprinting::new(body, fingerprint.clone());
    // Read to the end to hash it; nothing is kept, and the cap is the API's own.
    let read = http_body_util::BodyExt::collect(http_body_util::Limited::new(&mut stream, crate::middleware::BODY_LIMIT)).await;
    if read.is_err() {
        return ApiError::new(ErrorCode::PayloadTooLarge, "The request body is over the 30 MB cap.").into_response();
    }
    if fingerprint.finished().as_deref() != Some(remembered.fingerprint.as_slice()) {
        return ApiError::new(
            ErrorCode::IdempotencyKeyReused,
            "This Idempotency-Key was used in the last 24 hours with another request.",
        )
        .into_response();
    }
    let body = match state.keys.open(&held.associated_data(), &remembered.sealed_body) {
        Ok(body) => body,
        Err(error) => return ApiError::internal("idempotent replay", error).into_response(),
    };
    let status = StatusCode::from_u16(remembered.status).unwrap_or(StatusCode::OK);
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    if let Some(content_type) = remembered.content_type.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::CONTENT_TYPE, content_type);
    }
    headers.insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    response
}

/// Claims the key and runs the request in a task of its own, so it finishes and its answer is
/// remembered even when the client hangs up first: a client killed or timed out mid-request retries
/// with the same key and gets the answer replayed, where the dropped request would have left its key
/// claimed (409 for [`idempotency::ABANDONED_AFTER`]) with its work perhaps done. The claim is in the
/// task too: the writer commits a claim once it is queued, so a client gone while it waited for the
/// commit would leave the key claimed with no request to answer or release it.
///
/// Its body is read within the request's time at most: once its client is answered `408`, the
/// task stops reading, and lets go of the connection, however slowly the body still trickles in.
async fn run_to_the_end(state: AppState, held: HeldKey, parts: Parts, body: Body, next: Next) -> Response {
    let body = Body::new(Deadline::new(body, state.request_timeout));
    let task = async move { claim_and_run(state, held, parts, body, next).await };
    match tokio::spawn(task.in_current_span()).await {
        Ok(response) => response,
        Err(error) => ApiError::internal("idempotent request", error).into_response(),
    }
}

/// A key claimed by this request: run it, then remember its response, or let the key go when the
/// response is not one to replay.
async fn run_and_remember(state: &AppState, held: HeldKey, parts: Parts, body: Body, next: Next) -> Response {
    let fingerprint = Fingerprint::new(&parts);
    // A request without a body (submit, cancel) is whole now: its handler never reads one.
    if has_no_body(&parts) {
        fingerprint.finish();
    }
    let request = Request::from_parts(parts, Body::new(Fingerprinting::new(body, fingerprint.clone())));
    let response = next.run(request).await;
    let worth_replaying = !(response.status().is_server_error() || response.status() == StatusCode::TOO_MANY_REQUESTS);
    // A request refused before its body was read whole has no fingerprint to compare a retry with.
    let Some(fingerprint) = fingerprint.finished().filter(|_| worth_replaying) else {
        release(state, held).await;
        return response;
    };
    let (response_parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_REMEMBERED_RESPONSE).await {
        Ok(bytes) => bytes,
        Err(error) => {
            release(state, held).await;
            return ApiError::internal("idempotent response", error).into_response();
        }
    };
    let remembered = Remembered {
        fingerprint,
        status: response_parts.status.as_u16(),
        content_type: response_parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        sealed_body: state.keys.seal(&held.associated_data(), &bytes),
    };
    let stored = state
        .store
        .write(move |tx| idempotency::answer(tx, held.scope(), &remembered))
        .await;
    if let Err(error) = stored {
        // The client has its answer; a retry will find the key claimed until it is abandoned.
        tracing::warn!(%error, "could not remember an idempotent response");
    }
    Response::from_parts(response_parts, Body::from(bytes))
}

/// Whether the request carries no body: `Content-Length: 0`, or neither a length nor a transfer
/// coding (RFC 9112, 6.3: such a request's body is empty).
fn has_no_body(parts: &Parts) -> bool {
    let length = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    match length {
        Some(length) => length.trim() == "0",
        None => !parts.headers.contains_key(header::TRANSFER_ENCODING),
    }
}

async fn release(state: &AppState, held: HeldKey) {
    if let Err(error) = state.store.write(move |tx| idempotency::release(tx, held.scope())).await {
        tracing::warn!(%error, "could not release an idempotency key");
    }
}

/// SHA-256 of a request's method, path and query, and body, filled as the body streams by.
#[derive(Clone)]
struct Fingerprint(Arc<Mutex<FingerprintState>>);

struct FingerprintState {
    context: Option<Context>,
    finished: Option<Vec<u8>>,
}

impl Fingerprint {
    fn new(parts: &Parts) -> Self {
        let mut context = Context::new(&SHA256);
        context.update(parts.method.as_str().as_bytes());
        context.update(b"\n");
        let target = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        context.update(target.as_bytes());
        context.update(b"\n");
        Fingerprint(Arc::new(Mutex::new(FingerprintState {
            context: Some(context),
            finished: None,
        })))
    }

    fn update(&self, data: &[u8]) {
        if let Ok(mut state) = self.0.lock() {
            if let Some(context) = state.context.as_mut() {
                context.update(data);
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut state) = self.0.lock() {
            if let Some(context) = state.context.take() {
                state.finished = Some(context.finish().as_ref().to_vec());
            }
        }
    }

    /// The digest, once the whole body went by.
    fn finished(&self) -> Option<Vec<u8>> {
        self.0.lock().ok().and_then(|state| state.finished.clone())
    }
}

/// A request body that feeds a [`Fingerprint`] as it is read.
struct Fingerprinting<B> {
    inner: B,
    fingerprint: Fingerprint,
}

impl<B> Fingerprinting<B> {
    fn new(inner: B, fingerprint: Fingerprint) -> Self {
        Self { inner, fingerprint }
    }
}

impl<B> HttpBody for Fingerprinting<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.fingerprint.update(data);
                }
            }
            Poll::Ready(None) => this.fingerprint.finish(),
            _ => {}
        }
        polled
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: Method, uri: &str) -> Parts {
        let (parts, ()) = Request::builder().method(method).uri(uri).body(()).unwrap().into_parts();
        parts
    }

    /// A body that arrives in the given chunks, as a slow client's would.
    struct Chunks(std::collections::VecDeque<&'static [u8]>);

    impl HttpBody for Chunks {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.get_mut().0.pop_front().map(|chunk| Ok(Frame::data(Bytes::from_static(chunk)))))
        }
    }

    async fn digest_of(method: Method, uri: &str, chunks: &[&'static [u8]]) -> Option<Vec<u8>> {
        let fingerprint = Fingerprint::new(&parts(method, uri));
        let mut body = Fingerprinting::new(Chunks(chunks.iter().copied().collect()), fingerprint.clone());
        assert_eq!(fingerprint.finished(), None, "not before the body is read");
        http_body_util::BodyExt::collect(&mut body).await.unwrap();
        fingerprint.finished()
    }

    #[tokio::test]
    async fn the_fingerprint_covers_method_path_and_body() {
        let a = digest_of(Method::POST, "/api/v1/batches", &[b"{\"a\":1}"]).await;
        assert!(a.is_some());
        assert_eq!(a, digest_of(Method::POST, "/api/v1/batches", &[b"{\"a\":", b"1}"]).await);
        assert_ne!(a, digest_of(Method::POST, "/api/v1/batches", &[b"{\"a\":2}"]).await);
        assert_ne!(a, digest_of(Method::POST, "/api/v1/verifications", &[b"{\"a\":1}"]).await);
        assert_ne!(a, digest_of(Method::PUT, "/api/v1/batches", &[b"{\"a\":1}"]).await);
    }

    #[test]
    fn a_key_is_one_to_255_printable_characters() {
        let ok = |s: &str| parse_key(&HeaderValue::from_str(s).unwrap()).is_ok();
        assert!(ok("a"));
        assert!(ok("retry 7f3c-11e9 / batch #2"));
        assert!(ok(&"k".repeat(255)));
        assert!(!ok(&"k".repeat(256)));
        assert!(!ok(""));
        assert!(parse_key(&HeaderValue::from_bytes(b"tab\there").unwrap()).is_err());
        assert!(parse_key(&HeaderValue::from_bytes(&[0xc3, 0xa9]).unwrap()).is_err());
    }
}
