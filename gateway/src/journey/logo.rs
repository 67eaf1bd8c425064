//! `GET /v/{token}/logo`: the company's logo on its journey's pages, as Sceau re-encoded it (see
//! `common::logo`), behind the session's token like the rest of the journey.

use super::{check_address, check_session, no_such_session};
use crate::client_addr::ClientAddr;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use common::store::{branding, verifications};

crate::openapi::errors::errors!(LogoErrors: Public + NotFound + RateLimited);

/// The logo: a PNG, as bytes.
pub struct LogoPng;

impl utoipa::IntoResponses for LogoPng {
    fn responses() -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        use utoipa::openapi::{ContentBuilder, KnownFormat, ResponseBuilder, SchemaFormat};
        let binary = ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .build();
        let response = ResponseBuilder::new()
            .description("The logo, re-encoded by Sceau.")
            .content("image/png", ContentBuilder::new().schema(Some(binary)).build())
            .build();
        [("200".to_owned(), response.into())].into()
    }
}

/// The logo of the company behind a journey (a PNG Sceau made from the company's upload).
///
/// Shown by the journey's pages when the company set a logo; 404 `not_found` when it set none or
/// the link is unknown. Limited like the status polls (per session, then per client address).
#[utoipa::path(
    get,
    path = "/v/{token}/logo",
    operation_id = "getJourneyLogo",
    tag = "Journey",
    params(("token" = String, Path, description = "The token of a verificationUrl.", pattern = "^[A-Za-z0-9]{1,128}$")),
    responses(
        LogoPng,
        LogoErrors,
    ),
)]
pub async fn logo(State(state): State<AppState>, Path(token): Path<String>, client: ClientAddr) -> ApiResult<Response> {
    if !super::plausible_token(&token) {
        return Err(no_such_session(&state, &client));
    }
    let lookup = token.clone();
    let journey = state
        .store
        .read(move |c| verifications::journey(c, &lookup, chrono::Utc::now()))
        .await?
        .ok_or_else(|| no_such_session(&state, &client))?;
    check_session(&state.edge_limits.journey_polls, &journey)?;
    check_address(&state, &client)?;
    if !journey.company.settings.has_logo {
        return Err(ApiError::not_found());
    }
    let company = journey.company_id.clone();
    let png = state
        .store
        .read(move |c| branding::logo(c, &company))
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/png"),
            (header::CACHE_CONTROL, "private, max-age=600"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'; sandbox"),
        ],
        png,
    )
        .into_response())
}
