//! The customer journey behind a `verificationUrl`: server-rendered pages (no front-end build) and
//! the session-scoped endpoints their small script calls. The session token in the path is the
//! only credential; every write also needs the page's CSRF token (see `uploads`).

pub mod assets;
pub mod i18n;
pub mod pages;
pub mod uploads;

/// Journey tokens are base62; anything else cannot be a token and is refused before any lookup.
pub fn plausible_token(token: &str) -> bool {
    !token.is_empty() && token.len() <= 128 && token.bytes().all(|b| b.is_ascii_alphanumeric())
}
