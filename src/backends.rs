//! What the roles run on. Embedded mode: SQLite for everything (store, queue, deadlines, flags).
//! Distributed mode: RabbitMQ for the queue and Redis for deadlines and live flags, SQLite only in
//! the gateway (and the notifier, for signing secrets). The roles never know which is underneath.

use common::blobs::BlobStore;
use common::config::Config;
use common::crypto::envelope::MasterKeys;
use common::deadlines::{Deadlines, StoreDeadlines};
use common::queue::amqp::{AmqpOptions, AmqpQueue};
use common::queue::sqlite::SqliteQueue;
use common::queue::Queue;
use common::redis::deadlines::LeasedDeadlines;
use common::redis::flags::RedisFlags;
use common::redis::{RedisBackend, RedisConfig};
use common::store::Store;
use std::sync::Arc;
use std::time::Duration;
use worker::flags::{LiveFlags, StoreFlags};

/// A queue message handed out this often without an ack is a poison message.
pub const MAX_DELIVERIES: u32 = 5;
/// How long the reaper's lease lasts without renewal (renewed at every sweep).
const REAPER_LEASE: Duration = Duration::from_secs(10);

/// Workers start before the gateway has created the master key on a fresh volume: wait for it.
async fn wait_for_master_key(path: &std::path::Path) -> anyhow::Result<MasterKeys> {
    for attempt in 0..120 {
        if path.exists() {
            return Ok(MasterKeys::open_existing(path)?);
        }
        if attempt % 10 == 0 {
            tracing::warn!(path = %path.display(), "waiting for the gateway to create the master key");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(anyhow::anyhow!(
        "no master key at {} after 60 s: start the gateway first",
        path.display()
    ))
}

/// A URL without its password, for error messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => format!("{}://***@{}", &url[..scheme], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

/// Which role a distributed process plays (what it must open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Gateway,
    Worker,
    Notifier,
    /// `sceau serve` on RabbitMQ and Redis: every role in one process.
    All,
}

#[derive(Clone)]
pub struct Backends {
    /// The system of record; `None` in a distributed worker.
    pub store: Option<Store>,
    pub keys: Arc<MasterKeys>,
    pub blobs: BlobStore,
    pub queue: Arc<dyn Queue>,
    pub deadlines: Arc<dyn Deadlines>,
    pub flags: Arc<dyn LiveFlags>,
    /// Distributed mode only: Redis, for re-seeding, presence and drain.
    pub redis: Option<RedisBackend>,
    /// Distributed mode only: the broker, for `ops` statistics.
    pub amqp: Option<AmqpQueue>,
    /// Embedded mode only: the queue, to give back at a stop what it claimed ahead.
    pub sqlite_queue: Option<SqliteQueue>,
}

impl Backends {
    /// Everything on SQLite, in the data dir (created with its master key when missing).
    pub async fn embedded(config: &Config) -> anyhow::Result<Backends> {
        common::private_fs::create_dir(&config.data_dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", config.data_dir.display()))?;
        let store = Store::open(&config.database_path())?;
        let keys = Arc::new(MasterKeys::load_or_create(&config.master_key_path())?);
        store.apply_keyed_migrations(keys.clone()).await?;
        let blobs = BlobStore::open(&config.blob_location(), keys.clone()).await?;
        let queue = SqliteQueue::new(store.clone(), MAX_DELIVERIES);
        // Nothing of this process is in flight yet: whatever a previous run held is handed out again.
        queue.release_leases().await?;
        Ok(Backends {
            store: Some(store.clone()),
            keys,
            blobs,
            queue: Arc::new(queue.clone()),
            deadlines: Arc::new(StoreDeadlines(store.clone())),
            flags: Arc::new(StoreFlags(store)),
            redis: None,
            amqp: None,
            sqlite_queue: Some(queue),
        })
    }

    /// Whether the configuration selects distributed mode (both URLs set).
    pub fn distributed_configured(config: &Config) -> anyhow::Result<bool> {
        match (&config.amqp_url, &config.redis_url) {
            (Some(_), Some(_)) => Ok(true),
            (None, None) => Ok(false),
            _ => Err(anyhow::anyhow!(
                "invalid configuration: distributed mode needs both SCEAU_AMQP_URL and SCEAU_REDIS_URL"
            )),
        }
    }

    /// RabbitMQ and Redis, plus what `role` needs of the data dir: the gateway owns the database
    /// and creates the master key; workers only read keys and blobs.
    pub async fn distributed(config: &Config, role: Role, prefetch: usize) -> anyhow::Result<Backends> {
        let (Some(amqp_url), Some(redis_url)) = (&config.amqp_url, &config.redis_url) else {
            return Err(anyhow::anyhow!(
                "invalid configuration: this role needs SCEAU_AMQP_URL and SCEAU_REDIS_URL"
            ));
        };
        let owns_data = matches!(role, Role::Gateway | Role::All);
        let keys = Arc::new(if owns_data {
            common::private_fs::create_dir(&config.data_dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", config.data_dir.display()))?;
            MasterKeys::load_or_create(&config.master_key_path())?
        } else {
            wait_for_master_key(&config.master_key_path()).await?
        });
        let blobs = BlobStore::open(&config.blob_location(), keys.clone()).await?;
        let store = match role {
            Role::Worker => None,
            _ => {
                let store = Store::open(&config.database_path())?;
                store.apply_keyed_migrations(keys.clone()).await?;
                Some(store)
            }
        };
        let options = AmqpOptions {
            prefetch: u16::try_from(prefetch.max(1)).unwrap_or(u16::MAX),
            // The notifier's delivery slots (not configurable), so that every one can be filled
            // while some hang.
            events_prefetch: Some(u16::try_from(notifier::NotifierConfig::default().concurrency.max(1)).unwrap_or(u16::MAX)),
            // The slots reserved for journeys take real-time jobs beside the others.
            realtime_prefetch: Some(u16::try_from(prefetch.max(1) + config.realtime_slots).unwrap_or(u16::MAX)),
            // As many as the recorder records side by side, and the one it records in order.
            results_prefetch: Some(u16::try_from(recorder::results::ATTEMPT_REPORTS_IN_FLIGHT + 1).unwrap_or(u16::MAX)),
            delivery_limit: MAX_DELIVERIES,
            ..AmqpOptions::default()
        };
        let amqp = AmqpQueue::connect(amqp_url, options)
            .await
            .map_err(|e| anyhow::anyhow!("RabbitMQ at {}: {e}", redact(amqp_url)))?;
        let redis = RedisBackend::new(&RedisConfig {
            url: redis_url.clone(),
            prefix: config.redis_prefix.clone(),
        })?;
        Ok(Backends {
            store,
            keys,
            blobs,
            queue: Arc::new(amqp.clone()),
            deadlines: Arc::new(LeasedDeadlines::new(redis.clone(), REAPER_LEASE)),
            flags: Arc::new(RedisFlags::new(redis.clone())),
            redis: Some(redis),
            amqp: Some(amqp),
            sqlite_queue: None,
        })
    }

    /// The store, for roles that need it.
    pub fn store(&self) -> anyhow::Result<&Store> {
        self.store.as_ref().ok_or_else(|| anyhow::anyhow!("this role has no database"))
    }
}
