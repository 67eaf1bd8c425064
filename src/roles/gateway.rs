//! The gateway role: HTTP API, recorder, outbox relay and sweeper, around the SQLite store.

use crate::backends::Backends;
use common::config::Config;
use common::sandbox::{Sandbox, SandboxCommand, PAGE_COUNT_ADDRESS_SPACE_MB};
use gateway::client_addr::TrustedProxies;
use gateway::password_pool::PasswordPool;
use gateway::rate_limit::{EdgeLimits, RateLimiter};
use gateway::state::AppState;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Sandbox children counting PDF pages at the edge: a count takes milliseconds, so a few suffice.
const EDGE_PARSERS: usize = 4;

/// The addresses the gateway listens on.
pub struct Bound {
    /// The API and the pages.
    pub http: SocketAddr,
    /// `/metrics` alone.
    pub metrics: SocketAddr,
}

async fn bind(addr: SocketAddr, what: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr} ({what}): {e}"))
}

/// Binds the listeners and starts the gateway's tasks; returns the bound addresses.
pub async fn start(
    config: &Config,
    backends: &Backends,
    capabilities: Arc<dyn common::capabilities::CapabilityReport>,
    tasks: &mut JoinSet<()>,
    shutdown: &CancellationToken,
) -> anyhow::Result<Bound> {
    let store = backends.store()?.clone();
    let listener = bind(config.listen, "SCEAU_LISTEN").await?;
    let metrics_listener = bind(config.metrics_listen, "SCEAU_METRICS_LISTEN").await?;
    let bound = listener.local_addr()?;
    let metrics_bound = metrics_listener.local_addr()?;
    let metrics_handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| anyhow::anyhow!("cannot install the metrics recorder: {e}"))?;
    let outbox_wake = Arc::new(Notify::new());
    let public_base = config.public_base(bound);
    let recorded = public_base.clone();
    store
        .write(move |tx| common::store::settings::set(tx, common::store::settings::PUBLIC_BASE, &recorded))
        .await?;
    let edge_parsers = Sandbox::new(
        SandboxCommand::current_exe(PAGE_COUNT_ADDRESS_SPACE_MB)?.with_cpu_deadline(gateway::inspect::BACKSTOP),
        EDGE_PARSERS,
    );
    super::sandboxes::start(edge_parsers.clone(), config, "gateway", tasks);
    let state = AppState {
        store: store.clone(),
        blobs: backends.blobs.clone(),
        keys: backends.keys.clone(),
        public_base,
        volume_limit: config.volume_limit_bytes,
        batch_window: config.batch_window,
        request_timeout: config.request_timeout,
        webhook_allow_hosts: Arc::new(config.webhook_allow_hosts.clone()),
        realtime_limiter: Arc::new(RateLimiter::per_minute(config.realtime_rate_per_minute)),
        edge_limits: Arc::new(EdgeLimits::new(config.key_failures_per_minute)),
        trusted_proxies: Arc::new(TrustedProxies::new(config.trusted_proxies.clone())),
        outbox_wake: outbox_wake.clone(),
        passwords: Arc::new(
            PasswordPool::for_this_machine().map_err(|e| anyhow::anyhow!("cannot start the password hashing threads: {e}"))?,
        ),
        sandbox: edge_parsers.clone(),
        edge_turns: Default::default(),
        face_match: config.face_match,
        mailer: common::mail::Mailer::from_config(config)?,
        capabilities,
    };
    let recorder = recorder::Recorder {
        store: store.clone(),
        blobs: backends.blobs.clone(),
        queue: backends.queue.clone(),
        outbox_wake: outbox_wake.clone(),
    };
    tasks.spawn(recorder.run(shutdown.clone()));
    tasks.spawn(recorder::relay::run(
        store.clone(),
        backends.queue.clone(),
        outbox_wake,
        config.sweep_interval,
        shutdown.clone(),
    ));
    tasks.spawn(recorder::sweeper::run(
        store.clone(),
        backends.blobs.clone(),
        config.sweep_interval,
        recorder::retention::Retention::of(config),
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
    let metrics_shutdown = shutdown.clone();
    tasks.spawn(async move {
        if let Err(e) = gateway::metrics_listener::serve(metrics_listener, metrics_handle, metrics_shutdown).await {
            tracing::error!(error = %e, "metrics server stopped");
        }
    });
    Ok(Bound {
        http: bound,
        metrics: metrics_bound,
    })
}
