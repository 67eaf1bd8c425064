//! The error responses of the OpenAPI document: generated from [`ErrorCode`] (its status and
//! meaning) and from the codes each handler declares beside itself with [`errors!`], so a
//! refusal is documented where it is answered.

use domain::vocabulary::ErrorCode;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, Ref, RefOr};

/// Who may call an operation, which brings the errors of authentication with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No API key (probes, the journey's session endpoints).
    Public,
    /// An API key, full or read-only.
    Read,
    /// An API key holding the `images` scope (`crate::auth::ImagesCaller`), full or read-only.
    Images,
    /// A full API key.
    Write,
}

impl Access {
    /// The codes every operation of this access may answer besides its own: a bad key, the
    /// throttle of wrong keys per client address, a read-only key on a write, a key without the
    /// scope, an idempotency key refused, and a bug.
    fn implied(self) -> &'static [ErrorCode] {
        use ErrorCode::*;
        match self {
            Access::Public => &[InternalError],
            Access::Read => &[InvalidApiKey, RateLimited, InternalError],
            Access::Images => &[InvalidApiKey, Forbidden, RateLimited, InternalError],
            // Every write takes an `Idempotency-Key` (`crate::idempotency`): a malformed one is an
            // `invalid_request`, a key in use or reused its own code.
            Access::Write => &[
                InvalidApiKey,
                ReadOnlyKey,
                RateLimited,
                InvalidRequest,
                IdempotencyKeyInUse,
                IdempotencyKeyReused,
                InternalError,
            ],
        }
    }
}

/// Declares the error responses of one operation: `errors!(Name: Write + InvalidRequest + …)`
/// makes `Name`, to list in the `responses(...)` of its `#[utoipa::path]`.
macro_rules! errors {
    ($(#[$meta:meta])* $name:ident: $access:ident $(+ $code:ident)*) => {
        $(#[$meta])*
        pub struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>> {
                $crate::openapi::errors::responses(
                    $crate::openapi::errors::Access::$access,
                    &[$(domain::vocabulary::ErrorCode::$code),*],
                )
            }
        }
    };
}
pub(crate) use errors;

/// The error responses of an operation, one per status: a reference to the code's response when
/// the status has one code, else one response listing its codes with an example of each.
pub fn responses(access: Access, codes: &[ErrorCode]) -> BTreeMap<String, RefOr<Response>> {
    let mut by_status: BTreeMap<u16, Vec<ErrorCode>> = BTreeMap::new();
    for &code in access.implied().iter().chain(codes) {
        let same_status = by_status.entry(code.status()).or_default();
        if !same_status.contains(&code) {
            same_status.push(code);
        }
    }
    by_status
        .into_iter()
        .map(|(status, codes)| (status.to_string(), status_response(&codes)))
        .collect()
}

/// `components.responses`: one reusable response per error code.
pub fn catalogue() -> BTreeMap<String, RefOr<Response>> {
    ErrorCode::ALL
        .iter()
        .map(|&code| (code.as_str().to_owned(), RefOr::T(response(&[code]))))
        .collect()
}

fn status_response(codes: &[ErrorCode]) -> RefOr<Response> {
    match codes {
        [code] => RefOr::Ref(Ref::from_response_name(code.as_str())),
        _ => RefOr::T(response(codes)),
    }
}

/// A JSON error response standing for `codes` (all of one status).
fn response(codes: &[ErrorCode]) -> Response {
    let description = codes
        .iter()
        .map(|code| format!("`{code}`: {}", code.meaning()))
        .collect::<Vec<_>>()
        .join(" ");
    let error = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(codes.iter().map(|code| code.as_str())));
    let schema = AllOfBuilder::new()
        .item(Ref::from_schema_name("Error"))
        .item(ObjectBuilder::new().property("error", error));
    let mut content = ContentBuilder::new().schema(Some(schema));
    content = match codes {
        [code] => content.example(Some(example(*code))),
        _ => content.examples_from_iter(codes.iter().map(|&code| {
            let example = ExampleBuilder::new().summary(code.meaning()).value(Some(example(code)));
            (code.as_str(), example.build())
        })),
    };
    let mut response = ResponseBuilder::new()
        .description(description)
        .content("application/json", content.build());
    if codes.iter().any(|code| code.has_retry_after()) {
        response = response.header("Retry-After", retry_after());
    }
    response.build()
}

/// `Retry-After`, on the refusals that say when to come back.
pub fn retry_after() -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .description(Some("Seconds to wait before retrying."))
        .schema(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)))
        .build()
}

/// An example body of `code`, as the API answers it.
fn example(code: ErrorCode) -> Value {
    use ErrorCode::*;
    let (message, field) = match code {
        InvalidRequest => ("limit must be an integer from 1 to 100.", Some("limit")),
        InvalidDocument => ("document has 3 pages; one page only.", Some("document")),
        InvalidApiKey => ("The API key is absent, malformed, unknown or revoked.", None),
        ReadOnlyKey => ("A read-only key can only call GET operations.", None),
        Forbidden => (crate::auth::NO_IMAGES_SCOPE, None),
        IaDesactivee => (
            "AI use is disabled for this company: administrative documents cannot be deposited",
            None,
        ),
        BrowserRequestForbidden => ("Sessions must be created from your server, never from a browser.", None),
        NotFound => ("No such resource.", None),
        ImagePurged => ("This image was removed by the retention policy.", None),
        InvalidState => (
            "batch BAT-3f9a1c07-88d2e4b1 is in_progress: documents can only be added to an open batch",
            None,
        ),
        BatchEmpty => ("The batch holds no document; deposit at least one before submitting.", None),
        IdempotencyKeyInUse => ("A request with this Idempotency-Key is still being processed.", None),
        IdempotencyKeyReused => ("This Idempotency-Key was used in the last 24 hours with another request.", None),
        DocumentTooLarge => ("document exceeds 10 Mo (10,000,000 bytes) once decoded.", Some("document")),
        PayloadTooLarge => ("The request body exceeds the 30 MB limit.", None),
        TooManyOpenBatches => ("three batches are already open; submit or cancel one before opening another", None),
        BatchFull => ("the batch already holds 200 documents; submit it and open another", None),
        DocumentQuotaExceeded => (
            "the company holds 400 documents not yet purged; close, cancel or wait for the purge of a batch before depositing more",
            None,
        ),
        VolumeQuotaExceeded => (
            "the company's pending file volume would exceed its limit; wait for batches to be processed before depositing more",
            None,
        ),
        RateLimited => ("Too many requests; retry after the delay given in Retry-After.", None),
        ServiceUnavailable => (
            "The service cannot store anything right now; nothing was kept. Retry after the delay given in Retry-After.",
            None,
        ),
        InternalError => ("An internal error occurred; it has been logged with the request id.", None),
    };
    let mut body = json!({ "error": code.as_str(), "message": message });
    if let Some(field) = field {
        body["field"] = json!(field);
    }
    body
}
