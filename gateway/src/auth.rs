//! Authentication: `Authorization: Bearer <key>` on every API call. A read-only key may only GET.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, Method, StatusCode};
use common::crypto::api_key::PresentedKey;
use common::ids::CompanyId;
use common::store::api_keys;

/// The authenticated company and key behind a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub company_id: CompanyId,
    pub key_prefix: String,
    pub read_only: bool,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
            .map(str::trim)
            .ok_or_else(ApiError::invalid_api_key)?
            .to_owned();
        if PresentedKey::parse(&token).is_none() {
            return Err(ApiError::invalid_api_key());
        }
        let owner = state
            .store
            .read(move |c| {
                let presented = PresentedKey::parse(&token).ok_or(common::store::RepoError::NotFound)?;
                api_keys::authenticate(c, &presented)
            })
            .await?
            .ok_or_else(ApiError::invalid_api_key)?;
        let safe = matches!(parts.method, Method::GET | Method::HEAD);
        if owner.read_only && !safe {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "read_only_key",
                "A read-only key can only call GET operations.",
            ));
        }
        Ok(Caller {
            company_id: owner.company_id,
            key_prefix: owner.prefix,
            read_only: owner.read_only,
        })
    }
}

/// The client address, for the audit log.
pub fn client_ip(parts_ext: &axum::http::Extensions) -> Option<String> {
    parts_ext
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip().to_string())
}
