//! `sceau admin audit --company ID`: the company's audit log, newest first: who (member, key
//! prefix or operator), what, from which IP and when.

use super::{id_arg, Ctx};
use crate::output;
use common::store::{audit, RepoError};
use domain::ids::CompanyId;
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_parser = id_arg::<CompanyId>)]
    company: CompanyId,
    #[arg(long, default_value_t = 100)]
    limit: u32,
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let Args { company, limit } = args;
    let entries = ctx
        .store
        .read(move |c| audit::list(c, &company, &audit::Filter::default(), limit))
        .await?;
    let entries: Vec<audit::AuditEntry> = entries.into_iter().map(|(_, entry)| entry).collect();
    Ok(output::print(ctx.json, &json!({ "data": entries })))
}
