//! Batch deadlines. SQLite holds the truth (a column of each batch and the `deadlines` table,
//! written in the transactions that open and submit batches); this trait is how the reaper reads
//! what fell due. Embedded mode reads SQLite; distributed mode reads a Redis sorted set re-seeded
//! from SQLite.

use crate::store::{RepoError, Store};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use domain::ids::BatchId;

#[async_trait]
pub trait Deadlines: Send + Sync + 'static {
    /// Batches whose deadline has passed at `now`.
    async fn due(&self, now: DateTime<Utc>) -> Result<Vec<BatchId>, RepoError>;
}

/// Deadlines read from the SQLite store (embedded mode).
pub struct StoreDeadlines(pub Store);

#[async_trait]
impl Deadlines for StoreDeadlines {
    async fn due(&self, now: DateTime<Utc>) -> Result<Vec<BatchId>, RepoError> {
        self.0.read(move |c| crate::store::batches::due_deadlines(c, now, 100)).await
    }
}
