//! Cross-site request forgery (PORTAL.md, Security): every unsafe request must come from the
//! portal's own pages (`Sec-Fetch-Site`, else `Origin`, checked before the body is read) and
//! carry the form's token, compared in constant time.

use super::error::PortalError;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

/// Refuses an unsafe request sent by another site, before its handler reads anything.
pub async fn refuse_cross_site(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD);
    if !safe && !same_origin(&state, req.headers()) {
        return PortalError::BadForm.into_response();
    }
    next.run(req).await
}

/// Whether the browser says the request comes from our own origin. A client that sends neither
/// header is not a browser, and cannot be made to forge a request; the form token still applies.
fn same_origin(state: &AppState, headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return matches!(site, "same-origin" | "none");
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else { return false };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    origin == public_origin(&state.public_base) || host.is_some_and(|h| origin == format!("http://{h}") || origin == format!("https://{h}"))
}

/// `scheme://host[:port]` of the public base URL.
fn public_origin(base: &str) -> &str {
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    match base[after_scheme..].find('/') {
        Some(i) => &base[..after_scheme + i],
        None => base,
    }
}

/// Whether the form's token is the expected one.
pub fn token_matches(expected: &str, presented: &str) -> bool {
    !expected.is_empty() && bool::from(expected.as_bytes().ct_eq(presented.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_origin_drops_the_path() {
        assert_eq!(public_origin("https://sceau.example.fr/base"), "https://sceau.example.fr");
        assert_eq!(public_origin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(token_matches("abc", "abc"));
        assert!(!token_matches("abc", "abd") && !token_matches("abc", "ab") && !token_matches("", ""));
    }
}
