//! The portal's one stylesheet, served from the binary under a path that names its content, so
//! browsers may keep it for a year and a new version is a new path.

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

pub const CSS: &str = include_str!("portal.css");

/// Where the stylesheet is served (its version is the crate's).
pub const CSS_PATH: &str = concat!("/portal/assets/portal-", env!("CARGO_PKG_VERSION"), ".css");

pub async fn stylesheet() -> Response {
    let mut response = CSS.into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/css; charset=utf-8"));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}
