//! Batch deadlines in a Redis sorted set (member = batch id, score = due time in ms), popped
//! atomically by the reaper. SQLite's `deadlines` table stays the truth; [`super::reseed`] rebuilds
//! the set from it.

use super::{BackendError, RedisBackend};
use crate::deadlines::Deadlines;
use crate::store::{RepoError, StoreError};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ids::BatchId;
use std::sync::LazyLock;

/// How many batches one `due()` call takes.
const DUE_BATCH: usize = 100;
/// Upper bound of one pop: Lua's `unpack` has a stack limit of a few thousand values.
pub const MAX_POP: usize = 1000;

/// Takes up to ARGV[2] members with score <= ARGV[1] and removes them, in one step: Redis runs a
/// script alone, so two reapers can never both receive the same batch.
static POP_DUE: LazyLock<::redis::Script> = LazyLock::new(|| {
    ::redis::Script::new(
        r"
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #ids > 0 then
  redis.call('ZREM', KEYS[1], unpack(ids))
end
return ids
",
    )
});

/// The deadline set of one deployment; cheap to clone.
#[derive(Debug, Clone)]
pub struct RedisDeadlines {
    backend: RedisBackend,
}

impl RedisDeadlines {
    pub fn new(backend: RedisBackend) -> Self {
        Self { backend }
    }

    /// Sets (or moves) the batch's deadline.
    pub async fn schedule(&self, batch: &BatchId, due: DateTime<Utc>) -> Result<(), BackendError> {
        let mut conn = self.backend.conn().await?;
        let _: i64 = ::redis::cmd("ZADD")
            .arg(self.backend.deadlines_key())
            .arg(due.timestamp_millis())
            .arg(batch.as_str())
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// Forgets the batch's deadline; true if there was one.
    pub async fn remove(&self, batch: &BatchId) -> Result<bool, BackendError> {
        let mut conn = self.backend.conn().await?;
        let n: i64 = ::redis::cmd("ZREM")
            .arg(self.backend.deadlines_key())
            .arg(batch.as_str())
            .query_async(&mut conn)
            .await?;
        Ok(n > 0)
    }

    /// Removes and returns up to `limit` (at most [`MAX_POP`]) batches due at `now`, earliest first,
    /// atomically (see [`POP_DUE`]). A member that is not a batch id is dropped with a warning.
    pub async fn pop_due(&self, now: DateTime<Utc>, limit: usize) -> Result<Vec<BatchId>, BackendError> {
        let limit = limit.min(MAX_POP);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.backend.conn().await?;
        let members: Vec<String> = POP_DUE
            .key(self.backend.deadlines_key())
            .arg(now.timestamp_millis())
            .arg(limit)
            .invoke_async(&mut conn)
            .await?;
        Ok(members
            .into_iter()
            .filter_map(|m| match BatchId::parse(&m) {
                Ok(id) => Some(id),
                Err(_) => {
                    tracing::warn!(member = %m.chars().take(64).collect::<String>(), "dropped a deadline that is not a batch id");
                    None
                }
            })
            .collect())
    }

    /// The batch's deadline, if scheduled.
    pub async fn due_at(&self, batch: &BatchId) -> Result<Option<DateTime<Utc>>, BackendError> {
        let mut conn = self.backend.conn().await?;
        let score: Option<f64> = ::redis::cmd("ZSCORE")
            .arg(self.backend.deadlines_key())
            .arg(batch.as_str())
            .query_async(&mut conn)
            .await?;
        score.map(millis_to_time).transpose()
    }

    /// How many deadlines are scheduled.
    pub async fn count(&self) -> Result<u64, BackendError> {
        let mut conn = self.backend.conn().await?;
        Ok(::redis::cmd("ZCARD")
            .arg(self.backend.deadlines_key())
            .query_async(&mut conn)
            .await?)
    }

    /// The earliest scheduled deadline (for `ops status`).
    pub async fn oldest(&self) -> Result<Option<(String, DateTime<Utc>)>, BackendError> {
        let mut conn = self.backend.conn().await?;
        let first: Vec<(String, f64)> = ::redis::cmd("ZRANGE")
            .arg(self.backend.deadlines_key())
            .arg(0)
            .arg(0)
            .arg("WITHSCORES")
            .query_async(&mut conn)
            .await?;
        first.into_iter().next().map(|(m, s)| Ok((m, millis_to_time(s)?))).transpose()
    }
}

fn millis_to_time(score: f64) -> Result<DateTime<Utc>, BackendError> {
    DateTime::from_timestamp_millis(score as i64).ok_or_else(|| BackendError::Corrupt(format!("deadline score {score} is not a time")))
}

/// `RepoError` has no variant for a non-SQLite backend: the failure travels as a task error, whose
/// message names Redis.
fn to_repo(e: BackendError) -> RepoError {
    RepoError::Store(StoreError::Task(format!("redis deadlines: {e}")))
}

#[async_trait]
impl Deadlines for RedisDeadlines {
    /// Pops what fell due instead of only reading it, so that with several reapers (or a lease that
    /// changes hands) a batch is announced once. A popped batch whose expiry message is then lost
    /// (the reaper crashes or cannot publish) is not lost for good: SQLite keeps its `deadlines` row
    /// until the recorder actually closes the batch, and the gateway's periodic re-seed
    /// ([`super::reseed`]) puts every such row back into the set, so the reaper pops it again a few
    /// seconds later. Announcing a batch twice is harmless: the recorder's `expire_if_due` does
    /// nothing for a batch already closed.
    async fn due(&self, now: DateTime<Utc>) -> Result<Vec<BatchId>, RepoError> {
        self.pop_due(now, DUE_BATCH).await.map_err(to_repo)
    }
}

/// The deadlines as the reaper sees them: only the holder of the reaper lease pops, so one reaper
/// works at a time across all workers; another takes over when the holder's lease lapses.
pub struct LeasedDeadlines {
    deadlines: RedisDeadlines,
    backend: RedisBackend,
    holder: String,
    ttl: std::time::Duration,
    lease: tokio::sync::Mutex<Option<super::lease::Lease>>,
}

impl LeasedDeadlines {
    pub fn new(backend: RedisBackend, ttl: std::time::Duration) -> Self {
        Self {
            deadlines: RedisDeadlines::new(backend.clone()),
            holder: super::lease::Lease::unique_holder_id("reaper"),
            backend,
            ttl,
            lease: tokio::sync::Mutex::new(None),
        }
    }

    /// Keeps (or takes) the lease; false when another process holds it.
    async fn hold(&self) -> Result<bool, BackendError> {
        let mut lease = self.lease.lock().await;
        if let Some(held) = lease.as_ref() {
            if held.renew().await? {
                return Ok(true);
            }
            *lease = None;
        }
        *lease = super::lease::Lease::try_acquire(&self.backend, "reaper", &self.holder, self.ttl).await?;
        Ok(lease.is_some())
    }
}

#[async_trait::async_trait]
impl crate::deadlines::Deadlines for LeasedDeadlines {
    async fn due(&self, now: DateTime<Utc>) -> Result<Vec<BatchId>, crate::store::RepoError> {
        let held = self
            .hold()
            .await
            .map_err(|e| crate::store::RepoError::Store(crate::store::StoreError::Task(format!("reaper lease: {e}"))))?;
        if !held {
            return Ok(Vec::new());
        }
        self.deadlines.due(now).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis::test_support::TestRedis;
    use chrono::Duration;
    use std::collections::HashSet;

    #[tokio::test]
    async fn pops_only_what_is_due_earliest_first() {
        let t = TestRedis::new().await;
        let d = RedisDeadlines::new(t.backend.clone());
        let now = Utc::now();
        let late = BatchId::generate(now);
        let early = BatchId::generate(now);
        let future = BatchId::generate(now);
        d.schedule(&late, now - Duration::seconds(1)).await.unwrap();
        d.schedule(&early, now - Duration::seconds(10)).await.unwrap();
        d.schedule(&future, now + Duration::hours(1)).await.unwrap();
        assert_eq!(d.count().await.unwrap(), 3);
        assert_eq!(d.oldest().await.unwrap().unwrap().0, early.to_string());

        assert_eq!(d.pop_due(now, 10).await.unwrap(), vec![early.clone(), late.clone()]);
        assert!(d.pop_due(now, 10).await.unwrap().is_empty(), "popped members are gone");
        assert_eq!(d.count().await.unwrap(), 1);
        let at = d.due_at(&future).await.unwrap().unwrap();
        assert_eq!(at.timestamp_millis(), (now + Duration::hours(1)).timestamp_millis());

        // Rescheduling moves it; the trait method pops too.
        d.schedule(&future, now - Duration::milliseconds(1)).await.unwrap();
        assert_eq!(Deadlines::due(&d, now).await.unwrap(), vec![future.clone()]);

        d.schedule(&late, now).await.unwrap();
        assert!(d.remove(&late).await.unwrap());
        assert!(!d.remove(&late).await.unwrap());
        assert_eq!(d.count().await.unwrap(), 0);
    }

    #[tokio::test]
    async fn pop_respects_the_limit() {
        let t = TestRedis::new().await;
        let d = RedisDeadlines::new(t.backend.clone());
        let now = Utc::now();
        for i in 0..5 {
            d.schedule(&BatchId::generate(now), now - Duration::seconds(i)).await.unwrap();
        }
        assert_eq!(d.pop_due(now, 2).await.unwrap().len(), 2);
        assert!(d.pop_due(now, 0).await.unwrap().is_empty());
        assert_eq!(d.pop_due(now, 10).await.unwrap().len(), 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_simultaneous_pops_split_the_set() {
        let t = TestRedis::new().await;
        let now = Utc::now();
        let d = RedisDeadlines::new(t.backend.clone());
        let mut all = HashSet::new();
        for _ in 0..100 {
            let id = BatchId::generate(now);
            d.schedule(&id, now - Duration::seconds(1)).await.unwrap();
            all.insert(id);
        }
        let (a, b) = (RedisDeadlines::new(t.another_process()), RedisDeadlines::new(t.another_process()));
        let (a, b) = tokio::join!(a.pop_due(now, 100), b.pop_due(now, 100));
        let (a, b) = (a.unwrap(), b.unwrap());
        let union: Vec<_> = a.iter().chain(&b).cloned().collect();
        assert_eq!(union.len(), 100, "{} + {} popped", a.len(), b.len());
        assert_eq!(union.into_iter().collect::<HashSet<_>>(), all);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_pops_never_return_the_same_batch() {
        let t = TestRedis::new().await;
        let now = Utc::now();
        let seeded = RedisDeadlines::new(t.backend.clone());
        let mut all = HashSet::new();
        for i in 0..100 {
            let id = BatchId::generate(now);
            seeded.schedule(&id, now - Duration::milliseconds(i)).await.unwrap();
            all.insert(id);
        }
        // Two "processes", each with its own pool, popping small slices as fast as they can.
        let reapers: Vec<_> = (0..2)
            .map(|_| {
                let d = RedisDeadlines::new(t.another_process());
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    loop {
                        let popped = d.pop_due(now, 3).await.unwrap();
                        if popped.is_empty() {
                            return got;
                        }
                        got.extend(popped);
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        let mut union = Vec::new();
        let mut per_reaper = Vec::new();
        for r in reapers {
            let got = r.await.unwrap();
            per_reaper.push(got.len());
            union.extend(got);
        }
        let distinct: HashSet<_> = union.iter().cloned().collect();
        assert_eq!(union.len(), 100, "no duplicates (per reaper: {per_reaper:?})");
        assert_eq!(distinct, all);
    }
}
