//! The customer journey behind a `verificationUrl`: server-rendered pages (no front-end build) and
//! the session-scoped endpoints their small script calls. The session token in the path is the
//! only credential; every write also needs the page's CSRF token (see `uploads`).
//!
//! Every journey request is limited per session first, so customers behind one address do not
//! spend each other's allowance, and per client address second. A token that names no session
//! counts against its address alone: guessing links is limited like everything else.

pub mod assets;
pub mod form_post;
pub mod logo;
pub mod pages;
mod templates;
pub mod uploads;

use crate::client_addr::ClientAddr;
use crate::error::ApiError;
use crate::rate_limit::RateLimiter;
use crate::state::AppState;
use common::store::verifications::Journey;

/// Journey tokens are base62; anything else cannot be a token and is refused before any lookup.
pub fn plausible_token(token: &str) -> bool {
    !token.is_empty() && token.len() <= 128 && token.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The session's own limit (`per_session`, the one of the kind of request).
pub fn check_session(per_session: &RateLimiter, journey: &Journey) -> Result<(), ApiError> {
    per_session.check(journey.id.as_str()).map_err(ApiError::rate_limited)
}

/// The client address's limit, shared by every journey request from it.
pub fn check_address(state: &AppState, client: &ClientAddr) -> Result<(), ApiError> {
    let Some(address) = client.limit_key() else {
        return Ok(());
    };
    state.edge_limits.journey_addresses.check(&address).map_err(ApiError::rate_limited)
}

/// The refusal of a token that names no session: counted against the address, then `not_found`.
pub fn no_such_session(state: &AppState, client: &ClientAddr) -> ApiError {
    match check_address(state, client) {
        Ok(()) => ApiError::not_found(),
        Err(limited) => limited,
    }
}
