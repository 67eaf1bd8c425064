//! Process presence: each process of distributed mode refreshes a short-lived key with its role,
//! the deliveries it holds unacked per queue and, for workers, concurrency, jobs in flight and
//! drain, so `sceau ops status` can list the live pool and what it holds.

use super::{BackendError, RedisBackend};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A key not refreshed within this long means the worker is gone.
pub const TTL: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Presence {
    pub id: String,
    /// `gateway`, `worker`, `notifier` or `serve`.
    pub role: String,
    pub host: String,
    pub pid: u32,
    pub concurrency: usize,
    pub in_flight: usize,
    pub draining: bool,
    /// Deliveries received and not yet acked, by queue name.
    pub held: std::collections::BTreeMap<String, usize>,
    pub seen_at: String,
}

fn key(backend: &RedisBackend, id: &str) -> String {
    backend.key(&format!("process:{id}"))
}

pub async fn announce(backend: &RedisBackend, presence: &Presence) -> Result<(), BackendError> {
    let mut conn = backend.conn().await?;
    let value = serde_json::to_string(presence).map_err(|e| BackendError::Corrupt(e.to_string()))?;
    let _: () = ::redis::cmd("SET")
        .arg(key(backend, &presence.id))
        .arg(value)
        .arg("PX")
        .arg(TTL.as_millis() as u64)
        .query_async(&mut conn)
        .await?;
    Ok(())
}

pub async fn withdraw(backend: &RedisBackend, id: &str) -> Result<(), BackendError> {
    let mut conn = backend.conn().await?;
    let _: () = ::redis::cmd("DEL").arg(key(backend, id)).query_async(&mut conn).await?;
    Ok(())
}

/// Every live process, by id.
pub async fn list(backend: &RedisBackend) -> Result<Vec<Presence>, BackendError> {
    let mut conn = backend.conn().await?;
    let pattern = format!("{}*", key(backend, ""));
    let mut keys: Vec<String> = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, batch): (u64, Vec<String>) = ::redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(500)
            .query_async(&mut conn)
            .await?;
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    let mut workers = Vec::new();
    for k in keys {
        let value: Option<String> = ::redis::cmd("GET").arg(&k).query_async(&mut conn).await?;
        if let Some(p) = value.and_then(|v| serde_json::from_str::<Presence>(&v).ok()) {
            workers.push(p);
        }
    }
    workers.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(workers)
}
