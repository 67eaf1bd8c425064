//! The worker role: the analysis job pool and the deadline reaper. Stateless: it reads encrypted
//! files from the blob store and talks to the queue; it never writes the database.

use crate::backends::Backends;
use common::config::Config;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use worker::analysis::{BuiltinEngine, EngineOptions};

/// Builds the analysis engine (trust list, register, OCR probe), then starts the pool and the reaper.
pub fn start(
    config: &Config,
    backends: &Backends,
    concurrency: usize,
    tasks: &mut JoinSet<()>,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    let engine = BuiltinEngine::build(EngineOptions::from_config(config))?;
    let pool = worker::jobs::Worker {
        queue: backends.queue.clone(),
        blobs: backends.blobs.clone(),
        engine: std::sync::Arc::new(engine),
        flags: backends.flags.clone(),
        in_flight: Default::default(),
        paused: Default::default(),
    };
    if let (Some(redis), Some(amqp)) = (&backends.redis, &backends.amqp) {
        let view = super::presence::PoolView {
            concurrency,
            pool: pool.clone(),
        };
        tasks.spawn(super::presence::heartbeat(
            redis.clone(),
            amqp.clone(),
            "worker",
            Some(view),
            shutdown.clone(),
        ));
    }
    tasks.spawn(pool.run(concurrency, shutdown.clone()));
    tasks.spawn(worker::reaper::run(
        backends.deadlines.clone(),
        backends.queue.clone(),
        config.sweep_interval,
        shutdown.clone(),
    ));
    Ok(())
}
