//! The gateway role: HTTP API, recorder, outbox relay and sweeper, around the SQLite store.

use crate::backends::Backends;
use common::config::Config;
use gateway::rate_limit::RateLimiter;
use gateway::state::AppState;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Binds the listener and starts the gateway's tasks; returns the bound address.
pub async fn start(
    config: &Config,
    backends: &Backends,
    tasks: &mut JoinSet<()>,
    shutdown: &CancellationToken,
) -> anyhow::Result<SocketAddr> {
    let store = backends.store()?.clone();
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    let bound = listener.local_addr()?;
    let outbox_wake = Arc::new(Notify::new());
    let state = AppState {
        store: store.clone(),
        blobs: backends.blobs.clone(),
        keys: backends.keys.clone(),
        public_base: config.public_base(bound),
        volume_limit: config.volume_limit_bytes,
        batch_window: config.batch_window,
        webhook_allow_hosts: Arc::new(config.webhook_allow_hosts.clone()),
        realtime_limiter: Arc::new(RateLimiter::per_minute(config.realtime_rate_per_minute)),
        outbox_wake: outbox_wake.clone(),
        metrics: metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder().ok(),
    };
    let recorder = gateway::recorder::Recorder {
        store: store.clone(),
        blobs: backends.blobs.clone(),
        queue: backends.queue.clone(),
        outbox_wake: outbox_wake.clone(),
    };
    tasks.spawn(recorder.run(shutdown.clone()));
    tasks.spawn(gateway::relay::run(
        store.clone(),
        backends.queue.clone(),
        outbox_wake,
        config.sweep_interval,
        shutdown.clone(),
    ));
    tasks.spawn(gateway::sweeper::run(
        store.clone(),
        backends.blobs.clone(),
        config.sweep_interval,
        shutdown.clone(),
    ));
    if let Some(redis) = &backends.redis {
        // Redis keeps nothing on disk: deadlines and flags come back from SQLite.
        tasks.spawn(common::redis::reseed::watch_and_reseed(
            store,
            redis.clone(),
            config.sweep_interval,
            shutdown.clone(),
        ));
    }
    let http_shutdown = shutdown.clone();
    tasks.spawn(async move {
        if let Err(e) = gateway::serve_http(listener, state, http_shutdown).await {
            tracing::error!(error = %e, "HTTP server stopped");
        }
    });
    Ok(bound)
}
