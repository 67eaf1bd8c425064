//! Live flags in Redis that workers check before each job: is the batch still in progress, may the
//! company's documents use AI, are the workers drained. The gateway writes them on each change and
//! [`super::reseed`] rewrites them from SQLite, so they are right again seconds after Redis loses them.

use super::{BackendError, RedisBackend};
use domain::ids::{BatchId, CompanyId};
use domain::vocabulary::BatchStatus;
use std::time::Duration;

/// Batch states expire on their own: the re-seed refreshes those of recent batches (see
/// [`super::reseed`]), older ones have no job left that could ask.
pub const BATCH_STATE_TTL: Duration = Duration::from_secs(48 * 3600);

/// Why a flag could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// The key is absent. Absent does NOT mean "no": Redis keeps nothing on disk, so after a flush or
    /// a restart every key is absent until the gateway re-seeds it from SQLite (a few seconds).
    /// Reading absent as "batch closed" would drop the jobs of a live batch, and as "AI off" would
    /// analyse documents wrongly; so the worker must put the job back (nack, retry later) and wait
    /// for the re-seed, never decide.
    #[error("{0} is not known to Redis yet; waiting for the re-seed from SQLite")]
    Unknown(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// The flags of one deployment; cheap to clone.
#[derive(Debug, Clone)]
pub struct RedisFlags {
    backend: RedisBackend,
}

impl RedisFlags {
    pub fn new(backend: RedisBackend) -> Self {
        Self { backend }
    }

    /// True while the batch is `in_progress`, false once it is ended, canceled or expired (its
    /// pending jobs must not be analysed). [`FlagError::Unknown`] when Redis does not know the
    /// batch, or still says `open`: a job exists only after the submit, so `open` is a state the
    /// re-seed has not refreshed yet, and dropping the job on it would cancel a live document.
    pub async fn batch_accepts_work(&self, batch: &BatchId) -> Result<bool, FlagError> {
        match self.batch_state(batch).await? {
            Some(BatchStatus::InProgress) => Ok(true),
            Some(BatchStatus::Open) | None => Err(FlagError::Unknown(format!("the state of batch {batch}"))),
            Some(_) => Ok(false),
        }
    }

    /// The batch's state as last written, `None` when absent.
    pub async fn batch_state(&self, batch: &BatchId) -> Result<Option<BatchStatus>, BackendError> {
        let key = self.backend.batch_state_key(batch);
        let mut conn = self.backend.conn().await?;
        let value: Option<String> = ::redis::cmd("GET").arg(&key).query_async(&mut conn).await?;
        value
            .map(|v| v.parse().map_err(|_| BackendError::Corrupt(format!("{key} holds {v:?}"))))
            .transpose()
    }

    /// Records a batch's new state (the gateway calls it on open, submit, cancel, end, expiry).
    pub async fn set_batch_state(&self, batch: &BatchId, status: BatchStatus) -> Result<(), BackendError> {
        let mut conn = self.backend.conn().await?;
        let _: () = ::redis::cmd("SET")
            .arg(self.backend.batch_state_key(batch))
            .arg(status.as_str())
            .arg("PX")
            .arg(BATCH_STATE_TTL.as_millis() as u64)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// The company's AI choice; [`FlagError::Unknown`] when Redis does not know the company.
    pub async fn ai_enabled(&self, company: &CompanyId) -> Result<bool, FlagError> {
        let key = self.backend.company_ai_key(company);
        let mut conn = self.backend.conn().await.map_err(FlagError::Backend)?;
        let value: Option<String> = ::redis::cmd("GET")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .map_err(BackendError::from)?;
        match value.as_deref() {
            Some("on") => Ok(true),
            Some("off") => Ok(false),
            Some(other) => Err(BackendError::Corrupt(format!("{key} holds {other:?}")).into()),
            None => Err(FlagError::Unknown(format!("the AI setting of company {company}"))),
        }
    }

    /// Records the company's AI choice (the gateway calls it when the setting changes).
    pub async fn set_ai_enabled(&self, company: &CompanyId, enabled: bool) -> Result<(), BackendError> {
        let mut conn = self.backend.conn().await?;
        let _: () = ::redis::cmd("SET")
            .arg(self.backend.company_ai_key(company))
            .arg(ai_value(enabled))
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// True while `ops drain` is in force. Unlike the other flags this one has no copy in SQLite, so
    /// a flushed or restarted Redis ends a drain (the operator drains again).
    pub async fn draining(&self) -> Result<bool, BackendError> {
        let mut conn = self.backend.conn().await?;
        Ok(::redis::cmd("EXISTS").arg(self.backend.drain_key()).query_async(&mut conn).await?)
    }

    pub async fn set_draining(&self, draining: bool) -> Result<(), BackendError> {
        let mut conn = self.backend.conn().await?;
        let key = self.backend.drain_key();
        if draining {
            let _: () = ::redis::cmd("SET")
                .arg(key)
                .arg(domain::time::format(chrono::Utc::now()))
                .query_async(&mut conn)
                .await?;
        } else {
            let _: i64 = ::redis::cmd("DEL").arg(key).query_async(&mut conn).await?;
        }
        Ok(())
    }
}

pub(crate) fn ai_value(enabled: bool) -> &'static str {
    if enabled {
        "on"
    } else {
        "off"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redis::test_support::TestRedis;
    use chrono::Utc;

    #[tokio::test]
    async fn batch_state_drives_acceptance_and_absent_is_unknown() {
        let t = TestRedis::new().await;
        let flags = RedisFlags::new(t.backend.clone());
        let batch = BatchId::generate(Utc::now());
        let err = flags.batch_accepts_work(&batch).await.unwrap_err();
        assert!(matches!(err, FlagError::Unknown(_)), "{err:?}");
        flags.set_batch_state(&batch, BatchStatus::Open).await.unwrap();
        assert!(
            matches!(flags.batch_accepts_work(&batch).await, Err(FlagError::Unknown(_))),
            "open is a stale state for a job"
        );
        for (status, accepts) in [
            (BatchStatus::InProgress, true),
            (BatchStatus::Canceled, false),
            (BatchStatus::Expired, false),
            (BatchStatus::Ended, false),
        ] {
            flags.set_batch_state(&batch, status).await.unwrap();
            assert_eq!(flags.batch_accepts_work(&batch).await.unwrap(), accepts, "{status}");
            assert_eq!(flags.batch_state(&batch).await.unwrap(), Some(status));
        }
        let mut conn = t.backend.conn().await.unwrap();
        let ttl: i64 = ::redis::cmd("PTTL")
            .arg(t.backend.batch_state_key(&batch))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(ttl > 0 && ttl <= BATCH_STATE_TTL.as_millis() as i64, "ttl {ttl}");
        let _: () = ::redis::cmd("SET")
            .arg(t.backend.batch_state_key(&batch))
            .arg("bogus")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(matches!(
            flags.batch_accepts_work(&batch).await,
            Err(FlagError::Backend(BackendError::Corrupt(_)))
        ));
    }

    #[tokio::test]
    async fn ai_flag_and_drain() {
        let t = TestRedis::new().await;
        let flags = RedisFlags::new(t.backend.clone());
        let company = CompanyId::generate(Utc::now());
        assert!(matches!(flags.ai_enabled(&company).await, Err(FlagError::Unknown(_))));
        flags.set_ai_enabled(&company, false).await.unwrap();
        assert!(!flags.ai_enabled(&company).await.unwrap());
        flags.set_ai_enabled(&company, true).await.unwrap();
        assert!(flags.ai_enabled(&company).await.unwrap());

        assert!(!flags.draining().await.unwrap());
        flags.set_draining(true).await.unwrap();
        flags.set_draining(true).await.unwrap();
        assert!(RedisFlags::new(t.another_process()).draining().await.unwrap());
        flags.set_draining(false).await.unwrap();
        assert!(!flags.draining().await.unwrap());
    }
}
