//! Running roles as a process: build the backends, start the roles' tasks, print the address,
//! wait for SIGTERM, stop intake and let work in flight finish.

use crate::backends::{Backends, Role};
use common::config::Config;
use std::sync::Arc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use worker::analysis::EngineOptions;

/// How long work in flight may take to finish after SIGTERM.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs `role` until SIGTERM. `Role::All` without broker settings is embedded mode.
pub async fn run(config: Config, role: Role) -> anyhow::Result<()> {
    super::notifier::settings(&config)?;
    let distributed = Backends::distributed_configured(&config)?;
    let backends = if distributed {
        Backends::distributed(&config, role, config.workers).await?
    } else if role == Role::All {
        Backends::embedded(&config).await?
    } else {
        return Err(anyhow::anyhow!("invalid configuration: `sceau {}` runs in distributed mode and needs SCEAU_AMQP_URL and SCEAU_REDIS_URL (or run `sceau serve`)", role_name(role)));
    };
    let shutdown = CancellationToken::new();
    let mut tasks = JoinSet::new();
    if matches!(role, Role::Worker | Role::All) {
        // A worker on its own host takes the imported trust list from the blob store before its
        // engine is built and announced.
        worker::trust_sync::report(worker::trust_sync::sync(&backends.blobs, &config.data_dir).await);
    }
    // The engine's capabilities on this machine: announced by the roles that analyse, served by `/readyz`.
    let capabilities = Arc::new(worker::analysis::capabilities::probe(&EngineOptions::from_config(&config))?);
    if matches!(role, Role::Worker | Role::All) {
        // Before the address is printed: whoever waits for it has the lines already.
        super::worker::announce(&capabilities, chrono::Utc::now());
    }
    if matches!(role, Role::Gateway | Role::All) {
        // The trust list as it is at each look: an import while the service runs shows at once.
        let live = Arc::new(worker::analysis::capabilities::LiveCapabilities::new(
            &capabilities,
            Some(&config.data_dir),
        ));
        let bound = super::gateway::start(&config, &backends, live, &mut tasks, &shutdown).await?;
        // Tests and scripts read these lines to find the ports.
        println!("sceau listening on http://{}", bound.http);
        println!("sceau metrics on http://{}", bound.metrics);
        tracing::info!(listen = %bound.http, metrics = %bound.metrics, "listening");
    }
    if matches!(role, Role::Worker | Role::All) {
        super::worker::start(&config, &backends, config.workers, &mut tasks, &shutdown)?;
    }
    if matches!(role, Role::Notifier | Role::All) {
        super::notifier::start(&config, &backends, &mut tasks, &shutdown)?;
    }
    if let (Some(redis), Some(amqp), Role::Gateway | Role::Notifier) = (&backends.redis, &backends.amqp, role) {
        tasks.spawn(super::presence::heartbeat(
            redis.clone(),
            amqp.clone(),
            role_name(role),
            None,
            shutdown.clone(),
        ));
    }
    if matches!(role, Role::Worker | Role::Notifier) {
        // A role without a listener says when it has its backends and runs: tests and scripts
        // wait for this line before they cut a backend off.
        println!("sceau {} started", role_name(role));
    }
    let mode = if distributed { "distributed" } else { "embedded" };
    tracing::info!(role = role_name(role), mode, workers = config.workers, data_dir = %config.data_dir.display(), "sceau started");
    super::wait_for_signal().await;
    tracing::info!(role = role_name(role), "shutting down: finishing work in flight");
    shutdown.cancel();
    let finished = tokio::time::timeout(SHUTDOWN_GRACE, async { while tasks.join_next().await.is_some() {} }).await;
    if finished.is_err() {
        // Whatever is still unacked goes back to the queue and is processed elsewhere.
        tracing::warn!(
            grace_seconds = SHUTDOWN_GRACE.as_secs(),
            "work still in flight after the grace period; leaving it to redelivery"
        );
    }
    if let Some(amqp) = &backends.amqp {
        amqp.close().await;
    }
    if let Some(queue) = &backends.sqlite_queue {
        match queue.give_back_claimed().await {
            Ok(count) => tracing::debug!(count, "messages claimed ahead given back"),
            Err(e) => tracing::warn!(error = %e, "cannot give back the messages claimed ahead; the next start will"),
        }
    }
    Ok(())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Gateway => "gateway",
        Role::Worker => "worker",
        Role::Notifier => "notifier",
        Role::All => "serve",
    }
}
