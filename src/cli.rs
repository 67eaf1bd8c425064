//! The command line: roles and operator commands, all reading the same configuration as the
//! service (`sceau.toml`, `SCEAU_*`).

use crate::{admin, output, serve};
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
    /// Operator commands (companies, keys, workflows, reviews, usage, audit, webhooks).
    Admin(admin::AdminArgs),
}

pub async fn dispatch(cli: Cli) -> ExitCode {
    let config = match common::config::Config::load() {
        Ok(c) => c,
        Err(e) => return output::fail(&e.to_string()),
    };
    match cli.command {
        Command::Serve(args) => serve::run(config, args).await,
        Command::Admin(args) => admin::run(config, args).await,
    }
}
