//! Request extractors whose rejections speak the API's error codes: malformed JSON and bad query
//! strings answer 400 `invalid_request`, an oversized body 413 `payload_too_large`.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use domain::vocabulary::ErrorCode;
use serde::de::DeserializeOwned;
use serde::Deserialize as _;
use std::borrow::Cow;

/// JSON body.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let req = objects_only(req, state).await?;
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Json(v)),
            Err(JsonRejection::BytesRejection(r)) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(payload_too_large()),
            Err(JsonRejection::MissingJsonContentType(_)) => {
                Err(ApiError::malformed("The body must be JSON with Content-Type: application/json."))
            }
            Err(JsonRejection::JsonDataError(e)) => Err(ApiError::malformed(format!(
                "The JSON body does not match the expected shape: {}",
                e.body_text()
            ))),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(payload_too_large()),
            Err(_) => Err(ApiError::malformed("The body is not valid JSON.")),
        }
    }
}

/// A JSON body kept whole, for a request that carries documents: its strings are parsed as
/// borrowed slices of the body ([`BodyText`]), so a 10 MB base64 document is never copied out.
pub struct RawJson(Bytes);

impl<S: Send + Sync> FromRequest<S> for RawJson {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json(req.headers()) {
            return Err(ApiError::malformed("The body must be JSON with Content-Type: application/json."));
        }
        match Bytes::from_request(req, state).await {
            Ok(body) => Ok(RawJson(body)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(payload_too_large()),
            Err(_) => Err(ApiError::malformed("The body could not be read.")),
        }
    }
}

impl RawJson {
    /// Parses the body; rejections as [`Json`]'s.
    pub fn parse<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, ApiError> {
        if !is_object(&self.0) {
            return Err(not_an_object());
        }
        serde_json::from_slice(&self.0).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => ApiError::malformed(format!("The JSON body does not match the expected shape: {e}")),
            _ => ApiError::malformed("The body is not valid JSON."),
        })
    }

    /// A string parsed from this body, owned without a copy when it had no escapes.
    pub fn text(&self, parsed: Cow<'_, str>) -> BodyText {
        match parsed {
            Cow::Borrowed(slice) => BodyText(self.0.slice_ref(slice.as_bytes())),
            Cow::Owned(string) => BodyText(Bytes::from(string)),
        }
    }
}

/// A string of a JSON body that outlives the parse (it can go to a blocking thread): a view of
/// the body's own bytes, or a copy when the JSON string held escapes.
pub struct BodyText(Bytes);

impl BodyText {
    /// Its length in bytes, without reading it.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_str(&self) -> &str {
        // Always UTF-8: it was a `&str` or a `String` (see `RawJson::text`).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// `application/json`, or a `+json` type, as axum's `Json` accepts.
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Every request body of the API is a JSON object. Serde would also fill a struct from an array
/// of its fields in order (`["ref", 60]`), which no schema of the API allows.
async fn objects_only<S: Send + Sync>(req: Request, state: &S) -> Result<Request, ApiError> {
    let (parts, body) = req.into_parts();
    let bytes = match Bytes::from_request(Request::from_parts(parts.clone(), body), state).await {
        Ok(bytes) => bytes,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => return Err(payload_too_large()),
        Err(_) => return Err(ApiError::malformed("The body could not be read.")),
    };
    if !bytes.iter().all(u8::is_ascii_whitespace) && !is_object(&bytes) {
        return Err(not_an_object());
    }
    Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
}

/// Whether the first character that is not white space opens an object.
fn is_object(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

fn not_an_object() -> ApiError {
    ApiError::malformed("The JSON body must be an object.")
}

/// An optional integer as JSON Schema counts integers: `355` and `355.0` alike (a number whose
/// fraction is zero), never `355.5`.
pub fn whole_number<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    use serde::de::Error;
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    if let Some(n) = number.as_i64() {
        return Ok(Some(n));
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
        _ => Err(D::Error::custom(format!("invalid value: {number}, expected an integer"))),
    }
}

pub fn payload_too_large() -> ApiError {
    ApiError::new(ErrorCode::PayloadTooLarge, "The request body exceeds the 30 MB limit.")
}

/// Query string.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(Query(v)),
            Err(QueryRejection::FailedToDeserializeQueryString(e)) => {
                Err(ApiError::malformed(format!("Invalid query string: {}", e.body_text())))
            }
            Err(e) => Err(ApiError::malformed(format!("Invalid query string: {}", e.body_text()))),
        }
    }
}

/// An optional string of at most 255 characters (`externalRef`).
pub fn external_ref(field: &'static str, v: Option<String>) -> Result<Option<String>, ApiError> {
    match v {
        Some(s) if s.chars().count() > 255 => Err(ApiError::invalid_request(
            field,
            format!("{field} must have at most 255 characters."),
        )),
        other => Ok(other),
    }
}
