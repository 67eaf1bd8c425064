//! `sceau serve`: every role in one process. With no setting it is embedded mode (SQLite only);
//! with `SCEAU_AMQP_URL` and `SCEAU_REDIS_URL` the same roles run on RabbitMQ and Redis.

use crate::backends::Role;
use crate::{output, roles};
use common::config::Config;
use std::process::ExitCode;

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

impl ServeArgs {
    /// The flags given, by the variables they override.
    pub fn flags(&self) -> Vec<(&'static str, String)> {
        let mut flags = Vec::new();
        if let Some(listen) = &self.listen {
            flags.push(("SCEAU_LISTEN", listen.clone()));
        }
        if let Some(dir) = &self.data_dir {
            flags.push(("SCEAU_DATA_DIR", dir.display().to_string()));
        }
        if let Some(workers) = self.workers {
            flags.push(("SCEAU_WORKERS", workers.to_string()));
        }
        flags
    }
}

pub async fn run(config: Config) -> ExitCode {
    common::telemetry::init();
    match start(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::fail(&format!("{e:#}")),
    }
}

async fn start(config: Config) -> anyhow::Result<()> {
    roles::process::run(config, Role::All).await
}
