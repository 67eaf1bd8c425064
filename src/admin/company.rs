//! `sceau admin company create|list|show|set|rotate-secret [--test]`.

use super::{id_arg, Ctx};
use crate::output;
use common::domain::{Licence, Mode};
use common::ids::CompanyId;
use common::store::{companies, consultations, RepoError};
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
        /// Confirms a lower retention that deletes images now (the command says how many).
        #[arg(long)]
        yes: bool,
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

/// As the portal's settings page does, a retention that deletes images now is applied only once
/// the operator has seen how many: without `--yes` the command refuses and says.
async fn confirm_retention(ctx: &Ctx, id: &CompanyId, days: u32, now: chrono::DateTime<chrono::Utc>) -> Result<(), RepoError> {
    let company = id.clone();
    let (current, images) = ctx
        .store
        .read(move |c| {
            let current = companies::get(c, &company)?.retention_days;
            let images = if days < current {
                consultations::purged_by_retention(c, &company, days, now)?
            } else {
                0
            };
            Ok::<_, RepoError>((current, images))
        })
        .await?;
    if images == 0 {
        return Ok(());
    }
    Err(RepoError::Refused(format!(
        "lowering retention from {current} to {days} days deletes {images} image(s) of settled results now \
         (those of results waiting for review are kept until settled); run again with --yes to confirm"
    )))
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
        Command::Set {
            id,
            ai,
            retention_days,
            yes,
        } => {
            if ai.is_none() && retention_days.is_none() {
                return Err(RepoError::Invalid {
                    field: "ai",
                    message: "give --ai and/or --retention-days".into(),
                });
            }
            if let (Some(days), false) = (retention_days, yes) {
                confirm_retention(ctx, &id, days, now).await?;
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
