//! The worker role: the analysis job pool and the deadline reaper. Stateless: it reads encrypted
//! files from the blob store and talks to the queue; it never writes the database.

use crate::backends::Backends;
use chrono::{DateTime, Utc};
use common::capabilities::Capabilities;
use common::config::Config;
use common::sandbox::{Sandbox, SandboxCommand, ANALYSIS_ADDRESS_SPACE_MB};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use worker::analysis::{BuiltinEngine, EngineOptions, SandboxedEngine};

/// Checks the analysis engine builds (trust list, register, OCR probe), then starts the pool and the
/// reaper.
pub fn start(
    config: &Config,
    backends: &Backends,
    concurrency: usize,
    tasks: &mut JoinSet<()>,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    // Built once here so a bad trust list or register fails at start, with its warnings logged once;
    // the documents themselves are analysed by the same engine inside sandbox children.
    drop(BuiltinEngine::build(EngineOptions::from_config(config))?);
    let sandbox = Sandbox::new(SandboxCommand::current_exe(ANALYSIS_ADDRESS_SPACE_MB)?.with_engine(), concurrency);
    let engine = SandboxedEngine::new(sandbox, config.analysis_timeout);
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

/// One line on stderr per program the engine misses (what it costs, how to install it), and a warning
/// when the trust list in use is expired: an operator starting the service reads them without a log filter.
pub fn announce(capabilities: &Capabilities, now: DateTime<Utc>) {
    for check in capabilities.programs.iter().filter(|c| c.program.used_by_engine()) {
        if let Some(line) = check.missing_line() {
            eprintln!("sceau: {line}");
        }
    }
    if let Some(warning) = capabilities.trust_list.expiry_warning(now) {
        eprintln!("sceau: {warning}");
    }
    let list = &capabilities.trust_list;
    tracing::info!(
        sequence = list.sequence,
        issued = %list.issued.format("%Y-%m-%d"),
        origin = ?list.origin,
        "ANTS trust list in use"
    );
}
