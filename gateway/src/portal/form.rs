//! Portal forms: `application/x-www-form-urlencoded` bodies, small, whose rejection is the
//! portal's "form expired" page rather than the API's JSON error.

use super::error::PortalError;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

/// The largest form the portal accepts; its forms hold a few short fields.
pub const FORM_LIMIT: usize = 64 * 1024;

pub struct Form<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Form<T> {
    type Rejection = PortalError;

    async fn from_request(req: Request, state: &S) -> Result<Self, PortalError> {
        match axum::Form::<T>::from_request(req, state).await {
            Ok(axum::Form(value)) => Ok(Form(value)),
            Err(_) => Err(PortalError::BadForm),
        }
    }
}
