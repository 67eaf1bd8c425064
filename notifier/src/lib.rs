//! The notifier: signs webhook events (Standard Webhooks) and delivers them to client
//! back-ends, retrying on a schedule and refusing internal destinations. It runs as a task of
//! `sceau serve` or as the `sceau notifier` process, on whichever queue backend it is given.

mod config;
mod consumer;
pub mod delivery;
pub mod destination;
mod report;
mod secrets;
mod share;

pub use config::{default_retry_schedule, parse_retry_schedule, NotifierConfig, ScheduleError};
pub use destination::{resolve_checked, validate_url, DestinationError, ForbiddenRange};
pub use secrets::{SecretError, SecretSource};

use common::queue::Queue;
use consumer::Consumer;
use delivery::Deliverer;
use report::Reports;
use share::Shares;
use std::sync::Arc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Why the notifier could not start.
#[derive(Debug, thiserror::Error)]
pub enum NotifierError {
    #[error("the webhook HTTP client could not be built")]
    Client(#[source] reqwest::Error),
}

/// Delivers webhook events from `Topic::Events` until `shutdown` is cancelled, then returns once
/// the attempts in flight are finished and acked. Attempt outcomes go to `Topic::Results`.
pub async fn run(
    queue: Arc<dyn Queue>,
    secrets: Arc<dyn SecretSource>,
    config: NotifierConfig,
    shutdown: CancellationToken,
) -> Result<(), NotifierError> {
    let deliverer = Deliverer::new(&config).map_err(NotifierError::Client)?;
    let shares = Shares::new(config.per_destination, config.per_company);
    let (reports, reporting) = Reports::start(queue.clone());
    let consumer = Arc::new(Consumer::new(
        queue,
        secrets,
        deliverer,
        shares,
        reports,
        config.retry_schedule.clone(),
    ));
    let mut loops = JoinSet::new();
    // At least one loop: a concurrency of 0 would silently leave every webhook undelivered.
    for _ in 0..config.concurrency.max(1) {
        let consumer = Arc::clone(&consumer);
        let shutdown = shutdown.clone();
        loops.spawn(async move { consumer.work(&shutdown).await });
    }
    while let Some(joined) = loops.join_next().await {
        if let Err(err) = joined {
            tracing::error!(error = %err, "a webhook delivery loop ended abnormally");
        }
    }
    // The last handle on the reports goes with the loops: what they reported is published.
    drop(consumer);
    if let Err(err) = reporting.await {
        tracing::error!(error = %err, "the webhook attempts' reporting ended abnormally");
    }
    Ok(())
}
