//! `POST /api/v1/batches/{id}/documents`: validate everything that can be validated before a byte
//! is stored, encrypt the files, then record the deposit in one transaction that re-checks every
//! limit. A refusal deletes the files it wrote: nothing is left half-written.

use super::path_id;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::input::{external_ref, BodyText, RawJson};
use crate::inspect;
use crate::request_id::CurrentRequest;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use common::document::{self, DocumentError, FileKind};
use common::domain::DocumentCategory;
use common::domain::ErrorCode;
use common::ids::{BatchId, BatchItemId};
use common::postal::{commune_for, PostalCode};
use common::store::batches::{self, NewItem};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// 10 Mo per decoded document (front or back).
pub const MAX_DOCUMENT_BYTES: usize = 10_000_000;

/// The body of a deposit; the documents are borrowed from it (see [`RawJson`]). Fields are read
/// loosely, then checked one by one, so each refusal names its field.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = DepositRequest)]
pub struct DepositRequest<'a> {
    #[schema(value_type = DocumentCategory, required = true)]
    document_category: Option<String>,
    /// The document in base64 (a data URL prefix and line breaks are tolerated), 10 Mo at most
    /// once decoded. Identity: JPEG, PNG or WebP (the front). Administrative: one single-page
    /// PDF, JPEG, PNG, WebP or TIFF.
    #[serde(borrow)]
    #[schema(value_type = String, required = true, content_encoding = "base64")]
    document: Option<Base64<'a>>,
    /// Back of an identity document, base64; refused for an administrative document.
    #[serde(borrow)]
    #[schema(value_type = Option<String>, content_encoding = "base64")]
    document_verso: Option<Base64<'a>>,
    /// The client's reference, returned as given.
    #[schema(max_length = 255)]
    external_ref: Option<String>,
    /// French postal code of the controlling agency's commune; one matching no commune is
    /// refused (400 `invalid_request`).
    #[schema(pattern = "^[0-9]{5}$")]
    agency_postal_code: Option<String>,
}

/// A document as sent, borrowed from the body unless it held JSON escapes. (Serde borrows a
/// `Cow<str>` only when it is the field itself, not inside an `Option`.)
#[derive(Deserialize)]
#[serde(transparent)]
struct Base64<'a>(#[serde(borrow)] Cow<'a, str>);

/// A deposited document.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Deposited {
    pub id: BatchItemId,
    /// Rank in the batch, from 1.
    #[schema(minimum = 1)]
    pub position: u32,
}

/// A file that passed every check of the deposit.
struct CheckedFile {
    bytes: Vec<u8>,
    kind: FileKind,
}

fn check_file(field: &'static str, encoded: &str, category: DocumentCategory) -> Result<CheckedFile, ApiError> {
    let bytes = document::decode_base64_document(encoded).map_err(|e| match e {
        DocumentError::Empty => ApiError::invalid_document(field, format!("{field} is empty.")),
        _ => ApiError::invalid_document(field, format!("{field} is not valid base64.")),
    })?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(ApiError {
            field: Some(field),
            ..ApiError::new(
                ErrorCode::DocumentTooLarge,
                format!("{field} exceeds 10 Mo (10,000,000 bytes) once decoded."),
            )
        });
    }
    let kind = document::sniff(&bytes).filter(|k| k.allowed_for(category)).ok_or_else(|| {
        let allowed = document::describe_accepted(category, &document::AcceptedWords::ENGLISH);
        ApiError::invalid_document(field, format!("{field} must be {allowed} for a {category} document."))
    })?;
    Ok(CheckedFile { bytes, kind })
}

/// One page only; counted in the sandbox for a PDF (see `inspect`).
async fn check_pages(state: &AppState, field: &'static str, file: &CheckedFile) -> Result<(), ApiError> {
    match inspect::page_count(&state.sandbox, file.kind, &file.bytes).await? {
        Ok(1) => Ok(()),
        Ok(n) => Err(ApiError::invalid_document(field, format!("{field} has {n} pages; one page only."))),
        Err(DocumentError::TooLarge(m)) | Err(DocumentError::Unsupported(m)) => Err(ApiError::invalid_document(field, m)),
        // Bytes that look right but do not parse are the analysis's finding (`unreadable_document`).
        Err(_) => Ok(()),
    }
}

struct Request {
    category: DocumentCategory,
    external_ref: Option<String>,
    postal: Option<(String, String)>,
    document: BodyText,
    verso: Option<BodyText>,
}

fn parse_request(body: &RawJson, req: DepositRequest<'_>) -> Result<Request, ApiError> {
    let category: DocumentCategory = req
        .document_category
        .ok_or_else(|| ApiError::invalid_request("documentCategory", "documentCategory is required."))?
        .parse()
        .map_err(|_| ApiError::invalid_request("documentCategory", "documentCategory must be identite or administratif."))?;
    let document = req
        .document
        .ok_or_else(|| ApiError::invalid_request("document", "document is required."))?;
    if req.document_verso.is_some() && category == DocumentCategory::Administratif {
        return Err(ApiError::invalid_document(
            "documentVerso",
            "documentVerso is refused for an administrative document (one file only).",
        ));
    }
    let postal = req
        .agency_postal_code
        .map(|raw| {
            let code = PostalCode::parse(&raw)
                .map_err(|_| ApiError::invalid_request("agencyPostalCode", "agencyPostalCode must be five digits."))?;
            let commune = commune_for(&code).ok_or_else(|| {
                ApiError::invalid_request(
                    "agencyPostalCode",
                    "agencyPostalCode matches no commune (CEDEX codes are not accepted).",
                )
            })?;
            Ok::<_, ApiError>((code.as_str().to_owned(), commune.insee.to_owned()))
        })
        .transpose()?;
    Ok(Request {
        category,
        external_ref: external_ref("externalRef", req.external_ref)?,
        postal,
        document: body.text(document.0),
        verso: req.document_verso.map(|verso| body.text(verso.0)),
    })
}

crate::openapi::errors::errors!(
    DepositErrors: Write
        + InvalidRequest
        + InvalidDocument
        + IaDesactivee
        + NotFound
        + InvalidState
        + DocumentTooLarge
        + PayloadTooLarge
        + BatchFull
        + DocumentQuotaExceeded
        + VolumeQuotaExceeded
        + ServiceUnavailable
);

/// Add one document to an open batch.
///
/// The file waits encrypted until processing, then is deleted. A 429 invites submitting,
/// canceling or waiting for the purge of a batch before depositing more. A 503
/// `service_unavailable` (the disk is full) kept nothing: send the same deposit again after
/// `Retry-After`.
#[utoipa::path(
    post,
    path = "/api/v1/batches/{id}/documents",
    operation_id = "depositDocument",
    tag = "Batches",
    security(("bearerAuth" = [])),
    params(("id" = BatchId, Path, description = "Batch id.")),
    request_body = DepositRequest,
    responses(
        (status = 201, description = "The document is recorded; nothing is analysed before the batch is submitted.", body = Deposited),
        DepositErrors,
    ),
)]
pub async fn deposit(
    State(state): State<AppState>,
    caller: Caller,
    CurrentRequest(request_id): CurrentRequest,
    Path(id): Path<String>,
    body: RawJson,
) -> ApiResult<(StatusCode, axum::Json<Deposited>)> {
    let batch_id: BatchId = path_id(&id)?;
    let req = parse_request(&body, body.parse()?)?;
    // The documents are views of the body: with it gone, they go when decoded (two copies at most).
    drop(body);

    // One blocking hop: the batch is checked (refusing before decoding), then the files decoded.
    let category = req.category;
    let (store, company, batch) = (state.store.clone(), caller.company_id.clone(), batch_id.clone());
    let (document, verso) = (req.document, req.verso);
    let (front, back) = tokio::task::spawn_blocking(move || {
        store.read_here(|c| batches::check_can_deposit(c, &company, &batch, category, chrono::Utc::now()))?;
        let front = check_file("document", document.as_str(), category)?;
        drop(document);
        let back = verso.map(|v| check_file("documentVerso", v.as_str(), category)).transpose()?;
        Ok::<_, ApiError>((front, back))
    })
    .await
    .map_err(|e| ApiError::internal("deposit decoding", e))??;
    check_pages(&state, "document", &front).await?;
    if let Some(back) = &back {
        check_pages(&state, "documentVerso", back).await?;
    }

    let item_id = BatchItemId::generate(chrono::Utc::now());
    let context = batches::blob_context(&caller.company_id, &item_id);
    let front_blob = common::blobs::BlobStore::new_name();
    let back_blob = back.as_ref().map(|_| common::blobs::BlobStore::new_name());
    let bytes = (front.bytes.len() + back.as_ref().map_or(0, |b| b.bytes.len())) as i64;
    let new = NewItem {
        id: item_id.clone(),
        category,
        external_ref: req.external_ref,
        agency_postal_code: req.postal.as_ref().map(|p| p.0.clone()),
        agency_insee: req.postal.map(|p| p.1),
        front_blob: front_blob.clone(),
        front_kind: front.kind,
        back_blob: back_blob.clone(),
        back_kind: back.as_ref().map(|b| b.kind),
        bytes,
        request_id,
    };
    let written = store_files(&state, &context, (&front_blob, front), back_blob.as_deref().zip(back)).await;
    let recorded = match written {
        Ok(()) => {
            let (company, limit) = (caller.company_id.clone(), state.volume_limit);
            state
                .store
                .write(move |tx| batches::deposit(tx, &company, &batch_id, &new, limit, chrono::Utc::now()))
                .await
                .map_err(ApiError::from)
        }
        Err(e) => Err(e),
    };
    match recorded {
        Ok(position) => Ok((StatusCode::CREATED, axum::Json(Deposited { id: item_id, position }))),
        Err(e) => {
            for blob in std::iter::once(&front_blob).chain(back_blob.as_ref()) {
                if let Err(del) = state.blobs.delete(blob).await {
                    tracing::error!(error = %del, "cannot delete the file of a refused deposit");
                }
            }
            Err(e)
        }
    }
}

/// Seals and writes the files in one blocking hop; the deposit's transaction flushes them.
async fn store_files(
    state: &AppState,
    context: &str,
    front: (&str, CheckedFile),
    back: Option<(&str, CheckedFile)>,
) -> Result<(), ApiError> {
    let files: Vec<(String, Vec<u8>)> = std::iter::once(front)
        .chain(back)
        .map(|(name, file)| (name.to_owned(), file.bytes))
        .collect();
    let (blobs, store, context) = (state.blobs.clone(), state.store.clone(), context.to_owned());
    tokio::task::spawn_blocking(move || {
        files
            .into_iter()
            .try_for_each(|(name, bytes)| blobs.put_then_record_here(&store, &name, &context, bytes))
    })
    .await
    .map_err(|e| ApiError::internal("deposit blob", e))?
    .map_err(|e| ApiError::blob("deposit blob", e))
}

#[cfg(test)]
mod tests;
