//! `sceau serve`: embedded mode. One process runs the HTTP gateway, the recorder, the outbox relay,
//! the sweeper, the deadline reaper, the worker pool and the notifier, on SQLite, with no setting.

use crate::output;
use common::blobs::BlobStore;
use common::config::Config;
use common::crypto::envelope::MasterKeys;
use common::queue::sqlite::SqliteQueue;
use common::queue::Queue;
use common::store::Store;
use gateway::rate_limit::RateLimiter;
use gateway::state::AppState;
use std::process::ExitCode;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// A queue message handed out this often without an ack is a poison message.
const MAX_DELIVERIES: u32 = 5;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (overrides SCEAU_LISTEN).
    #[arg(long)]
    listen: Option<String>,
    /// Data directory (overrides SCEAU_DATA_DIR).
    #[arg(long)]
    data_dir: Option<std::path::PathBuf>,
    /// Concurrent analysis jobs (overrides SCEAU_WORKERS).
    #[arg(long)]
    workers: Option<usize>,
}

pub async fn run(mut config: Config, args: ServeArgs) -> ExitCode {
    common::telemetry::init();
    if let Err(e) = apply_flags(&mut config, args) {
        return output::fail(&e.to_string());
    }
    match start(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::fail(&format!("{e:#}")),
    }
}

fn apply_flags(config: &mut Config, args: ServeArgs) -> Result<(), common::config::ConfigError> {
    if let Some(l) = args.listen {
        config.set("SCEAU_LISTEN", &l)?;
    }
    if let Some(d) = args.data_dir {
        config.data_dir = d;
    }
    if let Some(w) = args.workers {
        config.set("SCEAU_WORKERS", &w.to_string())?;
    }
    Ok(())
}

fn notifier_config(config: &Config) -> anyhow::Result<notifier::NotifierConfig> {
    let mut n = notifier::NotifierConfig {
        allow_hosts: config.webhook_allow_hosts.clone(),
        ..Default::default()
    };
    if let Some(s) = &config.retry_schedule {
        n.retry_schedule =
            notifier::parse_retry_schedule(s).map_err(|e| anyhow::anyhow!("invalid configuration: SCEAU_RETRY_SCHEDULE: {e}"))?;
    }
    Ok(n)
}

async fn start(config: Config) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", config.data_dir.display()))?;
    let notifier_config = notifier_config(&config)?;
    let store = Store::open(&config.database_path())?;
    let keys = Arc::new(MasterKeys::load_or_create(&config.master_key_path())?);
    let blobs = BlobStore::new(config.blob_dir(), keys.clone())?;
    let queue = SqliteQueue::new(store.clone(), MAX_DELIVERIES);
    // Nothing of this process is in flight yet: whatever a previous run held is handed out again.
    queue.release_leases().await?;
    let queue: Arc<dyn Queue> = Arc::new(queue);

    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    let bound = listener.local_addr()?;
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder().ok();
    let outbox_wake = Arc::new(Notify::new());
    let state = AppState {
        store: store.clone(),
        blobs: blobs.clone(),
        keys: keys.clone(),
        public_base: config.public_base(bound),
        volume_limit: config.volume_limit_bytes,
        batch_window: config.batch_window,
        webhook_allow_hosts: Arc::new(config.webhook_allow_hosts.clone()),
        realtime_limiter: Arc::new(RateLimiter::per_minute(config.realtime_rate_per_minute)),
        outbox_wake: outbox_wake.clone(),
        metrics,
    };

    let shutdown = CancellationToken::new();
    let mut tasks = tokio::task::JoinSet::new();
    let recorder = gateway::recorder::Recorder {
        store: store.clone(),
        blobs: blobs.clone(),
        queue: queue.clone(),
        outbox_wake: outbox_wake.clone(),
    };
    tasks.spawn(recorder.run(shutdown.clone()));
    tasks.spawn(gateway::relay::run(
        store.clone(),
        queue.clone(),
        outbox_wake,
        config.sweep_interval,
        shutdown.clone(),
    ));
    tasks.spawn(gateway::sweeper::run(
        store.clone(),
        blobs.clone(),
        config.sweep_interval,
        shutdown.clone(),
    ));
    let deadlines = Arc::new(common::deadlines::StoreDeadlines(store.clone()));
    tasks.spawn(worker::reaper::run(
        deadlines,
        queue.clone(),
        config.sweep_interval,
        shutdown.clone(),
    ));
    let pool = worker::jobs::Worker {
        queue: queue.clone(),
        blobs,
        engine: Arc::new(worker::analysis::ProvisionalEngine),
        flags: Arc::new(worker::flags::StoreFlags(store.clone())),
    };
    tasks.spawn(pool.run(config.workers, shutdown.clone()));
    let secrets = Arc::new(crate::admin::StoreSecrets(store.clone()));
    let notifier_shutdown = shutdown.clone();
    tasks.spawn(async move {
        if let Err(e) = notifier::run(queue, secrets, notifier_config, notifier_shutdown).await {
            tracing::error!(error = %e, "notifier stopped");
        }
    });
    let http_shutdown = shutdown.clone();
    tasks.spawn(async move {
        if let Err(e) = gateway::serve_http(listener, state, http_shutdown).await {
            tracing::error!(error = %e, "HTTP server stopped");
        }
    });

    // Tests and scripts read this line to find the port.
    println!("sceau listening on http://{bound}");
    tracing::info!(address = %bound, workers = config.workers, data_dir = %config.data_dir.display(), "sceau serve started (embedded mode)");
    wait_for_signal().await;
    tracing::info!("shutting down: finishing work in flight");
    shutdown.cancel();
    while tasks.join_next().await.is_some() {}
    Ok(())
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(t) => t,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
