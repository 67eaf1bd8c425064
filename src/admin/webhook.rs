//! `sceau admin webhook list|dead-letters|replay`: the delivery log and dead letters.

use super::{id_arg, Ctx};
use crate::output;
use common::store::{events, RepoError};
use domain::ids::{CompanyId, EventId};
use domain::webhook::DeliveryStatus;
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Recent events with their delivery status.
    List {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: Option<CompanyId>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Events whose every attempt failed.
    DeadLetters {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: Option<CompanyId>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Deliver a dead event again (same eventId, attempts from one).
    Replay {
        #[arg(value_parser = id_arg::<EventId>)]
        id: EventId,
    },
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    match args.command {
        Command::List { company, limit } => {
            let data = ctx.store.read(move |c| events::list(c, None, company.as_ref(), limit)).await?;
            Ok(output::print(ctx.json, &json!({ "data": data })))
        }
        Command::DeadLetters { company, limit } => {
            let data = ctx
                .store
                .read(move |c| events::list(c, Some(DeliveryStatus::Dead), company.as_ref(), limit))
                .await?;
            Ok(output::print(ctx.json, &json!({ "data": data })))
        }
        Command::Replay { id } => {
            let event = id.clone();
            ctx.store.write(move |tx| events::replay(tx, &event, chrono::Utc::now())).await?;
            Ok(output::print(ctx.json, &json!({ "eventId": id, "queued": true })))
        }
    }
}
