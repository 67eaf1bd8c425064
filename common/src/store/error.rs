//! What a store operation can refuse, as data: the gateway maps each case to an `API.md` code,
//! the CLI to one clear line.

use super::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("not found")]
    NotFound,
    #[error("{0}")]
    InvalidState(String),
    #[error("the batch holds no document")]
    BatchEmpty,
    #[error("three batches are already open; submit or cancel one before opening another")]
    TooManyOpenBatches,
    #[error("the batch already holds 200 documents; submit it and open another")]
    BatchFull,
    #[error("the company holds 400 documents not yet purged; close, cancel or wait for the purge of a batch before depositing more")]
    DocumentQuota,
    #[error("the company's pending file volume would exceed its limit; wait for batches to be processed before depositing more")]
    VolumeQuota,
    #[error("AI use is disabled for this company: administrative documents cannot be deposited")]
    IaDesactivee,
    #[error("{message}")]
    Invalid { field: &'static str, message: String },
    #[error("{0}")]
    Refused(String),
}

impl RepoError {
    /// See [`StoreError::committed`]: the write stands though it answered an error.
    pub fn committed(&self) -> bool {
        matches!(self, RepoError::Store(e) if e.committed())
    }
}

impl From<rusqlite::Error> for RepoError {
    fn from(e: rusqlite::Error) -> Self {
        RepoError::Store(StoreError::Sqlite(e))
    }
}

impl From<serde_json::Error> for RepoError {
    fn from(e: serde_json::Error) -> Self {
        RepoError::Store(StoreError::Corrupt(e.to_string()))
    }
}

/// Reads a timestamp stored as text by `domain::time::format`; a bad one means the database was altered.
pub fn stored_time(s: &str) -> Result<chrono::DateTime<chrono::Utc>, RepoError> {
    domain::time::parse(s).ok_or_else(|| RepoError::Store(StoreError::Corrupt(format!("unexpected stored timestamp {s:?}"))))
}

/// Reads a wire enum stored as text; a bad value means the database was altered.
pub fn stored<T: std::str::FromStr>(s: &str) -> Result<T, RepoError> {
    s.parse()
        .map_err(|_| RepoError::Store(StoreError::Corrupt(format!("unexpected stored value {s:?}"))))
}
