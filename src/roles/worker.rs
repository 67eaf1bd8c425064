//! The worker role: the analysis job pool and the deadline reaper. Stateless: it reads encrypted
//! files from the blob store and talks to the queue; it never writes the database.

use crate::backends::Backends;
use chrono::{DateTime, Utc};
use common::capabilities::Capabilities;
use common::config::Config;
use common::sandbox::{Sandbox, SandboxCommand, ANALYSIS_ADDRESS_SPACE_MB};
use std::sync::Arc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use worker::analysis::builtin::OnlineChecks;
use worker::analysis::{sandboxed, BuiltinEngine, Engine, EngineOptions, SandboxedEngine};

/// Sweeps between two looks at the trust list published in the blob store (10 s by default): an
/// import reaches every worker host within that.
const TRUST_SYNC_SWEEPS: u32 = 10;

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
    let Engines {
        journeys: engine,
        batch: batch_engine,
        batch_pool,
        pools,
    } = engines(config, concurrency)?;
    if let Some(pool) = pools.first() {
        super::sandboxes::start(pool.clone(), config, "worker", tasks);
    }
    let pool = worker::jobs::Worker {
        queue: backends.queue.clone(),
        blobs: backends.blobs.clone(),
        engine,
        batch_engine,
        batch_pool,
        realtime_slots: config.realtime_slots,
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
    tasks.spawn(worker::trust_sync::run(
        backends.blobs.clone(),
        config.data_dir.clone(),
        pools,
        TRUST_SYNC_SWEEPS * config.sweep_interval,
        shutdown.clone(),
    ));
    tasks.spawn(worker::reaper::run(
        backends.deadlines.clone(),
        backends.queue.clone(),
        config.sweep_interval,
        shutdown.clone(),
    ));
    Ok(())
}

/// The engines of journeys and of batch documents. Any slot may run a journey, the batch slots
/// only batch documents; batch documents are analysed by children `SCEAU_BATCH_NICE` steps below
/// the service's CPU priority, in a pool of their own (one pool serves both when it is 0), whose
/// children are stopped while a journey is analysed.
fn engines(config: &Config, concurrency: usize) -> anyhow::Result<Engines> {
    let command = SandboxCommand::current_exe(ANALYSIS_ADDRESS_SPACE_MB)?
        .with_engine()
        .with_settings(sandboxed::child_settings(config));
    // The checks that go on the network run here, out of the sandbox; both engines share them.
    let online = Arc::new(OnlineChecks::build(&EngineOptions::from_config(config))?);
    let realtime = Sandbox::new(command.clone(), concurrency + config.realtime_slots);
    let journeys: Arc<dyn Engine> = Arc::new(SandboxedEngine::new(realtime.clone(), config.analysis_timeout, online.clone()));
    if config.batch_nice == 0 {
        return Ok(Engines {
            batch: journeys.clone(),
            journeys,
            batch_pool: None,
            pools: vec![realtime],
        });
    }
    let batch = Sandbox::new(command.with_lower_priority(config.batch_nice), concurrency);
    Ok(Engines {
        journeys,
        batch: Arc::new(SandboxedEngine::new(batch.clone(), config.analysis_timeout, online)),
        batch_pool: Some(batch.clone()),
        pools: vec![realtime, batch],
    })
}

/// The worker's engines, and the pools of children behind them.
struct Engines {
    journeys: Arc<dyn Engine>,
    batch: Arc<dyn Engine>,
    /// The batch engine's own pool, paused while a journey is analysed; none when one pool
    /// serves both.
    batch_pool: Option<Sandbox>,
    /// Renewed when the trust list in the data dir changes: each child loaded it at its start.
    pools: Vec<Sandbox>,
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
