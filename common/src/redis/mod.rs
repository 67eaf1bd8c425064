//! The Redis backend of distributed mode: batch deadlines in a sorted set, the reaper's lease and the
//! live flags workers check before each job. Redis keeps nothing on disk here; SQLite stays the truth
//! and [`reseed`] rebuilds everything from it, so a flushed or restarted Redis loses nothing.
//!
//! Every key lives under [`RedisConfig::prefix`], so two deployments (or two test runs) can share one
//! server. Inside this module the crate is always written `::redis`, since this module is also
//! named `redis`.

pub mod deadlines;
pub mod flags;
pub mod lease;
pub mod presence;
pub mod reseed;
#[cfg(test)]
pub(crate) mod test_support;

pub use deadlines::RedisDeadlines;
pub use flags::{FlagError, RedisFlags};
pub use lease::Lease;
pub use reseed::{reseed, watch_and_reseed, ReseedError, ReseedReport};

use deadpool_redis::{Manager, Pool, PoolError, Runtime};
use domain::ids::{BatchId, CompanyId};
use std::time::Duration;

/// Where Redis is and which key prefix this deployment owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisConfig {
    /// `redis://[user:password@]host:port[/db]`.
    pub url: String,
    /// Prepended to every key (e.g. `sceau:`), so deployments and test runs never collide.
    pub prefix: String,
}

impl RedisConfig {
    pub const DEFAULT_PREFIX: &'static str = "sceau:";

    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefix: Self::DEFAULT_PREFIX.to_owned(),
        }
    }
}

/// What a Redis operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Bad URL or prefix: fix the configuration, retrying will not help.
    #[error("invalid Redis configuration: {0}")]
    Config(String),
    /// No connection could be had (server down, pool timeout): retry later.
    #[error("Redis is unreachable: {0}")]
    Unavailable(String),
    /// The server answered with an error, or the connection broke mid-command.
    #[error("Redis command failed: {0}")]
    Command(#[from] ::redis::RedisError),
    /// A value in Redis is not what this code writes there.
    #[error("unexpected value in Redis: {0}")]
    Corrupt(String),
}

impl BackendError {
    /// True when the failure is about reaching Redis (worth a retry), not about the data.
    pub fn is_unavailable(&self) -> bool {
        match self {
            BackendError::Unavailable(_) => true,
            BackendError::Command(e) => e.is_io_error() || e.is_connection_dropped() || e.is_timeout() || e.is_connection_refusal(),
            BackendError::Config(_) | BackendError::Corrupt(_) => false,
        }
    }
}

impl From<PoolError> for BackendError {
    fn from(e: PoolError) -> Self {
        match e {
            PoolError::Backend(e) => BackendError::Unavailable(e.to_string()),
            other => BackendError::Unavailable(other.to_string()),
        }
    }
}

/// Bounds that keep a dead server from hanging a caller: a worker must notice quickly that Redis is
/// gone and pause intake rather than wait.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Generous for a pipeline of a few thousand commands.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);
const POOL_WAIT_TIMEOUT: Duration = Duration::from_secs(5);
const POOL_MAX_SIZE: usize = 16;

/// A pool of connections and the key prefix; cheap to clone.
#[derive(Clone)]
pub struct RedisBackend {
    pool: Pool,
    prefix: String,
}

impl std::fmt::Debug for RedisBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBackend").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl RedisBackend {
    /// Builds the pool. No connection is opened yet (call [`RedisBackend::ping`] to check the
    /// server); only a malformed URL or prefix fails here.
    pub fn new(config: &RedisConfig) -> Result<Self, BackendError> {
        if config.prefix.is_empty() || config.prefix.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(BackendError::Config(format!(
                "the key prefix {:?} must be non-empty, without spaces (e.g. \"sceau:\")",
                config.prefix
            )));
        }
        let connection = ::redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT));
        let manager = Manager::new_with_config(config.url.as_str(), connection)
            .map_err(|e| BackendError::Config(format!("{}: {e}", redacted(&config.url))))?;
        let pool = Pool::builder(manager)
            .max_size(POOL_MAX_SIZE)
            .wait_timeout(Some(POOL_WAIT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT + Duration::from_secs(1)))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| BackendError::Config(e.to_string()))?;
        Ok(Self {
            pool,
            prefix: config.prefix.clone(),
        })
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// A pooled connection (it implements `::redis::aio::ConnectionLike`).
    pub async fn conn(&self) -> Result<deadpool_redis::Connection, BackendError> {
        Ok(self.pool.get().await?)
    }

    /// Round trip to the server.
    pub async fn ping(&self) -> Result<(), BackendError> {
        let mut conn = self.conn().await?;
        let _: String = ::redis::cmd("PING").query_async(&mut conn).await?;
        Ok(())
    }

    /// `<prefix><suffix>`.
    pub fn key(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    /// The sorted set of batch deadlines (member = batch id, score = due time in ms).
    pub fn deadlines_key(&self) -> String {
        self.key("deadlines")
    }

    /// `in_progress`, `open` or a terminal status; absent = not known yet.
    pub fn batch_state_key(&self, batch: &BatchId) -> String {
        self.key(&format!("batch:{batch}:state"))
    }

    /// `on` / `off`; absent = not known yet.
    pub fn company_ai_key(&self, company: &CompanyId) -> String {
        self.key(&format!("company:{company}:ai"))
    }

    /// Present while the workers are drained.
    pub fn drain_key(&self) -> String {
        self.key("drain")
    }

    /// A named lease (e.g. `reaper`).
    pub fn lease_key(&self, name: &str) -> String {
        self.key(&format!("lease:{name}"))
    }

    /// Written at the end of each re-seed (its time in ms): its absence means Redis lost its data.
    pub fn seeded_key(&self) -> String {
        self.key("seeded")
    }

    /// Deletes every key under the prefix (SCAN + UNLINK), never anything else; returns how many.
    /// For tests and operators: the next re-seed rebuilds what SQLite knows.
    pub async fn clear_prefix(&self) -> Result<u64, BackendError> {
        let pattern = format!("{}*", glob_escape(&self.prefix));
        let mut conn = self.conn().await?;
        let mut cursor: u64 = 0;
        let mut deleted = 0u64;
        loop {
            let (next, keys): (u64, Vec<String>) = ::redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await?;
            if !keys.is_empty() {
                let n: u64 = ::redis::cmd("UNLINK").arg(&keys).query_async(&mut conn).await?;
                deleted += n;
            }
            if next == 0 {
                return Ok(deleted);
            }
            cursor = next;
        }
    }
}

/// Escapes the glob characters of SCAN's MATCH so a prefix matches only itself.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The URL without its password, for messages.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => format!("{}://***@{}", &url[..scheme], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_are_typed() {
        let bad_url = RedisBackend::new(&RedisConfig::new("http://nowhere"));
        assert!(matches!(bad_url, Err(BackendError::Config(_))), "{bad_url:?}");
        let mut config = RedisConfig::new("redis://127.0.0.1:6379");
        config.prefix = String::new();
        assert!(matches!(RedisBackend::new(&config), Err(BackendError::Config(_))));
    }

    #[test]
    fn glob_and_redaction() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
        assert_eq!(redacted("redis://u:secret@host:6379/2"), "redis://***@host:6379/2");
        assert_eq!(redacted("redis://host:6379"), "redis://host:6379");
    }

    #[tokio::test]
    async fn unreachable_server_is_reported_as_unavailable() {
        // Port 1 on loopback: nothing listens there.
        let backend = RedisBackend::new(&RedisConfig::new("redis://127.0.0.1:1")).unwrap();
        let err = backend.ping().await.unwrap_err();
        assert!(err.is_unavailable(), "{err:?}");
    }

    #[tokio::test]
    async fn clear_prefix_deletes_only_its_own_keys() {
        let t = test_support::TestRedis::new().await;
        let other = test_support::TestRedis::new().await;
        let mut conn = t.backend.conn().await.unwrap();
        for i in 0..30 {
            let _: () = ::redis::cmd("SET")
                .arg(t.backend.key(&format!("k{i}")))
                .arg(1)
                .query_async(&mut conn)
                .await
                .unwrap();
        }
        let _: () = ::redis::cmd("SET")
            .arg(other.backend.key("kept"))
            .arg(1)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(t.backend.clear_prefix().await.unwrap(), 30);
        let kept: bool = ::redis::cmd("EXISTS")
            .arg(other.backend.key("kept"))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(kept);
    }
}
