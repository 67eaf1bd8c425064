//! What every server-rendered page (journey, authenticity) shares: the response with the headers
//! a page for the public must carry. Pages are maud templates, which escape every interpolation.

use crate::i18n::Lang;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

/// An HTML page in `lang`: never cached or sent as referrer, not sniffed, varying with
/// `Accept-Language`, under the page's own Content-Security-Policy `csp`.
pub fn page(status: StatusCode, lang: Lang, csp: &str, html: String) -> Response {
    let mut response = (status, Html(html)).into_response();
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::VARY, HeaderValue::from_static("Accept-Language"));
    h.insert(header::CONTENT_LANGUAGE, HeaderValue::from_static(lang.code()));
    if let Ok(csp) = HeaderValue::from_str(csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}
