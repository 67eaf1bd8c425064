//! `GET /api/v1/consultations/{id}/certificate`: the PDF, regenerated on each call from the
//! recorded consultation and its checks.

use super::{download, path_id};
use crate::auth::ImagesCaller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::Response;
use common::document::FileKind;
use common::store::RepoError;
use domain::ids::{CompanyId, ConsultationId};
use domain::vocabulary::Mode;

crate::openapi::errors::errors!(DownloadErrors: Images + NotFound);

/// The PDF certificate of a result.
pub struct Certificate;

impl utoipa::IntoResponses for Certificate {
    fn responses() -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        let pdf = download::documented(
            "The PDF certificate, regenerated on demand.",
            [FileKind::Pdf.content_type()],
            "<consultation id>-certificate.pdf",
        );
        [("200".to_owned(), pdf.into())].into()
    }
}

/// Download the PDF certificate of a result.
///
/// The certificate carries the result's images: it needs a key with the `images` scope (made by
/// an owner or an admin of the company, or by the operator); any other key is refused 403
/// `forbidden`.
#[utoipa::path(
    get,
    path = "/api/v1/consultations/{id}/certificate",
    operation_id = "getConsultationCertificate",
    tag = "Consultations",
    security(("bearerAuth" = [])),
    params(("id" = ConsultationId, Path, description = "Consultation id (`consultationId` of a webhook or a list).")),
    responses(Certificate, DownloadErrors),
)]
pub async fn download(State(state): State<AppState>, ImagesCaller(caller): ImagesCaller, Path(id): Path<String>) -> ApiResult<Response> {
    let id: ConsultationId = path_id(&id)?;
    let pdf = match pdf(&state, &caller.company_id, &id).await {
        Ok(pdf) => pdf,
        Err(Failed::Repo(e)) => return Err(e.into()),
        Err(Failed::Render(e)) => return Err(ApiError::internal("certificate", e)),
    };
    let filename = download::file_name(&id, "certificate", FileKind::Pdf.extension());
    Ok(download::attachment(FileKind::Pdf.content_type(), &filename, pdf))
}

/// Why a certificate could not be made.
#[derive(Debug)]
pub enum Failed {
    /// Not a consultation of the company (`NotFound`), or the store failed.
    Repo(RepoError),
    /// The PDF could not be rendered; the detail is for the log.
    Render(String),
}

/// The certificate of a consultation of `company`, regenerated from the record and its checks:
/// the one PDF the API and the portal hand out.
pub async fn pdf(state: &AppState, company: &CompanyId, id: &ConsultationId) -> Result<Vec<u8>, Failed> {
    let (scope, lookup) = (company.clone(), id.clone());
    let (consultation, checks, face, mode) = state
        .store
        .read(move |c| {
            let consultation = common::store::consultations::get(c, &scope, &lookup)?;
            let checks = common::store::consultations::checks(c, &scope, &lookup)?;
            let face = common::store::consultations::face_match(c, &scope, &lookup)?.map(|f| f.outcome);
            let mode = common::store::companies::get(c, &scope)?.mode;
            Ok::<_, RepoError>((consultation, checks, face, mode))
        })
        .await
        .map_err(Failed::Repo)?;
    // A test result's certificate vouches for nothing: it carries no authenticity link.
    let url = (mode == Mode::Live).then(|| crate::authenticity::url(&state.public_base, &state.keys, id));
    let started = std::time::Instant::now();
    let pdf = tokio::task::spawn_blocking(move || crate::certificate::render(&consultation, &checks, face, url.as_deref()))
        .await
        .map_err(|e| Failed::Render(format!("certificate task: {e}")))?
        .map_err(|e| Failed::Render(e.to_string()))?;
    tracing::debug!(consultation = %id, bytes = pdf.len(), elapsed_us = started.elapsed().as_micros() as u64, "certificate generated");
    Ok(pdf)
}
