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

async fn start(config: Config) -> anyhow::Result<()> {
    roles::process::run(config, Role::All).await
}
