//! `GET /api/v1/consultations/{id}/images/{side}`: the decrypted image, every download audited.

use super::{download, path_id};
use crate::auth::Caller;
use crate::client_addr::ClientAddr;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::Response;
use common::domain::ErrorCode;
use common::domain::ImageSide;
use common::ids::ConsultationId;
use common::store::audit;
use common::store::consultations::{self, ImageRef};
use common::team::AuditAction;

crate::openapi::errors::errors!(DownloadErrors: Read + InvalidRequest + NotFound + ImagePurged + ServiceUnavailable);

/// The image of a result, in the media type it was stored as: every accepted file kind.
pub struct Image;

impl utoipa::IntoResponses for Image {
    fn responses() -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        let image = download::documented(
            "The image, as stored (administrative documents may be a PDF or TIFF).",
            common::document::FileKind::ALL.iter().map(|kind| kind.content_type()),
            "<consultation id>-<side>.<jpg|png|webp|tif|pdf>",
        );
        [("200".to_owned(), image.into())].into()
    }
}

/// Download an image of a result (audited).
///
/// Every download is audited (key, IP address, time). An image removed by the retention policy
/// answers 404 `image_purged`.
#[utoipa::path(
    get,
    path = "/api/v1/consultations/{id}/images/{side}",
    operation_id = "getConsultationImage",
    tag = "Consultations",
    security(("bearerAuth" = [])),
    params(
        ("id" = ConsultationId, Path, description = "Consultation id (`consultationId` of a webhook or a list)."),
        ("side" = ImageSide, Path, description = "Which image."),
    ),
    responses(Image, DownloadErrors),
)]
pub async fn download(
    State(state): State<AppState>,
    caller: Caller,
    client: ClientAddr,
    Path((id, side)): Path<(String, String)>,
) -> ApiResult<Response> {
    let id: ConsultationId = path_id(&id)?;
    let side: ImageSide = side
        .parse()
        .map_err(|_| ApiError::invalid_request("side", "side must be recto, verso or selfie."))?;
    let company = caller.company_id.clone();
    let lookup = id.clone();
    let image = state.store.read(move |c| {
        consultations::get(c, &company, &lookup)?;
        consultations::image(c, &company, &lookup, side)
    });
    let (blob, kind) = match image.await? {
        None => return Err(ApiError::not_found()),
        Some(ImageRef::Purged) => {
            return Err(ApiError::new(
                ErrorCode::ImagePurged,
                "This image was removed by the retention policy.",
            ))
        }
        Some(ImageRef::Stored { blob, kind }) => (blob, kind),
    };
    let context = consultations::image_context(&caller.company_id, &id, side);
    let bytes = state
        .blobs
        .get(&blob, &context)
        .await
        .map_err(|e| ApiError::internal("image blob", e))?;
    let entry = audit::AuditEntry::new(
        AuditAction::ImageDownloaded,
        format!("{id}/{side}"),
        &audit::Actor::ApiKey {
            prefix: caller.key_prefix.clone(),
        },
        client.for_audit(),
        chrono::Utc::now(),
    );
    let company = caller.company_id;
    state.store.write(move |tx| audit::record(tx, &company, &entry)).await?;
    Ok(download::attachment(
        kind.content_type(),
        &download::file_name(&id, side.as_str(), kind.extension()),
        bytes,
    ))
}
