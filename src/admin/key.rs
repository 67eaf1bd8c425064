//! `sceau admin key create|revoke`. A key is printed once and stored only as a hash.

use super::{id_arg, Ctx};
use crate::output;
use common::domain::Mode;
use common::ids::CompanyId;
use common::store::{api_keys, RepoError};
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Create an API key (requires the company's group licence); printed once.
    Create {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: CompanyId,
        /// A key that can only call GET operations.
        #[arg(long)]
        read_only: bool,
        /// A test-mode key (`sk_test_…`, `rk_test_…`): it acts only on the company's test data.
        #[arg(long)]
        test: bool,
    },
    /// Revoke a key by its prefix (the first 16 characters).
    Revoke { prefix: String },
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    match args.command {
        Command::Create { company, read_only, test } => {
            let owner = company.clone();
            let mode = if test { Mode::Test } else { Mode::Live };
            let key = ctx
                .store
                .write(move |tx| api_keys::create(tx, &owner, read_only, mode, None, now))
                .await?;
            Ok(output::print(
                ctx.json,
                &json!({ "key": key.secret, "prefix": key.prefix, "readOnly": read_only, "mode": mode, "companyId": company }),
            ))
        }
        Command::Revoke { prefix } => {
            let p = prefix.clone();
            ctx.store.write(move |tx| api_keys::revoke(tx, None, &p, now)).await?;
            Ok(output::print(ctx.json, &json!({ "prefix": prefix, "revoked": true })))
        }
    }
}
