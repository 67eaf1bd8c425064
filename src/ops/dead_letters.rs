//! `sceau ops dead-letters list|replay`: messages that failed too often (poison jobs), per queue,
//! in the broker (distributed mode) or in the SQLite queue (embedded mode).

use crate::output;
use common::config::Config;
use common::queue::amqp::AmqpQueue;
use common::queue::sqlite::SqliteQueue;
use common::queue::Topic;
use common::store::Store;
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
        /// Only this queue (`jobs.realtime`, `jobs.batch`, `results`, `events`, `jobs.realtime.overflow`).
        #[arg(long)]
        queue: Option<String>,
        /// At most this many messages per queue.
        #[arg(long, default_value_t = 10_000)]
        max: usize,
    },
}

/// Where the dead letters are.
pub enum Source {
    Broker(AmqpQueue),
    Embedded(SqliteQueue),
}

impl Source {
    pub fn embedded(config: &Config) -> anyhow::Result<Source> {
        Ok(Source::Embedded(SqliteQueue::new(
            Store::open(&config.database_path())?,
            crate::backends::MAX_DELIVERIES,
        )))
    }

    async fn count(&self, topic: Topic) -> anyhow::Result<u32> {
        Ok(match self {
            Source::Broker(q) => q.dead_letters(topic).await?,
            Source::Embedded(q) => q.dead_letters(topic).await?,
        })
    }

    async fn replay(&self, topic: Topic, max: usize) -> anyhow::Result<usize> {
        Ok(match self {
            Source::Broker(q) => q.replay_dead_letters(topic, max).await?,
            Source::Embedded(q) => q.replay_dead_letters(topic, max).await?,
        })
    }
}

pub async fn run(source: &Source, json_output: bool, args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::List => {
            let mut counts = serde_json::Map::new();
            for topic in Topic::ALL {
                counts.insert(topic.as_str().into(), json!(source.count(topic).await?));
            }
            Ok(output::print(json_output, &json!({ "deadLetters": counts })))
        }
        Command::Replay { queue, max } => {
            let topics: Vec<Topic> = match queue {
                Some(q) => vec![Topic::parse(&q).ok_or_else(|| anyhow::anyhow!("unknown queue `{q}`"))?],
                None => Topic::ALL.to_vec(),
            };
            let mut replayed = serde_json::Map::new();
            for topic in topics {
                replayed.insert(topic.as_str().into(), json!(source.replay(topic, max).await?));
            }
            Ok(output::print(json_output, &json!({ "replayed": replayed })))
        }
    }
}
