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
    let entry = audit::entry(
        "image.download",
        &format!("{id}/{side}"),
        Some(&caller.key_prefix),
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
