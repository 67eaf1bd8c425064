//! The heartbeat of a distributed process: every 2 s it announces its role, what it holds unacked
//! per queue and, for workers, concurrency, jobs in flight and drain (see `sceau ops status`).

use common::queue::amqp::AmqpQueue;
use common::redis::presence::{self, Presence};
use common::redis::RedisBackend;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a worker pool adds to its presence.
pub struct PoolView {
    pub concurrency: usize,
    pub pool: worker::jobs::Worker,
}

pub async fn heartbeat(redis: RedisBackend, amqp: AmqpQueue, role: &'static str, pool: Option<PoolView>, shutdown: CancellationToken) {
    let id = common::redis::lease::Lease::unique_holder_id(role);
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
    loop {
        let presence = Presence {
            id: id.clone(),
            role: role.into(),
            host: host.clone(),
            pid: std::process::id(),
            concurrency: pool.as_ref().map_or(0, |p| p.concurrency),
            in_flight: pool.as_ref().map_or(0, |p| p.pool.in_flight.load(Ordering::Relaxed)),
            draining: pool.as_ref().is_some_and(|p| p.pool.paused.load(Ordering::Relaxed)),
            held: amqp
                .unsettled()
                .into_iter()
                .map(|(topic, n)| (topic.as_str().to_owned(), n))
                .collect(),
            seen_at: domain::time::format(chrono::Utc::now()),
        };
        if let Err(e) = presence::announce(&redis, &presence).await {
            tracing::warn!(error = %e, "cannot announce this process");
        }
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
    }
    let _ = presence::withdraw(&redis, &id).await;
}
