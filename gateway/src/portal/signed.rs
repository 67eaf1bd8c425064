//! The member behind a portal request: found from the session cookie (by its hash), refused to
//! the sign-in page when the session is gone, sent to the second factor or to its enrolment when
//! one is due. Handlers then ask [`Signed::require`] for the permission of their route.

use super::cookies::Cookie;
use super::error::{PortalError, PortalResult};
use super::guard;
use super::lang::portal_lang;
use crate::client_addr::ClientAddr;
use crate::i18n::Lang;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use common::crypto::session_token::Token;
use common::store::audit::{Acting, Actor};
use common::store::members::Member;
use common::store::portal_sessions::{self, PortalSession};
use common::store::{companies, RepoError};
use domain::model::Company;
use domain::team::Permission;

/// A signed-in member, with their session and company.
#[derive(Debug, Clone)]
pub struct Signed {
    pub session: PortalSession,
    pub company: Company,
    pub lang: Lang,
    pub client: ClientAddr,
    /// The hash of this request's session secret.
    pub token_hash: [u8; 32],
}

impl Signed {
    pub fn member(&self) -> &Member {
        &self.session.member
    }

    /// Refuses, with the 403 page, what the member's role may not do.
    pub fn require(&self, permission: Permission) -> PortalResult<()> {
        if self.member().role.may(permission) {
            Ok(())
        } else {
            Err(PortalError::Forbidden)
        }
    }

    /// Refuses a form that does not carry this session's CSRF token.
    pub fn check_csrf(&self, presented: &str) -> PortalResult<()> {
        if guard::token_matches(&self.session.csrf_token, presented) {
            Ok(())
        } else {
            Err(PortalError::BadForm)
        }
    }

    /// The member acting, from this request's address, for the audit log.
    pub fn acting(&self) -> Acting {
        Acting {
            actor: Actor::Member {
                id: self.member().id.clone(),
                email: self.member().email.clone(),
            },
            ip: self.client.for_audit(),
        }
    }

    /// Whether the company requires a second factor the member has not enrolled yet.
    pub fn must_enrol(&self) -> bool {
        self.company.two_factor_required && !self.member().two_factor
    }
}

/// The session this request's cookie names, whatever its state (the second-factor step needs
/// the sessions still waiting for it).
pub fn session_of(state: &AppState, parts: &Parts) -> PortalResult<Option<(PortalSession, [u8; 32])>> {
    let Some(token) = Cookie::Session.read(state, &parts.headers).and_then(Token::parse) else {
        return Ok(None);
    };
    let hash = token.hash();
    let now = chrono::Utc::now();
    let session = state
        .store
        .read_here(move |c| portal_sessions::find(c, &hash, now))
        .map_err(PortalError::from)?;
    Ok(session.map(|s| (s, hash)))
}

/// Pages a member who must enrol a second factor may still reach.
fn reachable_before_enrolment(path: &str) -> bool {
    path.starts_with("/portal/account") || path == "/portal/logout"
}

impl FromRequestParts<AppState> for Signed {
    type Rejection = PortalError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> PortalResult<Self> {
        let (session, token_hash) = session_of(state, parts)?.ok_or(PortalError::SignIn)?;
        if session.second_factor_due {
            return Err(PortalError::Redirect("/portal/login/code".into()));
        }
        let now = chrono::Utc::now();
        if portal_sessions::needs_touch(&session, now) {
            state
                .store
                .write(move |tx| portal_sessions::touch(tx, &token_hash, now))
                .await
                .map_err(PortalError::from)?;
        }
        let company_id = session.member.company_id.clone();
        let company = state
            .store
            .read_here(move |c| companies::get(c, &company_id))
            .map_err(|e: RepoError| PortalError::Internal(e.to_string()))?;
        let signed = Signed {
            lang: portal_lang(state, &parts.headers),
            client: ClientAddr::of(&parts.extensions, &parts.headers, &state.trusted_proxies),
            session,
            company,
            token_hash,
        };
        if signed.must_enrol() && !reachable_before_enrolment(parts.uri.path()) {
            return Err(PortalError::Redirect("/portal/account/two-factor".into()));
        }
        Ok(signed)
    }
}
