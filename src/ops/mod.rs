//! `sceau ops …`: operations of the distributed worker pool, one file per command. They talk to
//! RabbitMQ and Redis with the service's configuration, and to SQLite where a setting must
//! survive a Redis restart (the drain).

mod dead_letters;
mod drain;
mod status;

use crate::output;
use common::config::Config;
use common::queue::amqp::{AmqpOptions, AmqpQueue};
use common::redis::{RedisBackend, RedisConfig};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct OpsArgs {
    /// Print one JSON object instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: OpsCommand,
}

#[derive(clap::Subcommand)]
enum OpsCommand {
    /// Queues (ready, held, consumers), live workers, drain, oldest deadline, dead letters.
    Status,
    /// Stop every worker from taking jobs; they finish what they hold and idle.
    Drain(drain::DrainArgs),
    /// Let workers take jobs again.
    Resume,
    /// Poison messages: list per queue, or replay them.
    DeadLetters(dead_letters::Args),
}

/// Connections of an ops command.
pub struct Ctx {
    pub config: Config,
    pub amqp: AmqpQueue,
    pub redis: RedisBackend,
    pub json: bool,
}

pub async fn run(config: Config, args: OpsArgs) -> ExitCode {
    if config.amqp_url.is_none() && config.redis_url.is_none() {
        return run_embedded(config, args).await;
    }
    let ctx = match connect(config, args.json).await {
        Ok(c) => c,
        Err(e) => return output::fail(&format!("{e:#}")),
    };
    let result = match args.command {
        OpsCommand::Status => status::run(&ctx).await,
        OpsCommand::Drain(a) => drain::drain(&ctx, a).await,
        OpsCommand::Resume => drain::resume(&ctx).await,
        OpsCommand::DeadLetters(a) => dead_letters::run(&dead_letters::Source::Broker(ctx.amqp.clone()), ctx.json, a).await,
    };
    ctx.amqp.close().await;
    result.unwrap_or_else(|e| output::fail(&format!("{e:#}")))
}

/// Embedded mode has one process: its dead letters are in SQLite, and draining it is stopping it.
async fn run_embedded(config: Config, args: OpsArgs) -> ExitCode {
    let result = match args.command {
        OpsCommand::DeadLetters(a) => match dead_letters::Source::embedded(&config) {
            Ok(source) => dead_letters::run(&source, args.json, a).await,
            Err(e) => Err(e),
        },
        _ => Err(anyhow::anyhow!(
            "`sceau ops status|drain|resume` operate distributed mode (set SCEAU_AMQP_URL and SCEAU_REDIS_URL); in embedded mode, stop `sceau serve` with SIGTERM to drain it"
        )),
    };
    result.unwrap_or_else(|e| output::fail(&format!("{e:#}")))
}

async fn connect(config: Config, json: bool) -> anyhow::Result<Ctx> {
    let (Some(amqp_url), Some(redis_url)) = (config.amqp_url.clone(), config.redis_url.clone()) else {
        return Err(anyhow::anyhow!(
            "`sceau ops` operates distributed mode: set SCEAU_AMQP_URL and SCEAU_REDIS_URL"
        ));
    };
    let amqp = AmqpQueue::connect(&amqp_url, AmqpOptions::default())
        .await
        .map_err(|e| anyhow::anyhow!("RabbitMQ: {e}"))?;
    let redis = RedisBackend::new(&RedisConfig {
        url: redis_url,
        prefix: config.redis_prefix.clone(),
    })?;
    redis.ping().await.map_err(|e| anyhow::anyhow!("Redis: {e}"))?;
    Ok(Ctx { config, amqp, redis, json })
}
