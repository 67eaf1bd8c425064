//! The router: every operation, registered with the OpenAPI description its handler carries
//! (`#[utoipa::path]`), so the router and the document are built from the same list and cannot
//! drift apart.

use crate::state::AppState;
use crate::{api, authenticity, journey, openapi, ops};
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Every route: the public API, its probes, and the pages (with their session endpoints) end
/// customers reach through links. Handlers of one path are registered together.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(api::workflows::list))
        .routes(routes!(api::verifications::create))
        .routes(routes!(api::verifications::get))
        .routes(routes!(api::verifications::simulate))
        .routes(routes!(api::consultations::list))
        .routes(routes!(api::consultations::get))
        .routes(routes!(api::images::download))
        .routes(routes!(api::certificate::download))
        .routes(routes!(api::batches::create, api::batches::list))
        .routes(routes!(api::batches::get))
        .routes(routes!(api::deposits::deposit))
        .routes(routes!(api::batches::submit))
        .routes(routes!(api::batches::cancel))
        .routes(routes!(openapi::serve))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        // The page and its plain form post: three files of 10 MB and their framing.
        .merge(
            OpenApiRouter::new()
                .routes(routes!(journey::pages::journey, journey::form_post::post))
                .layer(axum::extract::DefaultBodyLimit::max(journey::form_post::BODY_LIMIT)),
        )
        .routes(routes!(journey::uploads::upload))
        .routes(routes!(journey::uploads::submit))
        .routes(routes!(journey::uploads::status))
        .routes(routes!(journey::logo::logo))
        .routes(routes!(authenticity::page))
        .fallback(|| async { crate::error::ApiError::not_found() })
}
