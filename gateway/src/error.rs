//! The one HTTP error type: every refusal of the API is an `ApiError` with a status and a code
//! of `API.md`. Internal errors are logged with the request id and answer a bare 500.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use common::blobs::BlobError;
use common::store::{RepoError, StoreError};
use domain::vocabulary::ErrorCode;
use serde::Serialize;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    pub field: Option<&'static str>,
    pub retry_after: Option<u64>,
}

/// The body of every refusal of the API.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody<'a> {
    /// Machine-readable code.
    error: ErrorCode,
    /// One human sentence.
    message: &'a str,
    /// The input field at fault, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    field: Option<&'a str>,
}

impl ApiError {
    /// A refusal with `code`, answered with the code's status.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            code,
            message: message.into(),
            field: None,
            retry_after: None,
        }
    }

    pub fn invalid_request(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field: Some(field),
            ..Self::new(ErrorCode::InvalidRequest, message)
        }
    }

    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }

    pub fn invalid_document(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field: Some(field),
            ..Self::new(ErrorCode::InvalidDocument, message)
        }
    }

    pub fn invalid_api_key() -> Self {
        Self::new(ErrorCode::InvalidApiKey, "The API key is absent, malformed, unknown or revoked.")
    }

    pub fn not_found() -> Self {
        Self::new(ErrorCode::NotFound, "No such resource.")
    }

    pub fn internal(context: &str, error: impl std::fmt::Display) -> Self {
        // The detail goes to the log (with the request id of the current span), never to the client.
        tracing::error!(context, error = %error, "internal error");
        Self::new(
            ErrorCode::InternalError,
            "An internal error occurred; it has been logged with the request id.",
        )
    }

    pub fn rate_limited(retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after.max(1)),
            ..Self::new(
                ErrorCode::RateLimited,
                "Too many requests; retry after the delay given in Retry-After.",
            )
        }
    }
}

impl ApiError {
    /// The service cannot take the request now (no room to store it, no parser free); nothing was
    /// kept, and the same request will succeed later.
    pub fn unavailable(message: impl Into<String>, retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after.max(1)),
            ..Self::new(ErrorCode::ServiceUnavailable, message)
        }
    }

    /// The disk is full: an outage for the operator (logged as an error, counted), a 503 for the
    /// client, whose request left nothing behind.
    pub fn out_of_space(context: &str) -> Self {
        tracing::error!(context, "no space left to store a request; refused with 503 until space is freed");
        metrics::counter!("sceau_storage_full_total").increment(1);
        Self::unavailable(
            "The service cannot store anything right now; nothing was kept. Retry after the delay given in Retry-After.",
            OUT_OF_SPACE_RETRY_SECONDS,
        )
    }

    /// A blob store failure: out of space is [`out_of_space`](Self::out_of_space), an object
    /// store that does not answer is a short 503, anything else is internal.
    pub fn blob(context: &str, error: BlobError) -> Self {
        if error.is_out_of_space() {
            Self::out_of_space(context)
        } else if error.is_unavailable() {
            tracing::warn!(%context, %error, "blob store unavailable");
            let mut refused = Self::new(ErrorCode::ServiceUnavailable, "Storage is temporarily unavailable; retry later.");
            refused.retry_after = Some(BLOB_STORE_RETRY_SECONDS);
            refused
        } else {
            Self::internal(context, error)
        }
    }
}

/// Retry-After of a request refused while the object store does not answer: most outages of a
/// bucket are brief.
pub const BLOB_STORE_RETRY_SECONDS: u64 = 5;

/// Retry-After of a request refused for a full disk: freeing space takes an operator.
pub const OUT_OF_SPACE_RETRY_SECONDS: u64 = 60;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: self.code,
            message: &self.message,
            field: self.field,
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

impl From<RepoError> for ApiError {
    fn from(e: RepoError) -> Self {
        match e {
            RepoError::NotFound => Self::not_found(),
            RepoError::InvalidState(m) => Self::new(ErrorCode::InvalidState, m),
            RepoError::BatchEmpty => Self::new(
                ErrorCode::BatchEmpty,
                "The batch holds no document; deposit at least one before submitting.",
            ),
            RepoError::TooManyOpenBatches => Self::new(ErrorCode::TooManyOpenBatches, e.to_string()),
            RepoError::BatchFull => Self::new(ErrorCode::BatchFull, e.to_string()),
            RepoError::DocumentQuota => Self::new(ErrorCode::DocumentQuotaExceeded, e.to_string()),
            RepoError::VolumeQuota => Self::new(ErrorCode::VolumeQuotaExceeded, e.to_string()),
            RepoError::IaDesactivee => Self::new(ErrorCode::IaDesactivee, e.to_string()),
            RepoError::Invalid { field, message } => Self::invalid_request(field, message),
            // Only the operator CLI can ask for what a company's licence refuses.
            RepoError::Refused(m) => Self::new(ErrorCode::InvalidState, m),
            RepoError::Store(e) => e.into(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        if e.is_out_of_space() {
            Self::out_of_space("store")
        } else {
            Self::internal("store", e)
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk, from SQLite or the blob store, is 503 `service_unavailable` with Retry-After;
    /// any other failure stays a 500.
    #[test]
    fn a_full_disk_is_503_with_retry_after() {
        let full = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL), None);
        let io = |errno| BlobError::Io(std::io::Error::from_raw_os_error(errno));
        for refused in [
            ApiError::from(RepoError::Store(StoreError::Sqlite(full))),
            ApiError::blob("test", io(28)),
        ] {
            assert_eq!(
                (refused.status, refused.code),
                (StatusCode::SERVICE_UNAVAILABLE, ErrorCode::ServiceUnavailable)
            );
            let response = refused.into_response();
            assert_eq!(response.headers()[header::RETRY_AFTER], "60");
        }
        assert_eq!(ApiError::blob("test", io(5)).code, ErrorCode::InternalError);
        let down = ApiError::blob("test", BlobError::Unavailable(common::blobs::Outage::Saturated));
        assert_eq!((down.status, down.retry_after), (StatusCode::SERVICE_UNAVAILABLE, Some(5)));
        assert_eq!(ApiError::from(StoreError::WriterGone).code, ErrorCode::InternalError);
    }
}
