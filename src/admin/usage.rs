//! `sceau admin usage --company ID --month YYYY-MM`: acts of a month.

use super::{id_arg, Ctx};
use crate::output;
use common::store::{usage, RepoError};
use domain::ids::CompanyId;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_parser = id_arg::<CompanyId>)]
    company: CompanyId,
    /// Month, `YYYY-MM` (UTC).
    #[arg(long)]
    month: String,
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let Args { company, month } = args;
    Ok(output::print(
        ctx.json,
        &ctx.store.read(move |c| usage::for_month(c, &company, &month)).await?,
    ))
}
