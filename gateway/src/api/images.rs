//! `GET /api/v1/consultations/{id}/images/{side}`: the decrypted image, every download audited.

use super::{download, path_id};
use crate::auth::ImagesCaller;
use crate::client_addr::ClientAddr;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::Response;
use common::blobs::BlobError;
use common::document::FileKind;
use common::store::audit;
use common::store::consultations::{self, ImageRef};
use common::store::RepoError;
use domain::ids::{CompanyId, ConsultationId};
use domain::team::AuditAction;
use domain::vocabulary::ErrorCode;
use domain::vocabulary::ImageSide;

crate::openapi::errors::errors!(DownloadErrors: Images + InvalidRequest + NotFound + ImagePurged + ServiceUnavailable);

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
/// answers 404 `image_purged`. Needs a key with the `images` scope (made by an owner or an admin
/// of the company, or by the operator); any other key is refused 403 `forbidden`.
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
    ImagesCaller(caller): ImagesCaller,
    client: ClientAddr,
    Path((id, side)): Path<(String, String)>,
) -> ApiResult<Response> {
    let id: ConsultationId = path_id(&id)?;
    let side: ImageSide = side
        .parse()
        .map_err(|_| ApiError::invalid_request("side", "side must be recto, verso or selfie."))?;
    let (bytes, kind) = match decrypted(&state, &caller.company_id, &id, side).await {
        Ok(image) => image,
        Err(Unavailable::NotFound) => return Err(ApiError::not_found()),
        Err(Unavailable::Purged) => {
            return Err(ApiError::new(
                ErrorCode::ImagePurged,
                "This image was removed by the retention policy.",
            ))
        }
        Err(Unavailable::Repo(e)) => return Err(e.into()),
        Err(Unavailable::Blob(e)) => return Err(ApiError::blob("image blob", e)),
    };
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

/// Why an image cannot be served.
#[derive(Debug)]
pub enum Unavailable {
    /// No such consultation in the company, or no image on that side.
    NotFound,
    /// Removed by the retention policy.
    Purged,
    Repo(RepoError),
    Blob(BlobError),
}

/// The decrypted image of `side` of a consultation of `company`, with its stored kind: what the
/// API and the portal serve (each audits the access its own way, before the bytes go out).
pub async fn decrypted(
    state: &AppState,
    company: &CompanyId,
    id: &ConsultationId,
    side: ImageSide,
) -> Result<(Vec<u8>, FileKind), Unavailable> {
    let (scope, lookup) = (company.clone(), id.clone());
    let image = state.store.read(move |c| {
        consultations::get(c, &scope, &lookup)?;
        consultations::image(c, &scope, &lookup, side)
    });
    let (blob, kind) = match image.await {
        Err(RepoError::NotFound) | Ok(None) => return Err(Unavailable::NotFound),
        Err(e) => return Err(Unavailable::Repo(e)),
        Ok(Some(ImageRef::Purged)) => return Err(Unavailable::Purged),
        Ok(Some(ImageRef::Stored { blob, kind })) => (blob, kind),
    };
    let context = consultations::image_context(company, id, side);
    let bytes = state.blobs.get(&blob, &context).await.map_err(Unavailable::Blob)?;
    Ok((bytes, kind))
}
