//! Batches and their documents: the limits of the spec, the 24 h windows, and the state machine
//! (`open → in_progress → ended`, or `canceled` / `expired`). Every check that guards a write is
//! made inside the write's own `BEGIN IMMEDIATE` transaction.

use super::consultations::ImageFile;
use super::error::{stored, stored_time, RepoError};
use super::{events, outbox};
use crate::document::FileKind;
use crate::messages::{Job, JobSource, JobV1};
use crate::telemetry::RequestId;
use chrono::{DateTime, Duration, Utc};
use domain::ids::{BatchId, BatchItemId, CompanyId};
use domain::model::{Batch, BatchItem, Counts};
use domain::vocabulary::{BatchStatus, DocumentCategory, ImageSide, ItemStatus};
use domain::webhook::WebhookEvent;
use rusqlite::{params, Connection, OptionalExtension, Row};

use domain::batch::{accepts_documents, can_cancel, is_due, requeued_item_status, settled_status, stopped_by};
pub use domain::batch::{MAX_ITEMS_PER_BATCH, MAX_NON_PURGED_DOCUMENTS, MAX_OPEN_BATCHES, WINDOW};

const COLUMNS: &str = "id, status, external_ref, submitted_at, expires_at, ended_at, created_at";

/// A batch as SQLite holds it ([`COLUMNS`], in order), before its columns are checked.
struct BatchRow {
    id: String,
    status: String,
    external_ref: Option<String>,
    submitted_at: Option<String>,
    expires_at: String,
    ended_at: Option<String>,
    created_at: String,
}

fn raw(r: &Row<'_>) -> rusqlite::Result<BatchRow> {
    Ok(BatchRow {
        id: r.get(0)?,
        status: r.get(1)?,
        external_ref: r.get(2)?,
        submitted_at: r.get(3)?,
        expires_at: r.get(4)?,
        ended_at: r.get(5)?,
        created_at: r.get(6)?,
    })
}

fn build(c: &Connection, r: BatchRow) -> Result<Batch, RepoError> {
    let id: BatchId = stored(&r.id)?;
    let counts = counts(c, &id)?;
    Ok(Batch {
        id,
        status: stored(&r.status)?,
        external_ref: r.external_ref,
        counts,
        submitted_at: r.submitted_at.as_deref().map(stored_time).transpose()?,
        expires_at: stored_time(&r.expires_at)?,
        ended_at: r.ended_at.as_deref().map(stored_time).transpose()?,
        created_at: stored_time(&r.created_at)?,
        items: None,
    })
}

/// One counter per document state; `pending` includes documents being processed.
pub fn counts(c: &Connection, batch: &BatchId) -> Result<Counts, RepoError> {
    let mut stmt = c.prepare_cached("SELECT status, count(*) FROM batch_items WHERE batch_id = ?1 GROUP BY status")?;
    let mut counts = Counts::default();
    for row in stmt.query_map([batch.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?)))? {
        let (status, n) = row?;
        counts.total += n;
        match stored::<ItemStatus>(&status)? {
            ItemStatus::Uploading | ItemStatus::Pending | ItemStatus::Processing => counts.pending += n,
            ItemStatus::Succeeded => counts.succeeded += n,
            ItemStatus::Errored => counts.errored += n,
            ItemStatus::Canceled => counts.canceled += n,
            ItemStatus::Expired => counts.expired += n,
        }
    }
    Ok(counts)
}

fn schedule_deadline(tx: &Connection, id: &BatchId, due: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "INSERT INTO deadlines (batch_id, due_at) VALUES (?1, ?2) ON CONFLICT (batch_id) DO UPDATE SET due_at = excluded.due_at",
        params![id.as_str(), due.timestamp_millis()],
    )?;
    Ok(())
}

/// Opens a batch for 24 h; at most three open per company.
pub fn create(
    tx: &Connection,
    company: &CompanyId,
    external_ref: Option<&str>,
    webhook_url: Option<&str>,
    window: std::time::Duration,
    now: DateTime<Utc>,
) -> Result<Batch, RepoError> {
    let open: i64 = tx.query_row(
        "SELECT count(*) FROM batches WHERE company_id = ?1 AND status = 'open'",
        [company.as_str()],
        |r| r.get(0),
    )?;
    if open >= MAX_OPEN_BATCHES {
        return Err(RepoError::TooManyOpenBatches);
    }
    let id = BatchId::generate(now);
    let expires = now + Duration::from_std(window).unwrap_or(Duration::hours(24));
    tx.execute(
        "INSERT INTO batches (id, company_id, external_ref, webhook_url, status, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, 'open', ?5, ?6)",
        params![id.as_str(), company.as_str(), external_ref, webhook_url, domain::time::format(now), domain::time::format(expires)],
    )?;
    schedule_deadline(tx, &id, expires)?;
    get(tx, company, &id)
}

/// A batch of the company (without items); another company's id is not found.
pub fn get(c: &Connection, company: &CompanyId, id: &BatchId) -> Result<Batch, RepoError> {
    let row = c
        .query_row(
            &format!("SELECT {COLUMNS} FROM batches WHERE id = ?1 AND company_id = ?2"),
            [id.as_str(), company.as_str()],
            raw,
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    build(c, row)
}

/// The batch with its documents in position order.
pub fn get_with_items(c: &Connection, company: &CompanyId, id: &BatchId) -> Result<Batch, RepoError> {
    let mut batch = get(c, company, id)?;
    let mut stmt = c.prepare("SELECT id, position, category, external_ref, status, consultation_id, error FROM batch_items WHERE batch_id = ?1 ORDER BY position")?;
    let rows = stmt
        .query_map([id.as_str()], |r| {
            Ok(ItemRow {
                id: r.get(0)?,
                position: r.get(1)?,
                category: r.get(2)?,
                external_ref: r.get(3)?,
                status: r.get(4)?,
                consultation_id: r.get(5)?,
                error: r.get(6)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let items = rows
        .into_iter()
        .map(|r| {
            Ok(BatchItem {
                id: stored(&r.id)?,
                position: r.position,
                document_category: stored(&r.category)?,
                external_ref: r.external_ref,
                status: stored(&r.status)?,
                consultation_id: r.consultation_id.as_deref().map(stored).transpose()?,
                error: r.error.as_deref().map(stored).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, RepoError>>()?;
    batch.items = Some(items);
    Ok(batch)
}

/// A document of a batch as SQLite holds it, before its columns are checked.
struct ItemRow {
    id: String,
    position: u32,
    category: String,
    external_ref: Option<String>,
    status: String,
    consultation_id: Option<String>,
    error: Option<String>,
}

/// The company's batches, most recent first; with `before`, those older than that batch (keyset
/// pages on `batches_by_company`; an unknown or another company's batch gives an empty page).
pub fn list(c: &Connection, company: &CompanyId, before: Option<&BatchId>, limit: u32) -> Result<Vec<Batch>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM batches WHERE company_id = ?1
           AND (?2 IS NULL OR seq < (SELECT seq FROM batches WHERE id = ?2 AND company_id = ?1))
         ORDER BY seq DESC LIMIT ?3"
    ))?;
    let rows = stmt
        .query_map(params![company.as_str(), before.map(BatchId::as_str), limit], raw)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(|r| build(c, r)).collect()
}

/// What must hold before a deposit's files are encrypted and stored (checked again at insert).
pub fn check_can_deposit(
    c: &Connection,
    company: &CompanyId,
    id: &BatchId,
    category: DocumentCategory,
    now: DateTime<Utc>,
) -> Result<(), RepoError> {
    // Status and deadline only: this runs twice per deposit, the counts are not needed.
    let (status, expires_at): (String, String) = c
        .prepare_cached("SELECT status, expires_at FROM batches WHERE id = ?1 AND company_id = ?2")?
        .query_row([id.as_str(), company.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
        .ok_or(RepoError::NotFound)?;
    let status: BatchStatus = stored(&status)?;
    if !accepts_documents(status, stored_time(&expires_at)?, now) {
        return Err(RepoError::InvalidState(format!(
            "batch {id} is {status}: documents can only be added to an open batch"
        )));
    }
    if category == DocumentCategory::Administratif && !super::companies::get(c, company)?.ai_enabled {
        return Err(RepoError::IaDesactivee);
    }
    Ok(())
}

/// A document about to be recorded; its files are already encrypted in the blob store.
pub struct NewItem {
    pub id: BatchItemId,
    pub category: DocumentCategory,
    pub external_ref: Option<String>,
    pub agency_postal_code: Option<String>,
    pub agency_insee: Option<String>,
    pub front_blob: String,
    pub front_kind: FileKind,
    pub back_blob: Option<String>,
    pub back_kind: Option<FileKind>,
    pub bytes: i64,
    /// The deposit's request, carried by the document's job.
    pub request_id: Option<RequestId>,
}

/// The number of documents in a batch: positions run from 1 without a gap (no item is ever
/// deleted), so the last one, read at the end of the (batch_id, position) index, is the count.
const LAST_POSITION: &str = "SELECT coalesce(max(position), 0) FROM batch_items WHERE batch_id = ?1";

/// Records a deposit after checking every limit; returns its position.
pub fn deposit(
    tx: &Connection,
    company: &CompanyId,
    id: &BatchId,
    item: &NewItem,
    volume_limit: u64,
    now: DateTime<Utc>,
) -> Result<u32, RepoError> {
    check_can_deposit(tx, company, id, item.category, now)?;
    let in_batch: i64 = tx.prepare_cached(LAST_POSITION)?.query_row([id.as_str()], |r| r.get(0))?;
    if in_batch >= MAX_ITEMS_PER_BATCH {
        return Err(RepoError::BatchFull);
    }
    let holdings = super::holdings::of(tx, company)?;
    if holdings.held_documents >= MAX_NON_PURGED_DOCUMENTS {
        return Err(RepoError::DocumentQuota);
    }
    if (holdings.waiting_bytes + item.bytes) as u64 > volume_limit {
        return Err(RepoError::VolumeQuota);
    }
    let position = in_batch as u32 + 1;
    tx.prepare_cached(
        "INSERT INTO batch_items (id, batch_id, company_id, position, category, external_ref, agency_postal_code, agency_insee, status, front_blob, front_kind, back_blob, back_kind, bytes, created_at, request_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
            item.id.as_str(), id.as_str(), company.as_str(), position, item.category.as_str(), item.external_ref, item.agency_postal_code, item.agency_insee,
            item.front_blob, item.front_kind.as_str(), item.back_blob, item.back_kind.map(FileKind::as_str), item.bytes, domain::time::format(now),
            item.request_id.as_ref().map(RequestId::as_str)
        ],
    )?;
    Ok(position)
}

/// The associated data binding a deposit's blobs to their company and document.
pub fn blob_context(company: &CompanyId, item: &BatchItemId) -> String {
    format!("company={company};item={item}")
}

/// A batch's status whatever its company (the workers' live flag in embedded mode); `None` for
/// an unknown batch.
pub fn status(c: &Connection, id: &BatchId) -> Result<Option<BatchStatus>, RepoError> {
    let status: Option<String> = c
        .prepare_cached("SELECT status FROM batches WHERE id = ?1")?
        .query_row([id.as_str()], |r| r.get(0))
        .optional()?;
    status.as_deref().map(stored).transpose()
}

/// Closes the batch to deposits, starts the 24 h completion window and queues one job per document.
pub fn submit(
    tx: &Connection,
    company: &CompanyId,
    id: &BatchId,
    window: std::time::Duration,
    now: DateTime<Utc>,
) -> Result<Batch, RepoError> {
    let batch = get(tx, company, id)?;
    if !accepts_documents(batch.status, batch.expires_at, now) {
        return Err(RepoError::InvalidState(format!(
            "batch {id} is {}: only an open batch can be submitted",
            batch.status
        )));
    }
    if batch.counts.total == 0 {
        return Err(RepoError::BatchEmpty);
    }
    let expires = now + Duration::from_std(window).unwrap_or(Duration::hours(24));
    tx.execute(
        "UPDATE batches SET status = 'in_progress', submitted_at = ?2, expires_at = ?3 WHERE id = ?1",
        params![id.as_str(), domain::time::format(now), domain::time::format(expires)],
    )?;
    schedule_deadline(tx, id, expires)?;
    queue_jobs(tx, company, id, None, expires)?;
    get(tx, company, id)
}

/// Stops the batch: pending documents become `canceled`; documents in flight finish.
pub fn cancel(
    tx: &Connection,
    company: &CompanyId,
    id: &BatchId,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<Batch, RepoError> {
    let batch = get(tx, company, id)?;
    if !can_cancel(batch.status) {
        return Err(RepoError::InvalidState(format!("batch {id} is already {}", batch.status)));
    }
    close(tx, id, BatchStatus::Canceled, ItemStatus::Canceled, request_id, now)?;
    get(tx, company, id)
}

/// Applies a due deadline: an open or in-progress batch expires with what is left.
pub fn expire_if_due(tx: &Connection, id: &BatchId, now: DateTime<Utc>) -> Result<bool, RepoError> {
    let row: Option<(String, String)> = tx
        .query_row("SELECT status, expires_at FROM batches WHERE id = ?1", [id.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((status, expires_at)) = row else {
        return Ok(false);
    };
    let status: BatchStatus = stored(&status)?;
    if !is_due(status, stored_time(&expires_at)?, now) {
        return Ok(false);
    }
    close(tx, id, BatchStatus::Expired, ItemStatus::Expired, None, now)?;
    Ok(true)
}

fn close(
    tx: &Connection,
    id: &BatchId,
    status: BatchStatus,
    items: ItemStatus,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<(), RepoError> {
    let at = domain::time::format(now);
    tx.execute(
        "UPDATE batches SET status = ?2, ended_at = ?3 WHERE id = ?1",
        params![id.as_str(), status.as_str(), at],
    )?;
    for stopped in stopped_by(status) {
        tx.execute(
            "UPDATE batch_items SET status = ?2, finished_at = ?3 WHERE batch_id = ?1 AND status = ?4",
            params![id.as_str(), items.as_str(), at, stopped.as_str()],
        )?;
    }
    tx.execute("DELETE FROM deadlines WHERE batch_id = ?1", [id.as_str()])?;
    announce_if_settled(tx, id, request_id, now)
}

/// Ends an in-progress batch whose documents are all settled, and emits `batch.completed` once
/// when a terminal batch has nothing in flight any more; `request_id` is that of the work that
/// settled the last document, for the delivery's log lines.
pub fn announce_if_settled(tx: &Connection, id: &BatchId, request_id: Option<&RequestId>, now: DateTime<Utc>) -> Result<(), RepoError> {
    let unsettled: i64 = tx.query_row(
        "SELECT count(*) FROM batch_items WHERE batch_id = ?1 AND status IN ('uploading', 'pending', 'processing')",
        [id.as_str()],
        |r| r.get(0),
    )?;
    if unsettled > 0 {
        return Ok(());
    }
    let (company, status, external_ref, webhook, announced): (String, String, Option<String>, Option<String>, Option<String>) = tx
        .query_row(
            "SELECT company_id, status, external_ref, webhook_url, completion_event_id FROM batches WHERE id = ?1",
            [id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
    let mut status: BatchStatus = stored(&status)?;
    if status == BatchStatus::InProgress {
        status = settled_status(counts(tx, id)?.expired);
        tx.execute(
            "UPDATE batches SET status = ?2, ended_at = ?3 WHERE id = ?1",
            params![id.as_str(), status.as_str(), domain::time::format(now)],
        )?;
        tx.execute("DELETE FROM deadlines WHERE batch_id = ?1", [id.as_str()])?;
    }
    if status == BatchStatus::Open || announced.is_some() {
        return Ok(());
    }
    let company: CompanyId = stored(&company)?;
    let marker = match webhook {
        Some(url) => {
            let event = WebhookEvent::BatchCompleted {
                batch_id: id.clone(),
                external_ref,
                counts: counts(tx, id)?,
            };
            events::emit(tx, &company, &url, event, request_id, now)?.to_string()
        }
        None => "none".to_owned(),
    };
    tx.execute(
        "UPDATE batches SET completion_event_id = ?2 WHERE id = ?1",
        params![id.as_str(), marker],
    )?;
    Ok(())
}

/// Batches whose deadline has come, for the embedded deadline backend.
pub fn due_deadlines(c: &Connection, now: DateTime<Utc>, limit: u32) -> Result<Vec<BatchId>, RepoError> {
    let mut stmt = c.prepare("SELECT batch_id FROM deadlines WHERE due_at <= ?1 ORDER BY due_at LIMIT ?2")?;
    let ids = stmt
        .query_map(params![now.timestamp_millis(), limit], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    ids.iter().map(|s| stored(s)).collect()
}

/// What the recorder needs of a document to apply its result.
pub struct ItemForResult {
    pub company_id: CompanyId,
    pub status: ItemStatus,
    pub category: DocumentCategory,
    pub external_ref: Option<String>,
    /// The deposited files, copied into the consultation's images.
    pub files: Vec<ImageFile>,
}

/// The document behind a job result, if it exists.
pub fn item_for_result(c: &Connection, batch: &BatchId, item: &BatchItemId) -> Result<Option<ItemForResult>, RepoError> {
    struct Row {
        company_id: String,
        status: String,
        category: String,
        external_ref: Option<String>,
        front_blob: Option<String>,
        front_kind: Option<String>,
        back_blob: Option<String>,
        back_kind: Option<String>,
    }
    let row: Option<Row> = c
        .query_row(
            "SELECT company_id, status, category, external_ref, front_blob, front_kind, back_blob, back_kind FROM batch_items WHERE id = ?1 AND batch_id = ?2",
            [item.as_str(), batch.as_str()],
            |r| {
                Ok(Row {
                    company_id: r.get(0)?,
                    status: r.get(1)?,
                    category: r.get(2)?,
                    external_ref: r.get(3)?,
                    front_blob: r.get(4)?,
                    front_kind: r.get(5)?,
                    back_blob: r.get(6)?,
                    back_kind: r.get(7)?,
                })
            },
        )
        .optional()?;
    let Some(r) = row else { return Ok(None) };
    let mut files = Vec::new();
    for (side, blob, kind) in [
        (ImageSide::Recto, r.front_blob, r.front_kind),
        (ImageSide::Verso, r.back_blob, r.back_kind),
    ] {
        if let (Some(blob), Some(kind)) = (blob, kind) {
            files.push(ImageFile {
                side,
                blob,
                kind: stored(&kind)?,
            });
        }
    }
    Ok(Some(ItemForResult {
        company_id: stored(&r.company_id)?,
        status: stored(&r.status)?,
        category: stored(&r.category)?,
        external_ref: r.external_ref,
        files,
    }))
}

/// Marks a document taken by a worker.
pub fn mark_processing(tx: &Connection, item: &BatchItemId) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE batch_items SET status = 'processing' WHERE id = ?1 AND status = 'pending'",
        [item.as_str()],
    )?;
    Ok(())
}

/// Moves a document to a terminal state unless it already has one (the first one wins).
pub fn settle_item(
    tx: &Connection,
    item: &BatchItemId,
    status: ItemStatus,
    error: Option<domain::vocabulary::ItemError>,
    consultation: Option<&domain::ids::ConsultationId>,
    now: DateTime<Utc>,
) -> Result<bool, RepoError> {
    let n = tx.execute(
        "UPDATE batch_items SET status = ?2, error = ?3, consultation_id = ?4, finished_at = ?5 WHERE id = ?1 AND status IN ('uploading', 'pending', 'processing')",
        params![item.as_str(), status.as_str(), error.map(|e| e.as_str()), consultation.map(|c| c.as_str()), domain::time::format(now)],
    )?;
    Ok(n == 1)
}

/// A settled document still holding its deposit files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleasableFiles {
    pub item_id: String,
    pub blobs: Vec<String>,
}

/// Settled documents still holding their deposit files.
pub fn releasable_files(c: &Connection, limit: u32) -> Result<Vec<ReleasableFiles>, RepoError> {
    let mut stmt = c.prepare(
        "SELECT id, front_blob, back_blob FROM batch_items WHERE status IN ('succeeded', 'errored', 'canceled', 'expired') AND (front_blob IS NOT NULL OR back_blob IS NOT NULL) LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit], |r| {
        let blobs: Vec<String> = [r.get::<_, Option<String>>(1)?, r.get::<_, Option<String>>(2)?]
            .into_iter()
            .flatten()
            .collect();
        Ok(ReleasableFiles { item_id: r.get(0)?, blobs })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// The deposit files of a document are deleted; a document that produced no consultation stops
/// counting toward the non-purged limit.
pub fn files_released(tx: &Connection, item: &str, now: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE batch_items SET front_blob = NULL, back_blob = NULL,
         images_released_at = CASE WHEN consultation_id IS NULL THEN ?2 ELSE images_released_at END WHERE id = ?1",
        params![item, domain::time::format(now)],
    )?;
    Ok(())
}

/// A document waiting for its job, as SQLite holds it.
struct PendingItem {
    id: String,
    category: String,
    front_blob: Option<String>,
    back_blob: Option<String>,
    request_id: Option<String>,
}

/// Queues (through the outbox) one analysis job per pending document of the batch, or only for
/// `item` when given.
fn queue_jobs(
    tx: &Connection,
    company: &CompanyId,
    batch: &BatchId,
    item: Option<&BatchItemId>,
    deadline: DateTime<Utc>,
) -> Result<usize, RepoError> {
    let mode = super::companies::get(tx, company)?.mode;
    let mut stmt = tx.prepare(
        "SELECT id, category, front_blob, back_blob, request_id FROM batch_items
         WHERE batch_id = ?1 AND status IN ('pending', 'processing') AND (?2 IS NULL OR id = ?2) ORDER BY position",
    )?;
    let rows = stmt
        .query_map(params![batch.as_str(), item.map(|i| i.as_str())], |r| {
            Ok(PendingItem {
                id: r.get(0)?,
                category: r.get(1)?,
                front_blob: r.get(2)?,
                back_blob: r.get(3)?,
                request_id: r.get(4)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    for row in &rows {
        let item: BatchItemId = stored(&row.id)?;
        let front = row
            .front_blob
            .clone()
            .ok_or_else(|| RepoError::Store(super::StoreError::Corrupt(format!("item {item} has no file"))))?;
        let job = Job::V1(JobV1 {
            company_id: company.clone(),
            blob_context: blob_context(company, &item),
            source: JobSource::BatchItem {
                batch_id: batch.clone(),
                item_id: item,
            },
            category: stored(&row.category)?,
            front_blob: front,
            back_blob: row.back_blob.clone(),
            selfie_blob: None,
            deadline,
            request_id: row.request_id.as_deref().and_then(RequestId::parse),
            mode,
            biometric_consent: false,
        });
        outbox::push(tx, &job)?;
    }
    Ok(rows.len())
}

/// A worker dropped a job as canceled: settle the document if its batch really is closed;
/// otherwise the worker read a stale flag, and the job is queued again rather than lost.
pub fn settle_canceled_job(
    tx: &Connection,
    batch: &BatchId,
    item: &BatchItemId,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<(), RepoError> {
    let row: Option<(String, String, String)> = tx
        .query_row(
            "SELECT company_id, status, expires_at FROM batches WHERE id = ?1",
            [batch.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((company, status, expires_at)) = row else { return Ok(()) };
    match requeued_item_status(stored(&status)?) {
        Some(final_status) => {
            if settle_item(tx, item, final_status, None, None, now)? {
                announce_if_settled(tx, batch, request_id, now)?;
            }
        }
        None => {
            tx.execute(
                "UPDATE batch_items SET status = 'pending' WHERE id = ?1 AND status = 'processing'",
                [item.as_str()],
            )?;
            queue_jobs(tx, &stored(&company)?, batch, Some(item), stored_time(&expires_at)?)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{consultation_of, identity_item, TempStore};
    use crate::store::{companies, consultations};
    use domain::ids::ConsultationId;
    use domain::vocabulary::Licence;

    /// Records `item`'s consultation with one image, as the recorder does.
    fn analysed(tx: &Connection, company: &CompanyId, item: &BatchItemId, now: DateTime<Utc>) -> Result<ConsultationId, RepoError> {
        let id = ConsultationId::generate(now);
        assert!(settle_item(tx, item, ItemStatus::Succeeded, None, Some(&id), now)?);
        consultation_of(tx, company, id, Some(item), "image-blob", now)
    }

    /// The limits a deposit checks read one row of counters and one index entry, not the company's rows.
    #[tokio::test]
    async fn the_deposit_limits_read_only_the_rows_they_count() {
        let store = TempStore::new("deposit-plans");
        let plans = store
            .read(|c| {
                [crate::store::holdings::HOLDINGS, LAST_POSITION]
                    .map(|sql| {
                        let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
                        let rows = stmt.query_map(["CMP_X"], |r| r.get::<_, String>(3))?;
                        rows.collect::<Result<Vec<_>, _>>()
                    })
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(RepoError::from)
            })
            .await
            .unwrap();
        assert_eq!(plans[0], ["SEARCH company_holdings USING PRIMARY KEY (company_id=?)"]);
        assert_eq!(
            plans[1],
            ["SEARCH batch_items USING COVERING INDEX sqlite_autoindex_batch_items_2 (batch_id=?)"]
        );
    }

    #[tokio::test]
    async fn documents_count_toward_the_limit_until_their_images_are_purged() {
        let store = TempStore::new("quota");
        let outcome = store
            .write(|tx| {
                let now = Utc::now();
                let company = companies::create(tx, "Acme", Licence::Group, &crate::crypto::envelope::MasterKeys::ephemeral(), now)?
                    .company
                    .id;
                let window = WINDOW;
                let mut first_item = None;
                for _ in 0..2 {
                    let batch = create(tx, &company, None, None, window, now)?;
                    for n in 0..MAX_ITEMS_PER_BATCH {
                        let new = identity_item(&format!("blob-{n}"));
                        first_item.get_or_insert(new.id.clone());
                        deposit(tx, &company, &batch.id, &new, u64::MAX, now)?;
                    }
                }
                let third = create(tx, &company, None, None, window, now)?;
                let full = deposit(tx, &company, &third.id, &identity_item("blob-400"), u64::MAX, now);
                let first_item = first_item.expect("deposited");
                // Analysed, its deposit files released: the consultation's image still counts.
                let consultation = analysed(tx, &company, &first_item, now)?;
                files_released(tx, first_item.as_str(), now)?;
                let analysed_still_counts = deposit(tx, &company, &third.id, &identity_item("blob-401"), u64::MAX, now);
                consultations::mark_purged(tx, consultation.as_str(), "recto", now)?;
                let after_purge = deposit(tx, &company, &third.id, &identity_item("blob-402"), u64::MAX, now)?;
                Ok::<_, RepoError>((full, analysed_still_counts, after_purge))
            })
            .await
            .unwrap();
        assert!(matches!(outcome.0, Err(RepoError::DocumentQuota)), "{:?}", outcome.0);
        assert!(matches!(outcome.1, Err(RepoError::DocumentQuota)), "{:?}", outcome.1);
        assert_eq!(
            outcome.2, 1,
            "the purged document stopped counting: the third batch takes its first"
        );
    }

    #[test]
    fn batches_come_newest_first_in_keyset_pages_of_their_company() {
        let conn = crate::store::test_support::memory();
        let (company, other) = (
            crate::store::test_support::company(&conn),
            crate::store::test_support::company(&conn),
        );
        let now = Utc::now();
        let mut ids = Vec::new();
        for _ in 0..5 {
            let b = create(&conn, &company, None, None, WINDOW, now).unwrap();
            // At most three open: close each so the next may open.
            cancel(&conn, &company, &b.id, None, now).unwrap();
            ids.push(b.id);
        }
        create(&conn, &other, None, None, WINDOW, now).unwrap();
        let page =
            |before: Option<&BatchId>| -> Vec<BatchId> { list(&conn, &company, before, 2).unwrap().into_iter().map(|b| b.id).collect() };
        let first = page(None);
        assert_eq!(first, [ids[4].clone(), ids[3].clone()]);
        assert_eq!(page(first.last()), [ids[2].clone(), ids[1].clone()]);
        assert_eq!(page(Some(&ids[1])), [ids[0].clone()]);
        assert!(page(Some(&ids[0])).is_empty());
        let foreign = list(&conn, &other, None, 10).unwrap();
        assert_eq!(foreign.len(), 1);
        assert!(page(Some(&foreign[0].id)).is_empty(), "another company's cursor opens nothing");
    }
}
