//! Authentication: `Authorization: Bearer <key>` on every API call. A read-only key may only GET;
//! an address that keeps presenting wrong keys is throttled (`rate_limited`) before any lookup.
//! A key's last use is recorded at most once a minute, off the request's path. A handler that
//! serves what only some keys may reach takes the extractor of that scope ([`ImagesCaller`])
//! instead of [`Caller`], so it cannot forget the check.

use crate::client_addr::ClientAddr;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, Method};
use common::crypto::api_key::PresentedKey;
use common::store::api_keys;
use domain::ids::CompanyId;
use domain::key_scopes::{KeyScopes, Scope};
use domain::vocabulary::{ErrorCode, Mode};

/// The authenticated company and key behind a request.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The account whose data the key acts on: the company, or its test account for a test key
    /// (`companies::account`), so every query scoped by it stays in the key's mode.
    pub company_id: CompanyId,
    pub key_prefix: String,
    pub read_only: bool,
    pub mode: Mode,
    /// What the key reaches beyond results, batches and deposits.
    pub scopes: KeyScopes,
}

/// Why a key without the `images` scope is refused a result's images or its certificate.
pub const NO_IMAGES_SCOPE: &str =
    "This API key has no access to images and certificates: they need a key with the images scope, made by an owner or an admin.";

/// A caller whose key holds the `images` scope: the only caller the handlers of a result's
/// images and certificate take. Any other key is refused 403 `forbidden` before they run.
#[derive(Debug, Clone)]
pub struct ImagesCaller(pub Caller);

impl FromRequestParts<AppState> for ImagesCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if !caller.scopes.has(Scope::Images) {
            return Err(ApiError::new(ErrorCode::Forbidden, NO_IMAGES_SCOPE));
        }
        Ok(ImagesCaller(caller))
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    /// Failed attempts are throttled per client address, and a throttled address is refused before
    /// its key is even looked up, whatever the key: were a good key let through, the throttle would
    /// still answer each guess (429 for a wrong key, 200 for a right one) and stop nothing.
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Already authenticated by a layer that needed the caller first (`idempotency`).
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(caller.clone());
        }
        let address = ClientAddr::of(&parts.extensions, &parts.headers, &state.trusted_proxies).limit_key();
        let failures = &state.edge_limits.key_failures;
        if let Some(address) = &address {
            failures.peek(address).map_err(ApiError::rate_limited)?;
        }
        match authenticate(parts, state).await {
            Ok(caller) => Ok(caller),
            Err(Refusal::WrongKey) => {
                if let Some(address) = &address {
                    failures.charge(address);
                }
                Err(ApiError::invalid_api_key())
            }
            Err(Refusal::Other(error)) => Err(error),
        }
    }
}

/// Why a request was not authenticated: a wrong key counts against its address, nothing else does.
enum Refusal {
    /// Absent, malformed, unknown or revoked.
    WrongKey,
    /// A read-only key on a write, or the store failing.
    Other(ApiError),
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal::Other(error)
    }
}

async fn authenticate(parts: &Parts, state: &AppState) -> Result<Caller, Refusal> {
    let token = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .ok_or(Refusal::WrongKey)?;
    let presented = PresentedKey::parse(token).ok_or(Refusal::WrongKey)?;
    // On this thread: one lookup by primary key in a WAL reader takes about 10 µs, a hop to a
    // blocking thread and back about 50 µs, on every request of the API.
    let owner = state
        .store
        .read_here(|c| api_keys::authenticate(c, &presented))
        .map_err(ApiError::from)?
        .ok_or(Refusal::WrongKey)?;
    record_use(state, &owner);
    let safe = matches!(parts.method, Method::GET | Method::HEAD);
    if owner.read_only && !safe {
        return Err(Refusal::Other(ApiError::new(
            ErrorCode::ReadOnlyKey,
            "A read-only key can only call GET operations.",
        )));
    }
    Ok(Caller {
        company_id: owner.company_id,
        key_prefix: owner.prefix,
        read_only: owner.read_only,
        mode: owner.mode,
        scopes: owner.scopes,
    })
}

/// Records the key's use for the portal's "last used" when the stored one is a minute old, in a
/// task of its own: the request neither waits for that write nor fails with it, and a key used
/// all day costs one write a minute, not one per request.
fn record_use(state: &AppState, owner: &api_keys::KeyOwner) {
    let now = chrono::Utc::now();
    if !api_keys::needs_touch(owner, now) {
        return;
    }
    let (store, prefix) = (state.store.clone(), owner.prefix.clone());
    tokio::spawn(async move {
        if let Err(e) = store.write(move |tx| api_keys::touch(tx, &prefix, now)).await {
            tracing::warn!(error = %e, "could not record an API key's last use");
        }
    });
}
