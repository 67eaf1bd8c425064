//! The portal for client companies' teams (PORTAL.md), under `/portal/`: server-rendered pages
//! that work without JavaScript, in French or English, each route refusing what the member's
//! role may not do. Unsafe requests pass the cross-site guard before their handler runs.

mod account;
mod api_keys;
mod assets;
mod audit_log;
mod batches;
mod chart;
mod cookies;
mod csv;
mod dashboard;
mod diffusion;
mod error;
mod form;
mod guard;
mod invitation;
mod lang;
mod layout;
mod password_check;
mod settings;
mod sign_in;
mod signed;
mod team;
mod usage;
// Results, a result with its images and review, the review queue (PORTAL.md pages 3 and 4).
mod face_match;
mod result;
mod result_files;
mod results;
mod review_queue;
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
        .route("/portal/team", get(team::page))
        .route("/portal/team/invitations", post(team::invite))
        .route("/portal/team/members/{id}/role", post(team::change_role))
        .route(
            "/portal/team/members/{id}/disable",
            get(team::confirm_disable_page).post(team::disable),
        )
        .route("/portal/settings", get(settings::page).post(settings::save))
        .route("/portal/settings/confirm", get(settings::confirm_page))
        .route(
            settings::journey::PATH,
            post(settings::journey::save).layer(axum::extract::DefaultBodyLimit::max(settings::journey::BODY_LIMIT)),
        )
        .route("/portal/audit", get(audit_log::page))
        .route("/portal/audit.csv", get(audit_log::export))
        .route("/portal/usage", get(usage::page))
        .route("/portal/usage.csv", get(usage::export))
        // Developers → API keys, and Batches.
        .route("/portal/api-keys", get(api_keys::page).post(api_keys::create))
        .route("/portal/api-keys/{prefix}/revoke", post(api_keys::revoke))
        .route("/portal/batches", get(batches::list))
        .route("/portal/batches/{id}", get(batches::detail))
        .route("/portal/batches/{id}/cancel", post(batches::cancel))
        // Results, a result with its images and review, the review queue (PORTAL.md pages 3 and 4).
        .route("/portal/consultations", get(results::page))
        .route("/portal/consultations/{id}", get(result::page))
        .route("/portal/consultations/{id}/review", post(result::settle))
        .route("/portal/consultations/{id}/images/{side}", get(result_files::image))
        .route("/portal/consultations/{id}/certificate", get(result_files::certificate))
        .route("/portal/reviews", get(review_queue::page))
        .route("/portal/workflows", get(workflows::list).post(workflows::create))
        .route("/portal/workflows/{id}", get(workflows::settings).post(workflows::update))
        .route("/portal/workflows/{id}/diffusion", get(diffusion::page).post(diffusion::set_url))
        .route("/portal/workflows/{id}/diffusion/test", post(diffusion::test))
        .route("/portal/workflows/{id}/diffusion/rotate", post(diffusion::rotate))
        .route("/portal/workflows/{id}/diffusion/rotate-test", post(diffusion::rotate_test))
        .route("/portal/workflows/{id}/diffusion/replay/{event}", post(diffusion::replay))
        .route(assets::CSS_PATH, get(assets::stylesheet))
        .route("/portal/{*rest}", get(|| async { error::PortalError::NotFound }))
        .layer(axum::extract::DefaultBodyLimit::max(form::FORM_LIMIT))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::refuse_cross_site))
        .layer(axum::middleware::from_fn_with_state(state, error::render_error_pages))
}
