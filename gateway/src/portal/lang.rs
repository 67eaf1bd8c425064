//! The portal's language: the member's choice (kept in a cookie, set at sign-in and when they
//! change it), else the browser's `Accept-Language`, French by default.

use super::cookies::Cookie;
use crate::i18n::Lang;
use crate::state::AppState;
use axum::http::HeaderMap;

pub fn portal_lang(state: &AppState, headers: &HeaderMap) -> Lang {
    match Cookie::Lang.read(state, headers) {
        Some("fr") => Lang::Fr,
        Some("en") => Lang::En,
        _ => Lang::from_headers(headers),
    }
}

/// The code stored for a member's choice.
pub fn parse(code: &str) -> Option<Lang> {
    match code {
        "fr" => Some(Lang::Fr),
        "en" => Some(Lang::En),
        _ => None,
    }
}
