//! What the roles run on. Embedded mode: SQLite for everything (store, queue, deadlines, flags).
//! Distributed mode: RabbitMQ for the queue and Redis for deadlines and live flags, SQLite only in
//! the gateway (and the notifier, for signing secrets). The roles never know which is underneath.

use common::blobs::BlobStore;
use common::config::Config;
use common::crypto::envelope::MasterKeys;
use common::deadlines::{Deadlines, StoreDeadlines};
use common::queue::sqlite::SqliteQueue;
use common::queue::Queue;
use common::store::Store;
use std::sync::Arc;
use worker::flags::{LiveFlags, StoreFlags};

/// A queue message handed out this often without an ack is a poison message.
pub const MAX_DELIVERIES: u32 = 5;

#[derive(Clone)]
pub struct Backends {
    /// The system of record; `None` in a distributed worker.
    pub store: Option<Store>,
    pub keys: Arc<MasterKeys>,
    pub blobs: BlobStore,
    pub queue: Arc<dyn Queue>,
    pub deadlines: Arc<dyn Deadlines>,
    pub flags: Arc<dyn LiveFlags>,
}

impl Backends {
    /// Everything on SQLite, in the data dir (created with its master key when missing).
    pub async fn embedded(config: &Config) -> anyhow::Result<Backends> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", config.data_dir.display()))?;
        let store = Store::open(&config.database_path())?;
        let keys = Arc::new(MasterKeys::load_or_create(&config.master_key_path())?);
        let blobs = BlobStore::new(config.blob_dir(), keys.clone())?;
        let queue = SqliteQueue::new(store.clone(), MAX_DELIVERIES);
        // Nothing of this process is in flight yet: whatever a previous run held is handed out again.
        queue.release_leases().await?;
        Ok(Backends {
            store: Some(store.clone()),
            keys,
            blobs,
            queue: Arc::new(queue),
            deadlines: Arc::new(StoreDeadlines(store.clone())),
            flags: Arc::new(StoreFlags(store)),
        })
    }

    /// The store, for roles that need it.
    pub fn store(&self) -> anyhow::Result<&Store> {
        self.store.as_ref().ok_or_else(|| anyhow::anyhow!("this role has no database"))
    }
}
