//! `sceau ops dead-letters list|replay`: messages that failed too often (poison jobs), per queue.

use super::Ctx;
use crate::output;
use common::queue::Topic;
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Dead letters per queue.
    List,
    /// Put dead letters back on their queue (once their cause is fixed).
    Replay {
        /// Only this queue (`jobs.realtime`, `jobs.batch`, `results`, `events`).
        #[arg(long)]
        queue: Option<String>,
        /// At most this many messages per queue.
        #[arg(long, default_value_t = 10_000)]
        max: usize,
    },
}

pub async fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::List => {
            let mut counts = serde_json::Map::new();
            for topic in Topic::ALL {
                counts.insert(topic.as_str().into(), json!(ctx.amqp.dead_letters(topic).await?));
            }
            Ok(output::print(ctx.json, &json!({ "deadLetters": counts })))
        }
        Command::Replay { queue, max } => {
            let topics: Vec<Topic> = match queue {
                Some(q) => vec![Topic::parse(&q).ok_or_else(|| anyhow::anyhow!("unknown queue `{q}`"))?],
                None => Topic::ALL.to_vec(),
            };
            let mut replayed = serde_json::Map::new();
            for topic in topics {
                replayed.insert(topic.as_str().into(), json!(ctx.amqp.replay_dead_letters(topic, max).await?));
            }
            Ok(output::print(ctx.json, &json!({ "replayed": replayed })))
        }
    }
}
