//! What a portal handler can answer instead of its page: a redirect (to sign in, or after a
//! form), or an error page in the visitor's language, rendered by [`render_error_pages`] which
//! knows the request. Details of internal errors go to the log, never to the page.

use super::lang::portal_lang;
use super::layout;
use crate::password_pool::{HashError, RETRY_AFTER_SECS};
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use common::store::RepoError;

#[derive(Debug)]
pub enum PortalError {
    /// No live session: to the sign-in page.
    SignIn,
    /// Elsewhere in the portal (a step still due, such as the second factor).
    Redirect(String),
    /// The role may not do this (PORTAL.md: refused by the server with a 403 page).
    Forbidden,
    /// Unknown here, or another company's.
    NotFound,
    /// A form without its CSRF token, or sent from another site.
    BadForm,
    /// Every password hashing slot stayed taken: come back later (503 with `Retry-After`).
    Busy,
    /// Something broke on our side; logged with the request id.
    Internal(String),
}

pub type PortalResult<T> = Result<T, PortalError>;

impl From<HashError> for PortalError {
    fn from(e: HashError) -> Self {
        match e {
            HashError::Busy => PortalError::Busy,
            HashError::Stopped => PortalError::Internal(e.to_string()),
        }
    }
}

impl From<RepoError> for PortalError {
    fn from(e: RepoError) -> Self {
        match e {
            RepoError::NotFound => PortalError::NotFound,
            other => PortalError::Internal(other.to_string()),
        }
    }
}

/// The error page a response stands for, filled in by [`render_error_pages`].
#[derive(Debug, Clone, Copy)]
pub struct ErrorPage(StatusCode);

impl IntoResponse for PortalError {
    fn into_response(self) -> Response {
        let bad_form = matches!(self, PortalError::BadForm);
        let status = match self {
            PortalError::SignIn => return Redirect::to("/portal/login").into_response(),
            PortalError::Redirect(to) => return Redirect::to(&to).into_response(),
            PortalError::Forbidden => StatusCode::FORBIDDEN,
            PortalError::NotFound => StatusCode::NOT_FOUND,
            PortalError::BadForm => StatusCode::FORBIDDEN,
            PortalError::Busy => StatusCode::SERVICE_UNAVAILABLE,
            PortalError::Internal(detail) => {
                tracing::error!(error = %detail, "portal request failed");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        let mut response = status.into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        }
        response
            .extensions_mut()
            .insert(ErrorPage(if bad_form { StatusCode::UNPROCESSABLE_ENTITY } else { status }));
        response
    }
}

/// Turns an [`ErrorPage`] response into the page, in the language of the request.
pub async fn render_error_pages(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let lang = portal_lang(&state, req.headers());
    let response = next.run(req).await;
    let Some(ErrorPage(kind)) = response.extensions().get::<ErrorPage>().copied() else {
        return response;
    };
    let t = lang.portal();
    let (title, text) = match kind {
        StatusCode::FORBIDDEN => (t.forbidden_title, t.forbidden_text),
        StatusCode::NOT_FOUND => (t.not_found_title, t.not_found_text),
        StatusCode::UNPROCESSABLE_ENTITY => (t.error_title, t.expired_form),
        StatusCode::SERVICE_UNAVAILABLE => (t.busy_title, t.busy),
        _ => (t.error_title, t.error_text),
    };
    let status = if kind == StatusCode::UNPROCESSABLE_ENTITY {
        StatusCode::FORBIDDEN
    } else {
        response.status()
    };
    let mut page = layout::bare(lang, title, layout::message(title, text, Some(("/portal/", t.nav_dashboard))));
    *page.status_mut() = status;
    if let Some(wait) = response.headers().get(header::RETRY_AFTER) {
        page.headers_mut().insert(header::RETRY_AFTER, wait.clone());
    }
    page.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept-Language, Cookie"));
    page
}
