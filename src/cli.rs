//! The command line: roles and operator commands, all reading the same configuration as the
//! service (`sceau.toml`, `SCEAU_*`).

use crate::backends::Role;
use crate::{admin, doctor, ops, output, roles, serve};
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "sceau", version, about = "Identity and administrative document verification service")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the whole service in one process (gateway, recorder, workers, notifier) on SQLite.
    Serve(serve::ServeArgs),
    /// Distributed mode: the HTTP API, the recorder and the outbox relay (owns SQLite).
    Gateway,
    /// Distributed mode: an analysis worker (stateless; scale by running more).
    Worker(WorkerArgs),
    /// Distributed mode: webhook delivery.
    Notifier,
    /// Operator commands (companies, keys, workflows, reviews, usage, audit, webhooks, trust list).
    Admin(admin::AdminArgs),
    /// Operations of the distributed worker pool: status, drain, resume, dead letters.
    Ops(ops::OpsArgs),
    /// Commands for integrators on their own machine (`listen`: a local webhook receiver).
    Client(crate::client::ClientArgs),
    /// Check the installation: optional programs (tesseract with its languages, pdftoppm, xmlsec1),
    /// data directory permissions, the ANTS trust list's age, RabbitMQ and Redis when configured.
    /// Exits 1 when a check fails; a missing optional program is a warning.
    Doctor(doctor::DoctorArgs),
    /// Internal: the child that parses client files under memory and time limits.
    #[command(hide = true)]
    Sandbox(crate::sandbox::SandboxArgs),
}

#[derive(clap::Args)]
pub struct WorkerArgs {
    /// Concurrent analysis jobs of this process (overrides SCEAU_WORKERS).
    #[arg(long)]
    concurrency: Option<usize>,
}

use common::config::Config;

/// The command's flags, by the variables they override.
pub fn flags(command: &Command) -> Vec<(&'static str, String)> {
    match command {
        Command::Serve(args) => args.flags(),
        Command::Worker(args) => args.concurrency.map(|n| ("SCEAU_WORKERS", n.to_string())).into_iter().collect(),
        _ => Vec::new(),
    }
}

pub async fn dispatch(cli: Cli) -> ExitCode {
    // An integrator's command reads no service configuration.
    let cli = match cli.command {
        Command::Client(args) => return crate::client::run(args).await,
        command => Cli { command },
    };
    let flags = flags(&cli.command);
    let config = match common::config::Config::load(&flags) {
        Ok(c) => c,
        Err(e) => return output::fail(&e.to_string()),
    };
    match cli.command {
        Command::Serve(_) => serve::run(config).await,
        Command::Gateway => run_role(config, Role::Gateway).await,
        Command::Worker(_) => run_role(config, Role::Worker).await,
        Command::Notifier => run_role(config, Role::Notifier).await,
        Command::Admin(args) => admin::run(config, args).await,
        Command::Ops(args) => ops::run(config, args).await,
        Command::Doctor(args) => doctor::run(config, args).await,
        Command::Client(_) => output::fail("the client commands need no service configuration"),
        // `main` runs it before any runtime starts.
        Command::Sandbox(_) => output::fail("the sandbox child is started by the service, not from a runtime"),
    }
}

async fn run_role(config: Config, role: Role) -> ExitCode {
    common::telemetry::init();
    match roles::process::run(config, role).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output::fail(&format!("{e:#}")),
    }
}
