//! The portal for client companies' teams (PORTAL.md), under `/portal/`: server-rendered pages
//! that work without JavaScript, in French or English, each route refusing what the member's
//! role may not do. Unsafe requests pass the cross-site guard before their handler runs.

mod account;
mod assets;
mod chart;
mod cookies;
mod dashboard;
mod diffusion;
mod error;
mod form;
mod guard;
mod invitation;
mod lang;
mod layout;
mod sign_in;
mod signed;
mod workflow_form;
mod workflows;

use crate::state::AppState;
use axum::routing::{get, post};
use axum::Router;

/// Every portal route, with its guards.
pub fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/portal", get(|| async { axum::response::Redirect::permanent("/portal/") }))
        .route("/portal/", get(dashboard::page))
        .route("/portal/login", get(sign_in::page).post(sign_in::submit))
        .route("/portal/login/code", get(sign_in::code_page).post(sign_in::code_submit))
        .route("/portal/logout", post(sign_in::sign_out))
        .route("/portal/invitations/{token}", get(invitation::page).post(invitation::accept))
        .route("/portal/account", get(account::page))
        .route("/portal/account/password", post(account::change_password))
        .route("/portal/account/language", post(account::set_language))
        .route("/portal/account/sessions/{id}/revoke", post(account::revoke_session))
        .route("/portal/account/two-factor", get(account::enrol_page).post(account::enrol))
        .route("/portal/account/two-factor/disable", post(account::disable))
        .route("/portal/workflows", get(workflows::list).post(workflows::create))
        .route("/portal/workflows/{id}", get(workflows::settings).post(workflows::update))
        .route("/portal/workflows/{id}/diffusion", get(diffusion::page).post(diffusion::set_url))
        .route("/portal/workflows/{id}/diffusion/test", post(diffusion::test))
        .route("/portal/workflows/{id}/diffusion/rotate", post(diffusion::rotate))
        .route("/portal/workflows/{id}/diffusion/replay/{event}", post(diffusion::replay))
        .route(assets::CSS_PATH, get(assets::stylesheet))
        .route("/portal/{*rest}", get(|| async { error::PortalError::NotFound }))
        .layer(axum::extract::DefaultBodyLimit::max(form::FORM_LIMIT))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::refuse_cross_site))
        .layer(axum::middleware::from_fn_with_state(state, error::render_error_pages))
}
