//! A result's images and certificate in the portal: only through these routes, only for roles
//! that may see images, each access written to the audit log before the bytes go out. The
//! lookup, decryption and PDF are the API's own functions.

use super::error::{PortalError, PortalResult};
use super::result::path_id;
use super::signed::Signed;
use crate::api::certificate::{self, Failed};
use crate::api::download;
use crate::api::images::{self, Unavailable};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use common::document::FileKind;
use common::store::audit;
use domain::team::{AuditAction, Permission};
use domain::vocabulary::ImageSide;

/// Records that the member accessed `target` (`CSL-…/side`, or the id for a certificate).
async fn audited(state: &AppState, signed: &Signed, action: AuditAction, target: String) -> PortalResult<()> {
    let entry = signed.acting().entry(action, target, chrono::Utc::now());
    let company = signed.company.id.clone();
    state.store.write(move |tx| audit::record(tx, &company, &entry)).await?;
    Ok(())
}

/// `GET /portal/consultations/{id}/images/{side}`: shown in the page (`inline`), never cached,
/// never sniffed into something else than its stored type, and opened in a tab of its own without
/// script or same-origin rights (`sandbox`): a customer's file is hostile until proven otherwise.
pub async fn image(State(state): State<AppState>, signed: Signed, Path((id, side)): Path<(String, String)>) -> PortalResult<Response> {
    signed.require(Permission::ViewImages)?;
    let id = path_id(&id)?;
    let side: ImageSide = side.parse().map_err(|_| PortalError::NotFound)?;
    let (bytes, kind) = match images::decrypted(&state, &signed.company.id, &id, side).await {
        Ok(image) => image,
        Err(Unavailable::NotFound | Unavailable::Purged) => return Err(PortalError::NotFound),
        Err(Unavailable::Repo(e)) => return Err(e.into()),
        Err(Unavailable::Blob(e)) => return Err(PortalError::Internal(format!("image blob: {e}"))),
    };
    audited(&state, &signed, AuditAction::ImageViewed, format!("{id}/{side}")).await?;
    let headers: [(HeaderName, HeaderValue); 5] = [
        (header::CONTENT_TYPE, HeaderValue::from_static(kind.content_type())),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (header::CONTENT_DISPOSITION, HeaderValue::from_static("inline")),
        (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox")),
    ];
    Ok((headers, Body::from(bytes)).into_response())
}

/// `GET /portal/consultations/{id}/certificate`: the API's PDF, downloaded.
pub async fn certificate(State(state): State<AppState>, signed: Signed, Path(id): Path<String>) -> PortalResult<Response> {
    signed.require(Permission::ViewImages)?;
    let id = path_id(&id)?;
    let pdf = match certificate::pdf(&state, &signed.company.id, &id).await {
        Ok(pdf) => pdf,
        Err(Failed::Repo(e)) => return Err(e.into()),
        Err(Failed::Render(e)) => return Err(PortalError::Internal(format!("certificate: {e}"))),
    };
    audited(&state, &signed, AuditAction::CertificateDownloaded, id.to_string()).await?;
    let filename = download::file_name(&id, "certificate", FileKind::Pdf.extension());
    Ok(download::attachment(FileKind::Pdf.content_type(), &filename, pdf))
}
