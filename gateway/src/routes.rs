//! The route table: one entry per operation. The router and the OpenAPI document are both built
//! from it, so they cannot drift apart.

use crate::api;
use crate::state::AppState;
use axum::http::Method;
use axum::routing::{get, post, MethodRouter};
use axum::Router;

/// One operation served over HTTP: the public API, its probes, and the pages (with their
/// session endpoints) end customers reach through links.
pub struct Route {
    pub method: Method,
    pub path: &'static str,
    pub operation_id: &'static str,
    pub summary: &'static str,
    /// Whether the operation requires an API key.
    pub authenticated: bool,
    pub handler: fn() -> MethodRouter<AppState>,
}

macro_rules! route {
    ($method:ident, $path:literal, $op:literal, $summary:literal, $auth:literal, $make:expr) => {
        Route {
            method: Method::$method,
            path: $path,
            operation_id: $op,
            summary: $summary,
            authenticated: $auth,
            handler: || $make,
        }
    };
}

pub fn table() -> Vec<Route> {
    vec![
        route!(
            GET,
            "/api/v1/workflows",
            "listWorkflows",
            "List the company's workflows, most recent first",
            true,
            get(api::workflows::list)
        ),
        route!(
            POST,
            "/api/v1/verifications",
            "createVerification",
            "Create a verification session (server-side only)",
            true,
            post(api::verifications::create)
        ),
        route!(
            GET,
            "/api/v1/verifications/{id}",
            "getVerification",
            "Read a verification session and its status",
            true,
            get(api::verifications::get)
        ),
        route!(
            GET,
            "/api/v1/consultations",
            "listConsultations",
            "List results, most recent first, with filters and a cursor",
            true,
            get(api::consultations::list)
        ),
        route!(
            GET,
            "/api/v1/consultations/{id}",
            "getConsultation",
            "Read one result",
            true,
            get(api::consultations::get)
        ),
        route!(
            GET,
            "/api/v1/consultations/{id}/images/{side}",
            "getConsultationImage",
            "Download an image of a result (audited)",
            true,
            get(api::images::download)
        ),
        route!(
            GET,
            "/api/v1/consultations/{id}/certificate",
            "getConsultationCertificate",
            "Download the PDF certificate of a result",
            true,
            get(api::certificate::download)
        ),
        route!(
            POST,
            "/api/v1/batches",
            "createBatch",
            "Open a batch for 24 hours",
            true,
            post(api::batches::create)
        ),
        route!(
            GET,
            "/api/v1/batches",
            "listBatches",
            "List batches, most recent first",
            true,
            get(api::batches::list)
        ),
        route!(
            GET,
            "/api/v1/batches/{id}",
            "getBatch",
            "Read a batch with its documents",
            true,
            get(api::batches::get)
        ),
        route!(
            POST,
            "/api/v1/batches/{id}/documents",
            "depositDocument",
            "Add one document to an open batch",
            true,
            post(api::deposits::deposit)
        ),
        route!(
            POST,
            "/api/v1/batches/{id}/submit",
            "submitBatch",
            "Close a batch and start its processing",
            true,
            post(api::batches::submit)
        ),
        route!(
            POST,
            "/api/v1/batches/{id}/cancel",
            "cancelBatch",
            "Cancel a batch",
            true,
            post(api::batches::cancel)
        ),
        route!(
            GET,
            "/api/v1/openapi.json",
            "getOpenApi",
            "This OpenAPI 3.1 document",
            false,
            get(crate::openapi::serve)
        ),
        route!(GET, "/healthz", "healthz", "Liveness", false, get(crate::ops::healthz)),
        route!(
            GET,
            "/readyz",
            "readyz",
            "Readiness (database reachable)",
            false,
            get(crate::ops::readyz)
        ),
        route!(
            GET,
            "/v/{token}",
            "journeyPage",
            "The customer journey page behind a verificationUrl",
            false,
            get(crate::journey::pages::journey)
        ),
        // The session endpoints the journey page's own script calls. The session token in the path
        // is their credential (no API key); writes also need the page's `X-CSRF-Token`.
        route!(
            POST,
            "/v/{token}/files/{side}",
            "uploadJourneyFile",
            "Upload one file of a journey (raw body), replacing an earlier upload of that side",
            false,
            post(crate::journey::uploads::upload)
        ),
        route!(
            POST,
            "/v/{token}/submit",
            "submitJourney",
            "Close a journey to uploads and start its analysis",
            false,
            post(crate::journey::uploads::submit)
        ),
        route!(
            GET,
            "/v/{token}/status",
            "getJourneyStatus",
            "Where a journey stands (never its verdict), polled by the page",
            false,
            get(crate::journey::uploads::status)
        ),
        route!(
            GET,
            "/authenticite/{link}",
            "authenticityPage",
            "The public page behind a certificate's QR code, confirming it was issued by Sceau",
            false,
            get(crate::authenticity::page)
        ),
    ]
}

/// The router of every route of [`table`], paths with several methods merged.
pub fn router() -> Router<AppState> {
    let mut by_path: Vec<(&'static str, MethodRouter<AppState>)> = Vec::new();
    for (path, handler) in table().into_iter().map(|r| (r.path, (r.handler)())) {
        match by_path.iter_mut().find(|(p, _)| *p == path) {
            Some((_, existing)) => *existing = std::mem::take(existing).merge(handler),
            None => by_path.push((path, handler)),
        }
    }
    by_path
        .into_iter()
        .fold(Router::new(), |router, (path, handler)| router.route(path, handler))
        .fallback(|| async { crate::error::ApiError::not_found() })
}
