//! How long Sceau keeps what would otherwise only pile up: delivered webhooks, idempotency keys,
//! portal sessions, sign-in failures and the audit log. Each table forgets its expired rows
//! through the store, a bounded batch per transaction, so the one writer is never held for long
//! and every other write gets its turn between two batches. Images have their company's own
//! retention (see `sweeper::purge_images`).

use chrono::{DateTime, Duration, Months, Utc};
use common::config::Config;
use common::store::{audit, events, idempotency, portal_sessions, sign_in_throttle, RepoError, Store};
use rusqlite::Connection;

/// Rows one transaction deletes at most: a few milliseconds of the writer.
pub const BATCH: u32 = 500;

/// A webhook event (and its attempts) is kept this long after its delivery ended (delivered,
/// dead or gone): the Diffusion tab and the operator see a month of deliveries, and a dead
/// letter may be replayed for as long. One still pending or retrying is never forgotten.
pub const WEBHOOK_EVENTS_KEPT: Duration = Duration::days(30);

/// A portal session is kept this long after it can no longer be used (12 hours after its start
/// at most, `portal_sessions::ABSOLUTE`), so a member's question about a recent sign-in still
/// finds it; then it is forgotten, signed out or not.
pub const PORTAL_SESSIONS_KEPT: Duration = Duration::days(7);

/// The retention the configuration chooses (the others are fixed above, and idempotency keys and
/// sign-in failures are forgotten once they no longer count: 24 h and one hour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// `SCEAU_AUDIT_RETENTION_MONTHS`.
    pub audit: Months,
}

impl Retention {
    pub fn of(config: &Config) -> Self {
        Self {
            audit: Months::new(config.audit_retention_months),
        }
    }
}

/// The tables with a retention, as logs name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    WebhookEvents,
    IdempotencyKeys,
    PortalSessions,
    SignInFailures,
    AuditLog,
}

impl Table {
    pub const ALL: [Table; 5] = [
        Table::WebhookEvents,
        Table::IdempotencyKeys,
        Table::PortalSessions,
        Table::SignInFailures,
        Table::AuditLog,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Table::WebhookEvents => "webhook_events",
            Table::IdempotencyKeys => "idempotency_keys",
            Table::PortalSessions => "portal_sessions",
            Table::SignInFailures => "sign_in_failures",
            Table::AuditLog => "audit_log",
        }
    }

    /// Forgets up to [`BATCH`] of this table's rows expired at `now`; how many.
    fn forget(self, tx: &Connection, retention: Retention, now: DateTime<Utc>) -> Result<usize, RepoError> {
        match self {
            Table::WebhookEvents => events::forget_ended(tx, now - WEBHOOK_EVENTS_KEPT, BATCH),
            Table::IdempotencyKeys => idempotency::forget_expired(tx, now, BATCH),
            Table::PortalSessions => portal_sessions::forget_ended(tx, now - portal_sessions::ABSOLUTE - PORTAL_SESSIONS_KEPT, BATCH),
            Table::SignInFailures => sign_in_throttle::forget_expired(tx, now, BATCH),
            // A count of months beyond the calendar (none is allowed) forgets nothing.
            Table::AuditLog => match now.checked_sub_months(retention.audit) {
                Some(before) => audit::forget_before(tx, before, BATCH),
                None => Ok(0),
            },
        }
    }
}

/// Forgets every table's expired rows at `now`, batch after batch; how many rows each forgot.
pub async fn sweep(store: &Store, retention: Retention, now: DateTime<Utc>) -> Result<Vec<(Table, usize)>, RepoError> {
    let mut forgotten = Vec::with_capacity(Table::ALL.len());
    for table in Table::ALL {
        let mut total = 0;
        loop {
            let n = store.write(move |tx| table.forget(tx, retention, now)).await?;
            total += n;
            if n < BATCH as usize {
                break;
            }
            // The writer's queue serves the writes that waited meanwhile before the next batch.
            tokio::task::yield_now().await;
        }
        forgotten.push((table, total));
    }
    Ok(forgotten)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::store::test_support::TempStore;

    /// One row of each table either side of its retention: the sweep forgets only the old ones.
    #[tokio::test]
    async fn each_table_forgets_only_what_its_retention_no_longer_keeps() {
        let store = TempStore::new("retention");
        let now = Utc::now();
        let stamp = |t: DateTime<Utc>| domain::time::format(t);
        let (old_event, fresh_event) = (
            stamp(now - WEBHOOK_EVENTS_KEPT - Duration::hours(1)),
            stamp(now - Duration::days(29)),
        );
        let (old_session, fresh_session) = (
            stamp(now - portal_sessions::ABSOLUTE - PORTAL_SESSIONS_KEPT - Duration::hours(1)),
            stamp(now - Duration::days(7)),
        );
        let (old_audit, fresh_audit) = (
            stamp(now.checked_sub_months(Months::new(14)).unwrap()),
            stamp(now.checked_sub_months(Months::new(12)).unwrap()),
        );
        let (old_key, fresh_key) = (
            (now - Duration::hours(25)).timestamp_millis(),
            (now - Duration::hours(23)).timestamp_millis(),
        );
        let (old_failure, fresh_failure) = (stamp(now - Duration::hours(2)), stamp(now - Duration::minutes(30)));
        store
            .write(move |tx| {
                let company = common::store::test_support::company(tx);
                let member = common::store::members::invite(
                    tx,
                    &company,
                    &domain::team::Email::parse("m@example.fr").unwrap(),
                    domain::team::Role::Viewer,
                    now,
                )?;
                tx.execute_batch(&format!(
                    "INSERT INTO webhook_events (id, company_id, event_type, url, body, status, created_at, updated_at) VALUES
                        ('old', '{company}', 'batch.completed', 'u', '{{}}', 'delivered', '{old_event}', '{old_event}'),
                        ('retrying', '{company}', 'batch.completed', 'u', '{{}}', 'retrying', '{old_event}', '{old_event}'),
                        ('fresh', '{company}', 'batch.completed', 'u', '{{}}', 'dead', '{fresh_event}', '{fresh_event}');
                     INSERT INTO portal_sessions (token_hash, id, member_id, company_id, csrf_token, second_factor_due, created_at, last_seen_at) VALUES
                        (x'01', 'old', '{m}', '{company}', 'c', 0, '{old_session}', '{old_session}'),
                        (x'02', 'fresh', '{m}', '{company}', 'c', 0, '{fresh_session}', '{fresh_session}');
                     INSERT INTO audit_log (company_id, action, target, at) VALUES
                        ('{company}', 'company.settings', 'old', '{old_audit}'),
                        ('{company}', 'company.settings', 'fresh', '{fresh_audit}');
                     INSERT INTO idempotency_keys (company_id, key, created_at_ms) VALUES
                        ('{company}', 'old', {old_key}), ('{company}', 'fresh', {fresh_key});
                     INSERT INTO sign_in_failures (scope, failures, last_failure_at) VALUES
                        ('old', 1, '{old_failure}'), ('fresh', 1, '{fresh_failure}');",
                    m = member.id,
                ))?;
                Ok::<_, RepoError>(())
            })
            .await
            .unwrap();
        let retention = Retention { audit: Months::new(13) };
        let forgotten = sweep(&store, retention, now).await.unwrap();
        assert_eq!(forgotten, Table::ALL.map(|table| (table, 1)), "one row of each table");
        for (table, key) in [
            ("webhook_events", "id"),
            ("portal_sessions", "id"),
            ("audit_log", "target"),
            ("idempotency_keys", "key"),
            ("sign_in_failures", "scope"),
        ] {
            let left: Vec<String> = store
                .read(move |c| {
                    let mut stmt = c.prepare(&format!("SELECT {key} FROM {table} ORDER BY {key}"))?;
                    let rows = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
                    Ok::<_, RepoError>(rows)
                })
                .await
                .unwrap();
            let expected: &[&str] = if table == "webhook_events" {
                &["fresh", "retrying"]
            } else {
                &["fresh"]
            };
            assert_eq!(left, expected, "{table}");
        }
    }
}
