//! `POST /api/v1/batches/{id}/documents`: validate everything that can be validated before a byte
//! is stored, encrypt the files, then record the deposit in one transaction that re-checks every
//! limit. A refusal deletes the files it wrote: nothing is left half-written.

use super::path_id;
use crate::auth::Caller;
use crate::edge_turns::Sender;
use crate::error::{ApiError, ApiResult};
use crate::input::{external_ref, BodyText, RawJson};
use crate::inspect;
use crate::request_id::CurrentRequest;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use common::document::{self, DocumentError, FileKind};
use common::store::batches::{self, NewItem};
use domain::ids::{BatchId, BatchItemId, CompanyId};
use domain::postal::{commune_for, PostalCode};
use domain::vocabulary::DocumentCategory;
use domain::vocabulary::ErrorCode;
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
async fn check_pages(state: &AppState, company: &CompanyId, field: &'static str, file: &CheckedFile) -> Result<(), ApiError> {
    // The caller's account: a company's test account is a sender of its own.
    let sender = Sender::Account(company.clone());
    pages_answer(
        field,
        inspect::page_count(&state.sandbox, &state.edge_turns, sender, file.kind, &file.bytes).await?,
    )
}

/// The refusal, if any, of a counted document.
fn pages_answer(field: &'static str, counted: Result<u32, DocumentError>) -> Result<(), ApiError> {
    match counted {
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
    let Request {
        category,
        external_ref,
        postal,
        document,
        verso,
    } = parse_request(&body, body.parse()?)?;
    // The documents are views of the body: with it gone, they go when decoded (two copies at most).
    drop(body);

    let item_id = BatchItemId::generate(chrono::Utc::now());
    let names = FileNames {
        context: batches::blob_context(&caller.company_id, &item_id),
        front: common::blobs::BlobStore::new_name(),
        back: verso.as_ref().map(|_| common::blobs::BlobStore::new_name()),
    };
    let blob_names: Vec<String> = std::iter::once(names.front.clone()).chain(names.back.clone()).collect();
    let deposit = Deposit {
        company: caller.company_id,
        batch: batch_id,
        category,
        names,
        item: ItemFacts {
            id: item_id.clone(),
            external_ref,
            postal,
            request_id,
        },
        volume_limit: state.volume_limit,
    };
    match store_and_record(&state, deposit, (document, verso)).await {
        Ok(position) => Ok((StatusCode::CREATED, axum::Json(Deposited { id: item_id, position }))),
        Err(Failure::Refused(e)) => {
            // A refusal before writing finds nothing to delete; one after leaves nothing behind.
            for blob in &blob_names {
                if let Err(del) = state.blobs.delete(blob).await {
                    tracing::error!(error = %del, "cannot delete the file of a refused deposit");
                }
            }
            Err(e)
        }
        Err(Failure::Unflushed(e)) => {
            tracing::error!(item = %item_id, "deposit recorded but not flushed to disk; its files are kept for its row");
            Err(e)
        }
    }
}

/// How a deposit failed, as far as the files it wrote go.
enum Failure {
    /// Nothing is recorded: the files written, if any, are deleted.
    Refused(ApiError),
    /// The row is committed but the flush after it failed: the files it names stay, or the row
    /// would name files that are gone.
    Unflushed(ApiError),
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure::Refused(e)
    }
}

impl From<common::store::StoreError> for Failure {
    fn from(e: common::store::StoreError) -> Self {
        if e.committed() {
            Failure::Unflushed(ApiError::from(e))
        } else {
            Failure::Refused(ApiError::from(e))
        }
    }
}

/// Where a deposit's files go: their blob names and their encryption context.
struct FileNames {
    context: String,
    front: String,
    back: Option<String>,
}

/// What the request says of the document, recorded with it.
struct ItemFacts {
    id: BatchItemId,
    external_ref: Option<String>,
    /// The agency's postal code and its commune's INSEE code.
    postal: Option<(String, String)>,
    request_id: Option<common::telemetry::RequestId>,
}

/// A deposit on its way to the store: its place, its files' names and what it says.
struct Deposit {
    company: domain::ids::CompanyId,
    batch: BatchId,
    category: DocumentCategory,
    names: FileNames,
    item: ItemFacts,
    volume_limit: u64,
}

/// A deposit whose documents take up to this much base64 (about 190 KB decoded) is checked,
/// sealed and written on the request's own thread: about 0.1 ms of work, less than the two
/// thread hops of a blocking task cost here. Larger ones go to a blocking thread, as do those
/// whose files are not flushed with the database (an upload, or a flush of their own, waits).
const INLINE_BASE64_BYTES: usize = 256 * 1024;

/// Checks the batch, decodes and checks the documents, seals and writes them, then records the
/// deposit, whose flush makes files and row durable together. Large documents go through all of
/// it in one blocking hop, so the request's task is woken once; a PDF has its pages counted in
/// the sandbox between decoding and writing. Returns the document's position in the batch.
async fn store_and_record(state: &AppState, deposit: Deposit, documents: (BodyText, Option<BodyText>)) -> Result<u32, Failure> {
    let encoded = documents.0.len() + documents.1.as_ref().map_or(0, BodyText::len);
    if encoded <= INLINE_BASE64_BYTES && state.blobs.flushed_with(&state.store) {
        return store_and_record_here(state, deposit, documents).await;
    }
    let (store, blobs) = (state.store.clone(), state.blobs.clone());
    let decoded = tokio::task::spawn_blocking(move || {
        let (front, back) = check_documents(&store, &deposit, documents)?;
        if holds_pdf(&front, &back) {
            return Ok(Err((deposit, front, back)));
        }
        count_pages_here(&front, &back)?;
        write_and_record(&blobs, &store, deposit, front, back).map(Ok)
    })
    .await
    .map_err(|e| ApiError::internal("deposit decoding", e))??;
    match decoded {
        Ok(position) => Ok(position),
        Err((deposit, front, back)) => count_then_record(state, deposit, front, back).await,
    }
}

/// [`store_and_record`] for small documents, on the request's thread. The write is announced
/// from the start: all of it takes a fraction of a millisecond.
async fn store_and_record_here(state: &AppState, deposit: Deposit, documents: (BodyText, Option<BodyText>)) -> Result<u32, Failure> {
    let announced = state.store.announce_write();
    let (front, back) = check_documents(&state.store, &deposit, documents)?;
    if holds_pdf(&front, &back) {
        drop(announced);
        return count_then_record(state, deposit, front, back).await;
    }
    count_pages_here(&front, &back)?;
    let record = write_files(&state.blobs, &state.store, deposit, front, back)?;
    state.store.write_announced(announced, refused_within(record)).await
}

/// The batch takes documents of this category, and each document passes its checks.
fn check_documents(
    store: &common::store::Store,
    deposit: &Deposit,
    (document, verso): (BodyText, Option<BodyText>),
) -> Result<(CheckedFile, Option<CheckedFile>), ApiError> {
    let (company, batch, category) = (&deposit.company, &deposit.batch, deposit.category);
    store.read_here(|c| batches::check_can_deposit(c, company, batch, category, chrono::Utc::now()))?;
    let front = check_file("document", document.as_str(), category)?;
    drop(document);
    let back = verso.map(|v| check_file("documentVerso", v.as_str(), category)).transpose()?;
    Ok((front, back))
}

fn holds_pdf(front: &CheckedFile, back: &Option<CheckedFile>) -> bool {
    front.kind == FileKind::Pdf || back.as_ref().is_some_and(|b| b.kind == FileKind::Pdf)
}

/// Counts a PDF's pages in the sandbox, then writes and records on a blocking thread.
async fn count_then_record(state: &AppState, deposit: Deposit, front: CheckedFile, back: Option<CheckedFile>) -> Result<u32, Failure> {
    check_pages(state, &deposit.company, "document", &front).await?;
    if let Some(back) = &back {
        check_pages(state, &deposit.company, "documentVerso", back).await?;
    }
    let (store, blobs) = (state.store.clone(), state.blobs.clone());
    tokio::task::spawn_blocking(move || write_and_record(&blobs, &store, deposit, front, back))
        .await
        .map_err(|e| ApiError::internal("deposit blob", e))?
}

/// The deposit's transaction, whose refusals (a limit, a closed batch) leave nothing recorded.
fn refused_within<F>(record: F) -> impl FnOnce(&rusqlite::Transaction<'_>) -> Result<u32, Failure> + Send + 'static
where
    F: FnOnce(&rusqlite::Transaction<'_>) -> Result<u32, ApiError> + Send + 'static,
{
    move |tx| record(tx).map_err(Failure::Refused)
}

/// Writes the files and records the deposit, on a blocking thread. The write is announced once
/// the documents are checked, and only when the database's flush covers the files: an upload to
/// an object store would hold every flush of the process for nothing.
fn write_and_record(
    blobs: &common::blobs::BlobStore,
    store: &common::store::Store,
    deposit: Deposit,
    front: CheckedFile,
    back: Option<CheckedFile>,
) -> Result<u32, Failure> {
    let announced = blobs.flushed_with(store).then(|| store.announce_write());
    let record = write_files(blobs, store, deposit, front, back)?;
    store.write_here_announced(announced, refused_within(record))
}

/// [`check_pages`] for what is counted in this process: an image is one page when its header
/// decodes within the pixel budget; a TIFF has its directories counted.
fn count_pages_here(front: &CheckedFile, back: &Option<CheckedFile>) -> Result<(), ApiError> {
    pages_answer("document", document::page_count(front.kind, &front.bytes))?;
    back.as_ref()
        .map(|b| pages_answer("documentVerso", document::page_count(b.kind, &b.bytes)))
        .transpose()
        .map(drop)
}

/// Seals and writes the files, then returns the transaction that records the deposit and
/// re-checks every limit; its flush makes the files durable too, shared with the deposits
/// announced meanwhile. On a refusal the caller deletes the files.
fn write_files(
    blobs: &common::blobs::BlobStore,
    store: &common::store::Store,
    deposit: Deposit,
    front: CheckedFile,
    back: Option<CheckedFile>,
) -> Result<impl FnOnce(&rusqlite::Transaction<'_>) -> Result<u32, ApiError> + Send + 'static, ApiError> {
    let Deposit {
        company,
        batch,
        category,
        names,
        item,
        volume_limit,
    } = deposit;
    let new = NewItem {
        id: item.id,
        category,
        external_ref: item.external_ref,
        agency_postal_code: item.postal.as_ref().map(|p| p.0.clone()),
        agency_insee: item.postal.map(|p| p.1),
        front_blob: names.front.clone(),
        front_kind: front.kind,
        back_blob: names.back.clone(),
        back_kind: back.as_ref().map(|b| b.kind),
        bytes: (front.bytes.len() + back.as_ref().map_or(0, |b| b.bytes.len())) as i64,
        request_id: item.request_id,
    };
    let files = std::iter::once((names.front.as_str(), front)).chain(names.back.as_deref().zip(back));
    for (name, file) in files {
        blobs
            .put_then_record_here(store, name, &names.context, file.bytes)
            .map_err(|e| ApiError::blob("deposit blob", e))?;
    }
    Ok(move |tx: &rusqlite::Transaction<'_>| {
        batches::deposit(tx, &company, &batch, &new, volume_limit, chrono::Utc::now()).map_err(ApiError::from)
    })
}

#[cfg(test)]
mod tests;
