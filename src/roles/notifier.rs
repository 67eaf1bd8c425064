//! The notifier role: signs and delivers webhook events from the queue.

use crate::backends::Backends;
use common::config::Config;
use std::sync::Arc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The notifier's settings from the service configuration.
pub fn settings(config: &Config) -> anyhow::Result<notifier::NotifierConfig> {
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

pub fn start(config: &Config, backends: &Backends, tasks: &mut JoinSet<()>, shutdown: &CancellationToken) -> anyhow::Result<()> {
    let settings = settings(config)?;
    let secrets = Arc::new(crate::admin::StoreSecrets {
        store: backends.store()?.clone(),
        keys: backends.keys.clone(),
    });
    let (queue, shutdown) = (backends.queue.clone(), shutdown.clone());
    tasks.spawn(async move {
        if let Err(e) = notifier::run(queue, secrets, settings, shutdown).await {
            tracing::error!(error = %e, "notifier stopped");
        }
    });
    Ok(())
}
