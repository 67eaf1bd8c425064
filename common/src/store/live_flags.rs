//! What distributed mode mirrors into Redis for the workers and the reaper (batch states,
//! deadlines, company AI flags, draining), read from SQLite in one transaction. Ids come back as
//! stored, so the re-seed can skip a malformed row rather than fail on it.

use super::error::RepoError;
use rusqlite::Connection;

/// One batch deadline: the batch and when it falls due (Unix milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlineRow {
    pub batch_id: String,
    pub due_at_ms: i64,
}

/// One batch's status as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchStatusRow {
    pub batch_id: String,
    pub status: String,
}

/// One company's AI flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AiFlagRow {
    pub company_id: String,
    pub ai_enabled: bool,
}

/// Everything the re-seed writes, consistent as of one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagSnapshot {
    pub deadlines: Vec<DeadlineRow>,
    pub batches: Vec<BatchStatusRow>,
    pub companies: Vec<AiFlagRow>,
    pub draining: bool,
}

/// Every batch deadline, by batch id.
pub fn deadlines(c: &Connection) -> Result<Vec<DeadlineRow>, RepoError> {
    let rows = c
        .prepare("SELECT batch_id, due_at FROM deadlines ORDER BY batch_id")?
        .query_map([], |r| {
            Ok(DeadlineRow {
                batch_id: r.get(0)?,
                due_at_ms: r.get(1)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Reads the snapshot: every deadline, the active batches whatever their age (a reaper that never
/// ran leaves them active) plus those created since `recent_since` whatever their status, every
/// company's AI flag, and the draining flag.
pub fn snapshot(c: &Connection, recent_since: &str) -> Result<FlagSnapshot, RepoError> {
    let tx = c.unchecked_transaction()?;
    let deadlines = deadlines(&tx)?;
    // No index on `created_at`: a scan of the table, a few ms for thousands of rows.
    let batches = tx
        .prepare("SELECT id, status FROM batches WHERE status IN ('open', 'in_progress') OR created_at >= ?1")?
        .query_map([recent_since], |r| {
            Ok(BatchStatusRow {
                batch_id: r.get(0)?,
                status: r.get(1)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let companies = tx
        .prepare("SELECT id, ai_enabled FROM companies")?
        .query_map([], |r| {
            Ok(AiFlagRow {
                company_id: r.get(0)?,
                ai_enabled: r.get(1)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let draining = super::settings::draining(&tx)?;
    tx.finish()?;
    Ok(FlagSnapshot {
        deadlines,
        batches,
        companies,
        draining,
    })
}
