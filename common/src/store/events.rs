//! Webhook events: each is recorded with its exact body, handed to the notifier through the
//! outbox, and its attempts logged; dead letters stay listed until an operator replays them.

use super::error::{stored, stored_time, RepoError};
use super::outbox;
use crate::messages::{DeliveryAttempt, DeliveryOutcome, EventDelivery};
use crate::telemetry::RequestId;
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, EventId, WorkflowId};
use domain::webhook::{DeliveryStatus, EventBody, EventType, WebhookEvent};
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
    let (id, body) = insert(tx, company, url, event, DeliveryStatus::Pending, None, request_id, now)?;
    queue_first_attempt(tx, &id, company.clone(), url.into(), body, request_id.cloned())?;
    Ok(id)
}

/// Why a test event was kept and not sent, as its delivery log says.
pub const NO_TEST_URL: &str = "the workflow has no test webhook URL: test events are never sent to the live one";

/// Records a test event of a workflow that has no test URL: kept as `not_sent` with the reason,
/// listed with the others, never queued (and not replayable: no URL to send it to).
pub fn record_not_sent(
    tx: &Connection,
    company: &CompanyId,
    event: WebhookEvent,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<EventId, RepoError> {
    let (id, _) = insert(tx, company, "", event, DeliveryStatus::NotSent, Some(NO_TEST_URL), request_id, now)?;
    Ok(id)
}

#[allow(clippy::too_many_arguments)]
fn insert(
    tx: &Connection,
    company: &CompanyId,
    url: &str,
    event: WebhookEvent,
    status: DeliveryStatus,
    last_error: Option<&str>,
    request_id: Option<&RequestId>,
    now: DateTime<Utc>,
) -> Result<(EventId, String), RepoError> {
    let id = EventId::generate(now);
    let event_type = event.event_type().as_str();
    let workflow = event.workflow_id().map(|w| w.as_str().to_owned());
    let body = EventBody {
        event_id: id.clone(),
        occurred_at: now,
        livemode: super::companies::get(tx, company)?.mode.is_live(),
        event,
    };
    let body = serde_json::to_string(&body)?;
    let at = domain::time::format(now);
    tx.execute(
        "INSERT INTO webhook_events (id, company_id, event_type, url, body, status, last_error, created_at, updated_at, request_id, workflow_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10)",
        params![
            id.as_str(),
            company.as_str(),
            event_type,
            url,
            body,
            status.as_str(),
            last_error,
            at,
            request_id.map(RequestId::as_str),
            workflow
        ],
    )?;
    Ok((id, body))
}

/// Logs one attempt; a repeated report of the same attempt changes nothing.
pub fn record_attempt(tx: &Connection, a: &DeliveryAttempt) -> Result<(), RepoError> {
    let outcome = serde_json::to_value(a.outcome)?;
    let outcome = outcome.as_str().unwrap_or("unknown");
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO webhook_attempts (event_id, attempt, at, status_code, error, outcome, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            a.event_id.as_str(),
            a.attempt,
            domain::time::format(a.at),
            a.status_code,
            a.error,
            outcome,
            a.duration_ms.and_then(|ms| i64::try_from(ms).ok())
        ])?;
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
    tx.prepare_cached(
        "UPDATE webhook_events SET status = ?2, attempts = ?3, last_status_code = ?4, last_error = ?5, updated_at = ?6 WHERE id = ?1 AND attempts < ?3",
    )?
    .execute(params![a.event_id.as_str(), status.as_str(), a.attempt, a.status_code, a.error, domain::time::format(a.at)])?;
    Ok(())
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSummary {
    pub event_id: EventId,
    pub company_id: CompanyId,
    pub event: EventType,
    /// `false` for an event of the company's test account (its `livemode`).
    pub livemode: bool,
    /// Empty for a test event kept as `not_sent`.
    pub url: String,
    pub status: DeliveryStatus,
    pub attempts: u32,
    pub last_status_code: Option<u16>,
    pub last_error: Option<String>,
    #[serde(with = "domain::time::serde_millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "domain::time::serde_millis")]
    pub updated_at: DateTime<Utc>,
}

/// Events in a status (`dead` for dead letters), optionally for one company (with its test
/// account's), newest first.
pub fn list(
    c: &Connection,
    status: Option<DeliveryStatus>,
    company: Option<&CompanyId>,
    limit: u32,
) -> Result<Vec<EventSummary>, RepoError> {
    let mut stmt = c.prepare(
        "SELECT e.id, e.company_id, e.event_type, e.url, e.status, e.attempts, e.last_status_code, e.last_error, e.created_at,
                e.updated_at, co.test_of IS NULL
         FROM webhook_events e JOIN companies co ON co.id = e.company_id
         WHERE (?1 IS NULL OR e.status = ?1) AND (?2 IS NULL OR e.company_id IN (SELECT id FROM companies WHERE id = ?2 OR test_of = ?2))
         ORDER BY e.created_at DESC, e.id LIMIT ?3",
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
                livemode: r.get(10)?,
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
    livemode: bool,
}

impl EventRow {
    fn parse(self) -> Result<EventSummary, RepoError> {
        Ok(EventSummary {
            event_id: stored(&self.event_id)?,
            company_id: stored(&self.company_id)?,
            event: stored(&self.event)?,
            livemode: self.livemode,
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

/// Queues a dead (or gone) event again, same id and body, attempts counted from zero. A test
/// account's workflow event goes to the workflow's test URL as it is now, never to the URL it was
/// stored with: an event of a version before test URLs carries the live one.
pub fn replay(tx: &Connection, id: &EventId, now: DateTime<Utc>) -> Result<(), RepoError> {
    type Row = (String, String, String, String, Option<String>, Option<String>, bool);
    let row: Option<Row> = tx
        .query_row(
            "SELECT e.company_id, e.url, e.body, e.status, e.request_id, e.workflow_id, c.test_of IS NOT NULL
             FROM webhook_events e JOIN companies c ON c.id = e.company_id WHERE e.id = ?1",
            [id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
        )
        .optional()?;
    let (company, url, body, status, request_id, workflow, test) = row.ok_or(RepoError::NotFound)?;
    let status: DeliveryStatus = stored(&status)?;
    if !status.is_dead_letter() {
        return Err(RepoError::InvalidState(format!(
            "event {id} is {status}: only dead letters are replayed"
        )));
    }
    let url = match (test, workflow) {
        (true, Some(workflow)) => test_url_of(tx, &workflow)?,
        _ => url,
    };
    tx.execute("DELETE FROM webhook_attempts WHERE event_id = ?1", [id.as_str()])?;
    tx.execute(
        "UPDATE webhook_events SET status = 'pending', attempts = 0, url = ?3, updated_at = ?2 WHERE id = ?1",
        params![id.as_str(), domain::time::format(now), url],
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

/// Where a test event of `workflow` goes now; refused when the workflow has no test URL.
fn test_url_of(tx: &Connection, workflow: &str) -> Result<String, RepoError> {
    let url: Option<Option<String>> = tx
        .query_row("SELECT test_webhook_url FROM workflows WHERE id = ?1", [workflow], |r| r.get(0))
        .optional()?;
    url.flatten().ok_or_else(|| RepoError::InvalidState(NO_TEST_URL.to_owned()))
}

/// Replays a dead event of a workflow of the company (or of its test account), as [`replay`]
/// does; an event of another workflow or company is not found.
pub fn replay_of(tx: &Connection, company: &CompanyId, workflow: &WorkflowId, id: &EventId, now: DateTime<Utc>) -> Result<(), RepoError> {
    let owned = tx
        .query_row(
            "SELECT 1 FROM webhook_events WHERE id = ?1 AND workflow_id = ?3
             AND company_id IN (SELECT id FROM companies WHERE id = ?2 OR test_of = ?2)",
            [id.as_str(), company.as_str(), workflow.as_str()],
            |_| Ok(()),
        )
        .optional()?;
    owned.ok_or(RepoError::NotFound)?;
    replay(tx, id, now)
}

/// The events whose delivery ended (delivered, dead, gone or not sent) before a cut-off, oldest first, from
/// the partial index `webhook_events_ended`: an event pending or retrying is never among them.
const ENDED: &str = "SELECT rowid FROM webhook_events WHERE status IN ('delivered', 'dead', 'gone', 'not_sent') AND updated_at < ?1
     ORDER BY updated_at LIMIT ?2";

/// Forgets up to `limit` events whose delivery ended before `before`, with their attempts (the
/// retention of `recorder::retention`); how many it forgot. One bounded transaction each call.
pub fn forget_ended(tx: &Connection, before: DateTime<Utc>, limit: u32) -> Result<usize, RepoError> {
    let cut = domain::time::format(before);
    tx.prepare_cached(&format!(
        "DELETE FROM webhook_attempts WHERE event_id IN (SELECT id FROM webhook_events WHERE rowid IN ({ENDED}))"
    ))?
    .execute(params![cut, limit])?;
    Ok(tx
        .prepare_cached(&format!("DELETE FROM webhook_events WHERE rowid IN ({ENDED})"))?
        .execute(params![cut, limit])?)
}

/// How many of a workflow's last events its Diffusion tab shows, with their attempts.
pub const RECENT_EVENTS: u32 = 20;

/// One line of a workflow's delivery log: an event and one of its attempts (none yet while the
/// first is on its way).
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub event_id: EventId,
    pub event: EventType,
    pub status: DeliveryStatus,
    pub created_at: DateTime<Utc>,
    pub attempt: Option<AttemptLine>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AttemptLine {
    pub attempt: u32,
    pub at: DateTime<Utc>,
    pub status_code: Option<u16>,
    pub outcome: DeliveryOutcome,
    pub duration_ms: Option<u64>,
}

/// The last [`RECENT_EVENTS`] events of a workflow with each of their attempts, newest first:
/// the events come from an index of the workflow's events, so the cost does not grow with the
/// company's history.
pub fn deliveries(c: &Connection, company: &CompanyId, workflow: &WorkflowId) -> Result<Vec<Delivery>, RepoError> {
    type Raw = (
        String,
        String,
        String,
        String,
        Option<u32>,
        Option<String>,
        Option<u16>,
        Option<String>,
        Option<i64>,
    );
    let mut stmt = c.prepare(
        "SELECT e.id, e.event_type, e.status, e.created_at, a.attempt, a.at, a.status_code, a.outcome, a.duration_ms
         FROM (SELECT id, event_type, status, created_at FROM webhook_events
               WHERE company_id = ?1 AND workflow_id = ?2 ORDER BY created_at DESC, id DESC LIMIT ?3) e
         LEFT JOIN webhook_attempts a ON a.event_id = e.id
         ORDER BY e.created_at DESC, e.id DESC, a.attempt DESC",
    )?;
    let rows = stmt
        .query_map(params![company.as_str(), workflow.as_str(), RECENT_EVENTS], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
            ))
        })?
        .collect::<Result<Vec<Raw>, _>>()?;
    rows.into_iter()
        .map(|(id, event, status, created_at, attempt, at, status_code, outcome, duration_ms)| {
            let attempt = match (attempt, at, outcome) {
                (Some(attempt), Some(at), Some(outcome)) => Some(AttemptLine {
                    attempt,
                    at: stored_time(&at)?,
                    status_code,
                    outcome: serde_json::from_value(serde_json::Value::String(outcome))?,
                    duration_ms: duration_ms.and_then(|ms| u64::try_from(ms).ok()),
                }),
                _ => None,
            };
            Ok(Delivery {
                event_id: stored(&id)?,
                event: stored(&event)?,
                status: stored(&status)?,
                created_at: stored_time(&created_at)?,
                attempt,
            })
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, memory};
    use chrono::Duration;

    /// An event in `status` last changed at `at`, with two attempts.
    fn event(c: &Connection, company: &CompanyId, id: &str, status: &str, at: DateTime<Utc>) {
        c.execute(
            "INSERT INTO webhook_events (id, company_id, event_type, url, body, status, attempts, created_at, updated_at)
             VALUES (?1, ?2, 'batch.completed', 'https://hooks.example.com/x', '{}', ?3, 2, ?4, ?4)",
            params![id, company.as_str(), status, domain::time::format(at)],
        )
        .unwrap();
        for attempt in [1, 2] {
            c.execute(
                "INSERT INTO webhook_attempts (event_id, attempt, at, outcome) VALUES (?1, ?2, ?3, 'retrying')",
                params![id, attempt, domain::time::format(at)],
            )
            .unwrap();
        }
    }

    fn ids(c: &Connection, sql: &str) -> Vec<String> {
        let mut stmt = c.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn ended_deliveries_are_forgotten_in_bounded_batches_and_pending_ones_never() {
        let c = memory();
        let co = company(&c);
        let now = Utc::now();
        let (old, fresh) = (now - Duration::days(40), now - Duration::days(10));
        for (id, status, at) in [
            ("delivered-old", "delivered", old),
            ("dead-old", "dead", old),
            ("gone-old", "gone", old),
            ("retrying-old", "retrying", old),
            ("pending-old", "pending", old),
            ("delivered-fresh", "delivered", fresh),
        ] {
            event(&c, &co, id, status, at);
        }
        let cut = now - Duration::days(30);
        let rounds: Vec<usize> = (0..3).map(|_| forget_ended(&c, cut, 2).unwrap()).collect();
        assert_eq!(rounds, [2, 1, 0], "at most the limit per call, until none is due");
        assert_eq!(
            ids(&c, "SELECT id FROM webhook_events ORDER BY id"),
            ["delivered-fresh", "pending-old", "retrying-old"]
        );
        assert_eq!(
            ids(&c, "SELECT DISTINCT event_id FROM webhook_attempts ORDER BY event_id"),
            ["delivered-fresh", "pending-old", "retrying-old"],
            "attempts go with their event"
        );
    }

    /// A test event stored with the live URL (by a version before test URLs) is replayed to the
    /// workflow's test URL, or not at all: never to the live one.
    #[test]
    fn a_test_event_is_replayed_to_the_test_url_never_to_the_url_it_was_stored_with() {
        use crate::store::{companies, workflows};
        let c = memory();
        let (co, now) = (company(&c), Utc::now());
        let test = companies::account(&c, &co, domain::vocabulary::Mode::Test, now).unwrap();
        let live_url = "https://live.example.com/hook";
        let wf = workflows::create(
            &c,
            &co,
            "KYC",
            domain::vocabulary::DocumentCategory::Identite,
            Some(live_url),
            &domain::model::WorkflowRules::default(),
            false,
            now,
        )
        .unwrap();
        let id = EventId::generate(now);
        c.execute(
            "INSERT INTO webhook_events (id, company_id, event_type, url, body, status, attempts, created_at, updated_at, workflow_id)
             VALUES (?1, ?2, 'verification.completed', ?3, '{}', 'dead', 8, ?4, ?4, ?5)",
            params![
                id.as_str(),
                test.as_str(),
                live_url,
                domain::time::format(now),
                wf.workflow.id.as_str()
            ],
        )
        .unwrap();
        let refused = replay(&c, &id, now);
        assert!(
            matches!(refused, Err(RepoError::InvalidState(_))),
            "no test URL, no replay: {refused:?}"
        );
        workflows::set_test_webhook_url(&c, &co, &wf.workflow.id, Some("https://test.example.com/hook")).unwrap();
        replay(&c, &id, now).unwrap();
        let url: String = c
            .query_row("SELECT url FROM webhook_events WHERE id = ?1", [id.as_str()], |r| r.get(0))
            .unwrap();
        assert_eq!(url, "https://test.example.com/hook");
        let queued: String = c.query_row("SELECT payload FROM outbox", [], |r| r.get(0)).unwrap();
        assert!(
            queued.contains("test.example.com") && !queued.contains("live.example.com"),
            "{queued}"
        );
    }

    #[test]
    fn ended_deliveries_are_found_by_their_index() {
        let c = memory();
        let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {ENDED}")).unwrap();
        let plan: Vec<String> = stmt
            .query_map(params!["2025-01-01T00:00:00.000Z", 500], |r| r.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(plan, ["SEARCH webhook_events USING INDEX webhook_events_ended (updated_at<?)"]);
    }
}
