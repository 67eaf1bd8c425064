//! The current password, asked again before a change that needs it (password change, two-factor
//! removal): counted against the account's sign-in throttle before it is checked, so that a
//! stolen session guesses no faster than the sign-in form allows, and checked on the password
//! pool. Also the answers every throttled form gives: 429 while locked, 503 while every hashing
//! slot is taken, each with `Retry-After`.

use super::error::PortalResult;
use crate::password_pool::{Slot, RETRY_AFTER_SECS};
use crate::state::AppState;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use chrono::{DateTime, Utc};
use common::crypto::password::Password;
use common::store::members::{self, Member};
use common::store::sign_in_throttle::{self, Admitted, Attempt, Scope};
use common::store::RepoError;

/// What the check of a current password found.
pub enum Checked<T> {
    /// The right password; `admitted` is the attempt to undo in the write that acts on it.
    Right { value: T, admitted: Admitted },
    /// A wrong one, counted.
    Wrong,
    /// The account is locked until then; nothing was checked.
    Locked(DateTime<Utc>),
}

/// Whether `candidate` is `member`'s password.
pub async fn check(state: &AppState, member: &Member, candidate: String) -> PortalResult<Checked<()>> {
    let (slot, stored, admitted) = match admit(state, member).await? {
        Ok(admitted) => admitted,
        Err(until) => return Ok(Checked::Locked(until)),
    };
    Ok(match slot.verify(stored, candidate).await? {
        true => Checked::Right { value: (), admitted },
        false => Checked::Wrong,
    })
}

/// Whether `candidate` is `member`'s password, and if so the hash of `chosen` to replace it.
pub async fn check_then_hash(state: &AppState, member: &Member, candidate: String, chosen: Password) -> PortalResult<Checked<String>> {
    let (slot, stored, admitted) = match admit(state, member).await? {
        Ok(admitted) => admitted,
        Err(until) => return Ok(Checked::Locked(until)),
    };
    Ok(match slot.verify_then_hash(stored, candidate, chosen).await? {
        Some(value) => Checked::Right { value, admitted },
        None => Checked::Wrong,
    })
}

/// A hashing slot, then the attempt counted in one write with the stored hash read: the slot
/// first, so that a request refused for want of one has written nothing.
async fn admit(state: &AppState, member: &Member) -> PortalResult<Result<(Slot, Option<String>, Admitted), DateTime<Utc>>> {
    let slot = state.passwords.slot().await?;
    let (id, email) = (member.id.clone(), member.email.clone());
    let admitted = state
        .store
        .write(
            move |tx| match sign_in_throttle::attempt(tx, &[Scope::Account(&email)], chrono::Utc::now())? {
                Attempt::Locked(until) => Ok::<_, RepoError>(Err(until)),
                Attempt::Admitted(admitted) => Ok(Ok((members::credentials_of(tx, &id)?.password_hash, admitted))),
            },
        )
        .await?;
    Ok(admitted.map(|(stored, admitted)| (slot, stored, admitted)))
}

/// `page` as the answer to an attempt refused while a lock holds until `until`: 429, and
/// `Retry-After` when it ends.
pub fn locked(mut page: Response, until: DateTime<Utc>) -> Response {
    let left = u64::try_from((until - chrono::Utc::now()).num_milliseconds()).unwrap_or(0);
    let wait = left.div_ceil(1000).max(1);
    *page.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    page.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(wait));
    page
}

/// `page` as the answer to a request that found no hashing slot: 503, `Retry-After`.
pub fn busy(mut page: Response) -> Response {
    *page.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    page.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    page
}
