//! Rebuilds Redis from SQLite, the truth: every deadline, the state of every recent batch and every
//! company's AI flag, and the drain of the worker pool. Redis keeps nothing on disk, so the
//! gateway runs this at start, every few
//! seconds, and at once when Redis comes back or lost its data; after it, a flushed or restarted
//! Redis has lost no deadline and no flag. Idempotent, and cheap for thousands of rows: one read
//! transaction, then pipelines of large commands.

use super::flags::{ai_value, BATCH_STATE_TTL};
use super::{BackendError, RedisBackend};
use crate::store::{live_flags, RepoError, Store};
use chrono::Utc;
use domain::ids::{BatchId, CompanyId};
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Batches created this recently have their state written, whatever it is. Longer than the open
/// window plus the completion window (24 h + 24 h): a job still in a queue belongs to such a batch,
/// or it is past its own deadline and the worker expires it without asking for flags.
pub const RECENT_BATCHES: Duration = Duration::from_secs(3 * 24 * 3600);

/// Members per ZADD / ZREM, and commands per pipeline round trip.
const MEMBERS_PER_COMMAND: usize = 500;
const COMMANDS_PER_PIPELINE: usize = 1000;

/// What a re-seed wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReseedReport {
    /// Deadlines written to the sorted set (every row of SQLite's `deadlines`).
    pub deadlines: usize,
    /// Members removed from the set because SQLite no longer has them (closed batches).
    pub stale_deadlines_removed: usize,
    /// `open` / `in_progress` batch states written.
    pub active_batches: usize,
    /// Terminal states (ended, canceled, expired) written for recent batches.
    pub terminal_batches: usize,
    /// Company AI flags written.
    pub companies: usize,
    /// Rows skipped because an id in SQLite is malformed (logged).
    pub skipped_rows: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ReseedError {
    #[error("re-seed cannot read SQLite: {0}")]
    Store(#[from] RepoError),
    #[error("re-seed cannot write Redis: {0}")]
    Redis(#[from] BackendError),
}

/// Sends `commands` in pipelines of [`COMMANDS_PER_PIPELINE`], ignoring their replies (errors still fail).
async fn send_all(conn: &mut deadpool_redis::Connection, commands: Vec<::redis::Cmd>) -> Result<(), BackendError> {
    let mut pipe = ::redis::pipe();
    for command in commands {
        pipe.add_command(command).ignore();
        if pipe.len() >= COMMANDS_PER_PIPELINE {
            let _: () = pipe.query_async(conn).await?;
            pipe = ::redis::pipe();
        }
    }
    if !pipe.is_empty() {
        let _: () = pipe.query_async(conn).await?;
    }
    Ok(())
}

fn malformed(kind: &str, id: &str) {
    tracing::warn!(kind, id = %id.chars().take(64).collect::<String>(), "re-seed skipped a malformed id");
}

/// Writes into Redis what SQLite knows. Safe to run at any time and any number of times, alongside
/// the gateway's own writes and the reaper's pops:
/// - deadlines: every row is ZADDed (a deadline popped by a reaper whose expiry never reached the
///   recorder comes back, since SQLite drops the row only when the batch closes); members SQLite no
///   longer has are removed. Redis's members are read *before* SQLite, so a deadline the gateway
///   scheduled meanwhile (SQLite commit first, then Redis) is in the snapshot and never removed.
/// - batch states: written (with [`BATCH_STATE_TTL`]) for every active batch and for every recent
///   terminal one. Terminal states are written rather than deleted, because an absent state means
///   "unknown, wait" to a worker: deleting them would leave the jobs of a canceled batch waiting
///   forever instead of being dropped.
/// - company AI flags: all of them.
///
/// A write racing with this one (a cancel right after the snapshot) can be overwritten by the
/// older value until the next run; harmless, as the recorder applies a result only to an item not
/// already settled, and expiring an already closed batch does nothing.
pub async fn reseed(store: &Store, redis: &RedisBackend) -> Result<ReseedReport, ReseedError> {
    let deadlines_key = redis.deadlines_key();
    let mut conn = redis.conn().await?;
    let in_redis: Vec<String> = ::redis::cmd("ZRANGE")
        .arg(&deadlines_key)
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .map_err(BackendError::from)?;

    let since = domain::time::format(Utc::now() - chrono::Duration::from_std(RECENT_BATCHES).unwrap_or(chrono::Duration::days(3)));
    let snapshot = store.read(move |c| live_flags::snapshot(c, &since)).await?;

    let mut report = ReseedReport::default();
    let mut commands = Vec::new();

    let mut deadlines = Vec::with_capacity(snapshot.deadlines.len());
    for row in &snapshot.deadlines {
        if BatchId::parse(&row.batch_id).is_err() {
            malformed("batch", &row.batch_id);
            report.skipped_rows += 1;
            continue;
        }
        deadlines.push((row.due_at_ms, row.batch_id.as_str()));
    }
    report.deadlines = deadlines.len();
    for chunk in deadlines.chunks(MEMBERS_PER_COMMAND) {
        let mut zadd = ::redis::cmd("ZADD");
        zadd.arg(&deadlines_key);
        for (due_ms, batch) in chunk {
            zadd.arg(*due_ms).arg(*batch);
        }
        commands.push(zadd);
    }
    let known: HashSet<&str> = deadlines.iter().map(|(_, b)| *b).collect();
    let stale: Vec<&String> = in_redis.iter().filter(|m| !known.contains(m.as_str())).collect();
    report.stale_deadlines_removed = stale.len();
    for chunk in stale.chunks(MEMBERS_PER_COMMAND) {
        commands.push(::redis::cmd("ZREM").arg(&deadlines_key).arg(chunk).clone());
    }

    let ttl_ms = BATCH_STATE_TTL.as_millis() as u64;
    for row in &snapshot.batches {
        let Ok(id) = BatchId::parse(&row.batch_id) else {
            malformed("batch", &row.batch_id);
            report.skipped_rows += 1;
            continue;
        };
        let status = &row.status;
        if matches!(status.as_str(), "open" | "in_progress") {
            report.active_batches += 1;
        } else {
            report.terminal_batches += 1;
        }
        commands.push(
            ::redis::cmd("SET")
                .arg(redis.batch_state_key(&id))
                .arg(status)
                .arg("PX")
                .arg(ttl_ms)
                .clone(),
        );
    }

    for row in &snapshot.companies {
        let Ok(id) = CompanyId::parse(&row.company_id) else {
            malformed("company", &row.company_id);
            report.skipped_rows += 1;
            continue;
        };
        report.companies += 1;
        commands.push(
            ::redis::cmd("SET")
                .arg(redis.company_ai_key(&id))
                .arg(ai_value(row.ai_enabled))
                .clone(),
        );
    }

    commands.push(if snapshot.draining {
        ::redis::cmd("SET").arg(redis.drain_key()).arg("on").clone()
    } else {
        ::redis::cmd("DEL").arg(redis.drain_key()).clone()
    });

    // Last, so that its presence means a complete seed.
    commands.push(
        ::redis::cmd("SET")
            .arg(redis.seeded_key())
            .arg(Utc::now().timestamp_millis())
            .clone(),
    );
    send_all(&mut conn, commands).await?;
    Ok(report)
}

/// What a probe of Redis found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    Failed,
    Seeded,
    NotSeeded,
}

/// Why to re-seed now, if at all.
fn reason(probe: Probe, was_down: bool) -> Option<&'static str> {
    match probe {
        Probe::Failed => None,
        Probe::Seeded if was_down => Some("Redis is reachable again"),
        Probe::NotSeeded => Some("Redis lost its data"),
        Probe::Seeded => None,
    }
}

async fn probe(redis: &RedisBackend) -> Probe {
    let result: Result<bool, BackendError> = async {
        let mut conn = redis.conn().await?;
        Ok(::redis::cmd("EXISTS").arg(redis.seeded_key()).query_async(&mut conn).await?)
    }
    .await;
    match result {
        Ok(true) => Probe::Seeded,
        Ok(false) => Probe::NotSeeded,
        Err(_) => Probe::Failed,
    }
}

/// Re-seeds at start, then every `every`, and at once when Redis answers again after failing (a
/// restart, a network cut) or has lost the seed marker (FLUSHDB, a restart between two probes).
/// Redis is probed every second (or every `every` if shorter). Returns when `shutdown` fires.
pub async fn watch_and_reseed(store: Store, redis: RedisBackend, every: Duration, shutdown: CancellationToken) {
    let probe_every = every.min(Duration::from_secs(1));
    // The last command sent to Redis failed.
    let mut down = false;
    // The last re-seed failed (warned once, not every second).
    let mut failing = false;
    // None until a first re-seed succeeds: until then, one is tried every probe interval.
    let mut next_periodic: Option<Instant> = None;
    loop {
        let why = match next_periodic {
            None => Some("start"),
            Some(at) if Instant::now() >= at => Some("periodic"),
            Some(_) => {
                let found = tokio::select! {
                    _ = shutdown.cancelled() => return,
                    found = probe(&redis) => found,
                };
                let why = reason(found, down);
                if found == Probe::Failed && !down {
                    tracing::warn!("Redis is unreachable; re-seeding from SQLite as soon as it answers");
                }
                down = found == Probe::Failed;
                why
            }
        };
        if let Some(why) = why {
            let started = Instant::now();
            let outcome = tokio::select! {
                _ = shutdown.cancelled() => return,
                outcome = reseed(&store, &redis) => outcome,
            };
            match outcome {
                Ok(r) => {
                    if failing || why != "periodic" {
                        tracing::info!(reason = why, "Redis re-seeded from SQLite");
                    }
                    tracing::debug!(
                        reason = why,
                        deadlines = r.deadlines,
                        stale_deadlines_removed = r.stale_deadlines_removed,
                        active_batches = r.active_batches,
                        terminal_batches = r.terminal_batches,
                        companies = r.companies,
                        skipped_rows = r.skipped_rows,
                        took_ms = started.elapsed().as_millis() as u64,
                        "re-seed done"
                    );
                    down = false;
                    failing = false;
                    next_periodic = Some(Instant::now() + every);
                }
                Err(e) => {
                    // Redis unreachable: the probe notices when it answers again and re-seeds then.
                    // Anything else (SQLite busy): retried at the next period.
                    down = matches!(&e, ReseedError::Redis(b) if b.is_unavailable());
                    if failing {
                        tracing::debug!(reason = why, error = %e, "re-seed failed again");
                    } else {
                        tracing::warn!(reason = why, error = %e, "re-seed failed; retrying");
                    }
                    failing = true;
                    next_periodic = next_periodic.map(|_| Instant::now() + every);
                }
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(probe_every) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis::test_support::TestRedis;
    use crate::redis::{FlagError, RedisDeadlines, RedisFlags};
    use crate::store::test_support::{identity_item, TempStore};
    use crate::store::{batches, companies};
    use chrono::Utc;
    use domain::vocabulary::{BatchStatus, Licence};

    struct Fixture {
        store: TempStore,
        ai_on: CompanyId,
        ai_off: CompanyId,
        open: BatchId,
        in_progress: BatchId,
        canceled: BatchId,
        old_canceled: BatchId,
        /// batch id -> due ms, as SQLite has them.
        due: Vec<(BatchId, i64)>,
    }

    async fn fixture() -> Fixture {
        let store = TempStore::new("reseed");
        let now = Utc::now();
        let window = batches::WINDOW;
        store
            .write(move |tx| {
                let on = companies::create(
                    tx,
                    "Société A",
                    Licence::Standard,
                    &crate::crypto::envelope::MasterKeys::ephemeral(),
                    now,
                )?
                .company
                .id;
                let off = companies::create(
                    tx,
                    "Société B",
                    Licence::Standard,
                    &crate::crypto::envelope::MasterKeys::ephemeral(),
                    now,
                )?
                .company
                .id;
                companies::set(tx, &off, Some(false), None)?;
                let open = batches::create(tx, &on, None, None, window, now)?.id;
                let in_progress = batches::create(tx, &on, None, None, window, now)?.id;
                batches::deposit(tx, &on, &in_progress, &identity_item("blob-front"), u64::MAX, now)?;
                batches::submit(tx, &on, &in_progress, window, now)?;
                let canceled = batches::create(tx, &off, None, None, window, now)?.id;
                batches::cancel(tx, &off, &canceled, None, now)?;
                let long_ago = now - chrono::Duration::days(5);
                let old_canceled = batches::create(tx, &off, None, None, window, long_ago)?.id;
                batches::cancel(tx, &off, &old_canceled, None, long_ago)?;
                let due = live_flags::deadlines(tx)?
                    .into_iter()
                    .map(|row| (BatchId::parse(&row.batch_id).unwrap(), row.due_at_ms))
                    .collect();
                Ok::<_, RepoError>((on, off, open, in_progress, canceled, old_canceled, due))
            })
            .await
            .map(|(ai_on, ai_off, open, in_progress, canceled, old_canceled, due)| Fixture {
                store,
                ai_on,
                ai_off,
                open,
                in_progress,
                canceled,
                old_canceled,
                due,
            })
            .unwrap()
    }

    async fn assert_seeded(f: &Fixture, redis: &RedisBackend) {
        let flags = RedisFlags::new(redis.clone());
        assert!(flags.ai_enabled(&f.ai_on).await.unwrap());
        assert!(!flags.ai_enabled(&f.ai_off).await.unwrap());
        assert_eq!(flags.batch_state(&f.open).await.unwrap(), Some(BatchStatus::Open));
        assert!(matches!(flags.batch_accepts_work(&f.open).await, Err(FlagError::Unknown(_))));
        assert!(flags.batch_accepts_work(&f.in_progress).await.unwrap());
        assert_eq!(flags.batch_state(&f.canceled).await.unwrap(), Some(BatchStatus::Canceled));
        assert!(!flags.batch_accepts_work(&f.canceled).await.unwrap());
        assert!(
            matches!(flags.batch_accepts_work(&f.old_canceled).await, Err(FlagError::Unknown(_))),
            "too old to be written"
        );
        let deadlines = RedisDeadlines::new(redis.clone());
        assert_eq!(deadlines.count().await.unwrap(), f.due.len() as u64);
        for (batch, due_ms) in &f.due {
            assert_eq!(deadlines.due_at(batch).await.unwrap().map(|t| t.timestamp_millis()), Some(*due_ms));
        }
    }

    #[tokio::test]
    async fn reseed_restores_deadlines_and_flags_after_a_flush() {
        let t = TestRedis::new().await;
        let f = fixture().await;
        assert_eq!(
            f.due.iter().map(|(b, _)| b.clone()).collect::<HashSet<_>>(),
            HashSet::from([f.open.clone(), f.in_progress.clone()]),
            "SQLite keeps deadlines of open and in-progress batches only"
        );
        // A leftover member of a batch SQLite closed is removed.
        let deadlines = RedisDeadlines::new(t.backend.clone());
        deadlines.schedule(&f.canceled, Utc::now()).await.unwrap();

        let first = reseed(&f.store, &t.backend).await.unwrap();
        assert_eq!(
            first,
            ReseedReport {
                deadlines: 2,
                stale_deadlines_removed: 1,
                active_batches: 2,
                terminal_batches: 1,
                companies: 2,
                skipped_rows: 0,
            }
        );
        assert_seeded(&f, &t.backend).await;

        // Idempotent.
        let again = reseed(&f.store, &t.backend).await.unwrap();
        assert_eq!(
            again,
            ReseedReport {
                stale_deadlines_removed: 0,
                ..first.clone()
            }
        );
        assert_seeded(&f, &t.backend).await;

        // A popped deadline (reaper crashed before publishing) comes back.
        let popped = deadlines.pop_due(Utc::now() + chrono::Duration::days(3), 10).await.unwrap();
        assert_eq!(popped.len(), 2);
        reseed(&f.store, &t.backend).await.unwrap();
        assert_eq!(deadlines.count().await.unwrap(), 2);

        // Redis loses everything under the prefix: everything comes back.
        assert!(t.backend.clear_prefix().await.unwrap() > 0);
        let flags = RedisFlags::new(t.backend.clone());
        assert!(matches!(flags.batch_accepts_work(&f.in_progress).await, Err(FlagError::Unknown(_))));
        assert!(matches!(flags.ai_enabled(&f.ai_on).await, Err(FlagError::Unknown(_))));
        assert_eq!(deadlines.count().await.unwrap(), 0);
        assert_eq!(
            reseed(&f.store, &t.backend).await.unwrap(),
            ReseedReport {
                stale_deadlines_removed: 0,
                ..first
            }
        );
        assert_seeded(&f, &t.backend).await;
    }

    #[tokio::test]
    async fn watcher_reseeds_at_start_and_when_redis_loses_its_data() {
        let t = TestRedis::new().await;
        let f = fixture().await;
        let shutdown = CancellationToken::new();
        // A long period: only the start and the loss detection can explain the re-seeds below.
        let watcher = tokio::spawn(watch_and_reseed(
            f.store.handle(),
            t.backend.clone(),
            Duration::from_secs(3600),
            shutdown.clone(),
        ));
        let flags = RedisFlags::new(t.backend.clone());
        wait_until(|| async { flags.batch_accepts_work(&f.in_progress).await.is_ok() }).await;
        assert_seeded(&f, &t.backend).await;

        t.backend.clear_prefix().await.unwrap();
        wait_until(|| async { flags.batch_accepts_work(&f.in_progress).await.is_ok() }).await;
        assert_seeded(&f, &t.backend).await;

        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), watcher)
            .await
            .expect("watcher stops on shutdown")
            .unwrap();
    }

    async fn wait_until<F, Fut>(mut check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !check().await {
            assert!(Instant::now() < deadline, "condition not met within 10 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[test]
    fn reconnect_and_loss_trigger_a_reseed() {
        assert_eq!(reason(Probe::Failed, false), None);
        assert_eq!(reason(Probe::Failed, true), None);
        assert_eq!(reason(Probe::Seeded, false), None);
        assert!(
            reason(Probe::Seeded, true).is_some(),
            "a failed command followed by a successful one"
        );
        assert!(reason(Probe::NotSeeded, false).is_some());
        assert!(reason(Probe::NotSeeded, true).is_some());
    }
}
