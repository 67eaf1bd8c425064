//! `sceau ops drain [--wait]` and `sceau ops resume`. The drain is recorded in SQLite (it survives
//! a Redis restart: the gateway re-seeds it) and set in Redis at once for the workers.

use super::Ctx;
use crate::output;
use common::redis::flags::RedisFlags;
use common::redis::presence;
use common::store::{settings, RepoError, Store};
use serde_json::json;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct DrainArgs {
    /// Wait until every live worker is drained and holds no job.
    #[arg(long)]
    wait: bool,
    /// Give up waiting after this many seconds.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
}

async fn record(ctx: &Ctx, on: bool) -> anyhow::Result<()> {
    let store = Store::open(&ctx.config.database_path())?;
    store
        .write(move |tx| settings::set(tx, settings::DRAIN, if on { "on" } else { "off" }))
        .await
        .map_err(|e: RepoError| anyhow::anyhow!(e))?;
    RedisFlags::new(ctx.redis.clone()).set_draining(on).await?;
    Ok(())
}

pub async fn drain(ctx: &Ctx, args: DrainArgs) -> anyhow::Result<ExitCode> {
    record(ctx, true).await?;
    if !args.wait {
        return Ok(output::print(ctx.json, &json!({ "draining": true })));
    }
    let start = Instant::now();
    loop {
        let workers: Vec<_> = presence::list(&ctx.redis)
            .await?
            .into_iter()
            .filter(|p| p.role == "worker")
            .collect();
        let idle = workers.iter().all(|w| w.draining && w.in_flight == 0);
        if idle {
            return Ok(output::print(
                ctx.json,
                &json!({ "draining": true, "idle": true, "workers": workers.len() }),
            ));
        }
        if start.elapsed() > Duration::from_secs(args.timeout) {
            return Err(anyhow::anyhow!(
                "workers still hold jobs after {} s (the drain stays on)",
                args.timeout
            ));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub async fn resume(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    record(ctx, false).await?;
    Ok(output::print(ctx.json, &json!({ "draining": false })))
}
