//! Live flags a worker checks before each job: facts that may have changed since the job was
//! queued (batch canceled, company AI use). Embedded mode reads them from SQLite; distributed
//! mode from Redis.

use async_trait::async_trait;
use common::store::{RepoError, Store};
use domain::ids::{BatchId, CompanyId};
use domain::vocabulary::BatchStatus;

#[async_trait]
pub trait LiveFlags: Send + Sync + 'static {
    /// False once the batch is canceled or expired: its pending jobs must not be analysed.
    async fn batch_accepts_work(&self, batch: &BatchId) -> Result<bool, FlagError>;
    /// The company's AI choice, re-read at processing time.
    async fn ai_enabled(&self, company: &CompanyId) -> Result<bool, FlagError>;
    /// True while an operator has drained the worker pool: take no new job.
    async fn draining(&self) -> Result<bool, FlagError>;
}

#[derive(Debug, thiserror::Error)]
#[error("live flags unavailable: {0}")]
pub struct FlagError(pub String);

impl From<RepoError> for FlagError {
    fn from(e: RepoError) -> Self {
        FlagError(e.to_string())
    }
}

/// Flags read from the SQLite store (embedded mode).
pub struct StoreFlags(pub Store);

#[async_trait]
impl LiveFlags for StoreFlags {
    async fn batch_accepts_work(&self, batch: &BatchId) -> Result<bool, FlagError> {
        let id = batch.clone();
        let status = self.0.read(move |c| common::store::batches::status(c, &id)).await?;
        Ok(status == Some(BatchStatus::InProgress))
    }

    async fn ai_enabled(&self, company: &CompanyId) -> Result<bool, FlagError> {
        let company = company.clone();
        let c = self.0.read(move |c| common::store::companies::get(c, &company)).await?;
        Ok(c.ai_enabled)
    }

    /// One process in embedded mode: draining is stopping it (SIGTERM).
    async fn draining(&self) -> Result<bool, FlagError> {
        Ok(false)
    }
}

/// Flags read from Redis (distributed mode). An absent flag is "unknown" until the gateway's
/// re-seed writes it: the job waits (it is retried) rather than being wrongly dropped.
#[async_trait]
impl LiveFlags for common::redis::flags::RedisFlags {
    async fn batch_accepts_work(&self, batch: &BatchId) -> Result<bool, FlagError> {
        common::redis::flags::RedisFlags::batch_accepts_work(self, batch)
            .await
            .map_err(|e| FlagError(e.to_string()))
    }

    async fn ai_enabled(&self, company: &CompanyId) -> Result<bool, FlagError> {
        common::redis::flags::RedisFlags::ai_enabled(self, company)
            .await
            .map_err(|e| FlagError(e.to_string()))
    }

    async fn draining(&self) -> Result<bool, FlagError> {
        common::redis::flags::RedisFlags::draining(self)
            .await
            .map_err(|e| FlagError(e.to_string()))
    }
}
