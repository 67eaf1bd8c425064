//! Webhook events: each is recorded with its exact body, handed to the notifier through the
//! outbox, and its attempts logged; dead letters stay listed until an operator replays them.

use super::error::{stored, stored_time, RepoError};
use super::outbox;
use crate::ids::{CompanyId, EventId};
use crate::messages::{DeliveryAttempt, DeliveryOutcome, EventDelivery};
use crate::telemetry::RequestId;
use crate::webhook::{DeliveryStatus, EventBody, EventType, WebhookEvent};
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

/// Records `event` with its id and time as the exact body every attempt will send, and queues its
/// first delivery attempt.
pub fn emit(
    tx: &Connection,
    company: &CompanyId,
    url: &str,
    event: WebhookEvent,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<EventId, RepoError> {
    let id = EventId::generate(now);
    let event_type = event.event_type().as_str();
    let body = EventBody {
        event_id: id.clone(),
        occurred_at: now,
        event,
    };
    let body = serde_json::to_string(&body)?;
    let at = crate::time::format(now);
    tx.execute(
        "INSERT INTO webhook_events (id, company_id, event_type, url, body, status, created_at, updated_at, request_id) VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?6, ?7)",
        params![id.as_str(), company.as_str(), event_type, url, body, at, request_id.map(RequestId::as_str)],
    )?;
    queue_first_attempt(tx, &id, company.clone(), url.into(), body, request_id.cloned())?;
    Ok(id)
}

/// Logs one attempt; a repeated report of the same attempt changes nothing.
pub fn record_attempt(tx: &Connection, a: &DeliveryAttempt) -> Result<(), RepoError> {
    let outcome = serde_json::to_value(a.outcome)?;
    let outcome = outcome.as_str().unwrap_or("unknown");
    let inserted = tx.execute(
        "INSERT OR IGNORE INTO webhook_attempts (event_id, attempt, at, status_code, error, outcome) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            a.event_id.as_str(),
            a.attempt,
            crate::time::format(a.at),
            a.status_code,
            a.error,
            outcome
        ],
    )?;
    if inserted == 0 {
        return Ok(());
    }
    let status = match a.outcome {
        DeliveryOutcome::Delivered => DeliveryStatus::Delivered,
        DeliveryOutcome::Retrying => DeliveryStatus::Retrying,
        DeliveryOutcome::Dead => DeliveryStatus::Dead,
        DeliveryOutcome::Gone => DeliveryStatus::Gone,
    };
    // Attempts can be reported out of order: only the newest one sets the status.
    tx.execute(
        "UPDATE webhook_events SET status = ?2, attempts = ?3, last_status_code = ?4, last_error = ?5, updated_at = ?6 WHERE id = ?1 AND attempts < ?3",
        params![a.event_id.as_str(), status.as_str(), a.attempt, a.status_code, a.error, crate::time::format(a.at)],
    )?;
    Ok(())
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSummary {
    pub event_id: EventId,
    pub company_id: CompanyId,
    pub event: EventType,
    pub url: String,
    pub status: DeliveryStatus,
    pub attempts: u32,
    pub last_status_code: Option<u16>,
    pub last_error: Option<String>,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::serde_millis")]
    pub updated_at: DateTime<Utc>,
}

/// Events in a status (`dead` for dead letters), optionally for one company, newest first.
pub fn list(
    c: &Connection,
    status: Option<DeliveryStatus>,
    company: Option<&CompanyId>,
    limit: u32,
) -> Result<Vec<EventSummary>, RepoError> {
    let mut stmt = c.prepare(
        "SELECT id, company_id, event_type, url, status, attempts, last_status_code, last_error, created_at, updated_at FROM webhook_events
         WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR company_id = ?2) ORDER BY created_at DESC, id LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        params![status.map(DeliveryStatus::as_str), company.map(|c| c.as_str()), limit],
        |r| {
            Ok(EventRow {
                event_id: r.get(0)?,
                company_id: r.get(1)?,
                event: r.get(2)?,
                url: r.get(3)?,
                status: r.get(4)?,
                attempts: r.get(5)?,
                last_status_code: r.get(6)?,
                last_error: r.get(7)?,
                created_at: r.get(8)?,
                updated_at: r.get(9)?,
            })
        },
    )?;
    rows.map(|row| row?.parse()).collect()
}

/// An event as SQLite holds it, before its columns are checked.
struct EventRow {
    event_id: String,
    company_id: String,
    event: String,
    url: String,
    status: String,
    attempts: u32,
    last_status_code: Option<u16>,
    last_error: Option<String>,
    created_at: String,
    updated_at: String,
}

impl EventRow {
    fn parse(self) -> Result<EventSummary, RepoError> {
        Ok(EventSummary {
            event_id: stored(&self.event_id)?,
            company_id: stored(&self.company_id)?,
            event: stored(&self.event)?,
            url: self.url,
            status: stored(&self.status)?,
            attempts: self.attempts,
            last_status_code: self.last_status_code,
            last_error: self.last_error,
            created_at: stored_time(&self.created_at)?,
            updated_at: stored_time(&self.updated_at)?,
        })
    }
}

/// Queues a dead (or gone) event again, same id and body, attempts counted from zero.
pub fn replay(tx: &Connection, id: &EventId, now: DateTime<Utc>) -> Result<(), RepoError> {
    let row: Option<(String, String, String, String, Option<String>)> = tx
        .query_row(
            "SELECT company_id, url, body, status, request_id FROM webhook_events WHERE id = ?1",
            [id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .optional()?;
    let (company, url, body, status, request_id) = row.ok_or(RepoError::NotFound)?;
    let status: DeliveryStatus = stored(&status)?;
    if !status.is_dead_letter() {
        return Err(RepoError::InvalidState(format!(
            "event {id} is {status}: only dead letters are replayed"
        )));
    }
    tx.execute("DELETE FROM webhook_attempts WHERE event_id = ?1", [id.as_str()])?;
    tx.execute(
        "UPDATE webhook_events SET status = 'pending', attempts = 0, updated_at = ?2 WHERE id = ?1",
        params![id.as_str(), crate::time::format(now)],
    )?;
    queue_first_attempt(
        tx,
        id,
        stored(&company)?,
        url,
        body,
        request_id.as_deref().and_then(RequestId::parse),
    )?;
    Ok(())
}

/// Hands attempt 1 of an event to the notifier through the outbox.
fn queue_first_attempt(
    tx: &Connection,
    id: &EventId,
    company: CompanyId,
    url: String,
    body: String,
    request_id: Option<RequestId>,
) -> Result<(), RepoError> {
    outbox::push(
        tx,
        &EventDelivery {
            event_id: id.clone(),
            company_id: company,
            url,
            body,
            attempt: 1,
            deferrals: 0,
            request_id,
        },
    )
}
