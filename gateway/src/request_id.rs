//! The id of the request being served (`x-request-id`, set by the middleware when the client
//! sent none), as an extractor: handlers hand it to the work they create, so a document's log
//! lines in the workers, the recorder and the notifier carry it too.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use common::telemetry::RequestId;
use std::convert::Infallible;

/// The request's id, when it is one [`RequestId::parse`] keeps.
#[derive(Debug, Clone)]
pub struct CurrentRequest(pub Option<RequestId>);

impl<S: Send + Sync> FromRequestParts<S> for CurrentRequest {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let id = parts
            .headers
            .get(crate::middleware::REQUEST_ID)
            .and_then(|value| value.to_str().ok())
            .and_then(RequestId::parse);
        Ok(CurrentRequest(id))
    }
}
