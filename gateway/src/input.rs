//! Request extractors whose rejections speak the API's error codes: malformed JSON and bad query
//! strings answer 400 `invalid_request`, an oversized body 413 `payload_too_large`.

use crate::error::ApiError;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

/// JSON body.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
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

pub fn payload_too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        "The request body exceeds the 30 MB limit.",
    )
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
