//! The worker role: the analysis job pool and the deadline reaper. Stateless: it reads encrypted
//! files from the blob store and talks to the queue; it never writes the database.

use crate::backends::Backends;
use common::config::Config;
use common::redis::presence::{self, WorkerPresence};
use common::redis::RedisBackend;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub fn start(config: &Config, backends: &Backends, concurrency: usize, tasks: &mut JoinSet<()>, shutdown: &CancellationToken) {
    let pool = worker::jobs::Worker {
        queue: backends.queue.clone(),
        blobs: backends.blobs.clone(),
        engine: std::sync::Arc::new(worker::analysis::ProvisionalEngine),
        flags: backends.flags.clone(),
        in_flight: Default::default(),
        paused: Default::default(),
    };
    if let Some(redis) = &backends.redis {
        tasks.spawn(heartbeat(redis.clone(), pool.clone(), concurrency, shutdown.clone()));
    }
    tasks.spawn(pool.run(concurrency, shutdown.clone()));
    tasks.spawn(worker::reaper::run(
        backends.deadlines.clone(),
        backends.queue.clone(),
        config.sweep_interval,
        shutdown.clone(),
    ));
}

/// Announces this worker (concurrency, jobs in hand, drained or not) every 2 s for `sceau ops`.
async fn heartbeat(redis: RedisBackend, pool: worker::jobs::Worker, concurrency: usize, shutdown: CancellationToken) {
    let id = common::redis::lease::Lease::unique_holder_id("worker");
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
    loop {
        let draining = pool.paused.load(std::sync::atomic::Ordering::Relaxed);
        let presence = WorkerPresence {
            id: id.clone(),
            host: host.clone(),
            pid: std::process::id(),
            concurrency,
            in_flight: pool.in_flight.load(std::sync::atomic::Ordering::Relaxed),
            draining,
            seen_at: common::time::format(chrono::Utc::now()),
        };
        if let Err(e) = presence::announce(&redis, &presence).await {
            tracing::warn!(error = %e, "cannot announce the worker");
        }
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
    }
    let _ = presence::withdraw(&redis, &id).await;
}
