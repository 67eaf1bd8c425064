//! `sceau admin company create|list|show|set|rotate-secret [--test]`.

use super::{id_arg, Ctx};
use crate::output;
use common::domain::{Licence, Mode};
use common::ids::CompanyId;
use common::store::{companies, RepoError};
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Create a company (with its webhook secret and default batch workflows).
    Create {
        #[arg(long)]
        name: String,
        /// `group` is required to create API keys.
        #[arg(long, default_value = "standard", value_parser = ["standard", "group"])]
        licence: String,
    },
    /// List companies.
    List,
    /// Show one company.
    Show {
        #[arg(value_parser = id_arg::<CompanyId>)]
        id: CompanyId,
    },
    /// Change AI use and/or image retention.
    Set {
        #[arg(value_parser = id_arg::<CompanyId>)]
        id: CompanyId,
        #[arg(long, value_parser = ["on", "off"])]
        ai: Option<String>,
        #[arg(long)]
        retention_days: Option<u32>,
    },
    /// Make a new webhook secret current (the previous one keeps signing for 24 h).
    RotateSecret {
        #[arg(value_parser = id_arg::<CompanyId>)]
        id: CompanyId,
        /// The test account's secret (`whsec_test_…`, signing test events only), not the live one.
        #[arg(long)]
        test: bool,
    },
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    match args.command {
        Command::Create { name, licence } => {
            let licence: Licence = licence.parse().map_err(|_| RepoError::Invalid {
                field: "licence",
                message: "licence must be standard or group".into(),
            })?;
            let keys = ctx.keys()?;
            let created = ctx.store.write(move |tx| companies::create(tx, &name, licence, &keys, now)).await?;
            let mut value = serde_json::to_value(&created.company).map_err(RepoError::from)?;
            value["webhookSecret"] = json!(created.webhook_secret);
            Ok(output::print(ctx.json, &value))
        }
        Command::List => Ok(output::print(ctx.json, &json!({ "data": ctx.store.read(companies::list).await? }))),
        Command::Show { id } => Ok(output::print(ctx.json, &ctx.store.read(move |c| companies::get(c, &id)).await?)),
        Command::Set { id, ai, retention_days } => {
            if ai.is_none() && retention_days.is_none() {
                return Err(RepoError::Invalid {
                    field: "ai",
                    message: "give --ai and/or --retention-days".into(),
                });
            }
            let ai = ai.map(|a| a == "on");
            Ok(output::print(
                ctx.json,
                &ctx.store.write(move |tx| companies::set(tx, &id, ai, retention_days)).await?,
            ))
        }
        Command::RotateSecret { id, test } => {
            let (company, keys) = (id.clone(), ctx.keys()?);
            let secret = ctx
                .store
                .write(move |tx| match test {
                    true => companies::rotate_test_secret(tx, &company, &keys, now),
                    false => companies::rotate_secret(tx, &company, &keys, now),
                })
                .await?;
            let mode = if test { Mode::Test } else { Mode::Live };
            Ok(output::print(
                ctx.json,
                &json!({ "id": id, "mode": mode, "webhookSecret": secret, "previousSecretValidHours": companies::ROTATION_OVERLAP_HOURS }),
            ))
        }
    }
}
