//! `sceau admin workflow create|list|test-webhook`.

use super::{id_arg, Ctx};
use crate::output;
use common::domain::DocumentCategory;
use common::ids::{CompanyId, WorkflowId};
use common::model::WorkflowRules;
use common::store::{workflows, RepoError};
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Create a workflow.
    Create {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: CompanyId,
        #[arg(long)]
        name: String,
        #[arg(long, value_parser = id_arg::<DocumentCategory>)]
        category: DocumentCategory,
        /// Where `verification.*` events go (https, or http to an allow-listed host).
        #[arg(long)]
        webhook_url: Option<String>,
        /// Decision rules, e.g. '{"minAge":18,"acceptedCountries":["FRA"],"systematicReview":false}'.
        #[arg(long)]
        rules: Option<String>,
    },
    /// List a company's workflows.
    List {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: CompanyId,
    },
    /// Send a `verification.test` event to the workflow's webhook URL.
    TestWebhook {
        #[arg(value_parser = id_arg::<WorkflowId>)]
        id: WorkflowId,
    },
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    match args.command {
        Command::Create {
            company,
            name,
            category,
            webhook_url,
            rules,
        } => {
            if let Some(url) = &webhook_url {
                notifier::validate_url(url, &ctx.config.webhook_allow_hosts).map_err(|e| RepoError::Invalid {
                    field: "webhook-url",
                    message: e.to_string(),
                })?;
            }
            let rules: WorkflowRules = match rules {
                Some(r) => serde_json::from_str(&r).map_err(|e| RepoError::Invalid {
                    field: "rules",
                    message: format!("--rules is not valid rules JSON: {e}"),
                })?,
                None => WorkflowRules::default(),
            };
            let created = ctx
                .store
                .write(move |tx| workflows::create(tx, &company, &name, category, webhook_url.as_deref(), &rules, false, now))
                .await?;
            Ok(output::print(ctx.json, &created))
        }
        Command::List { company } => Ok(output::print(
            ctx.json,
            &json!({ "data": ctx.store.read(move |c| workflows::list(c, &company)).await? }),
        )),
        Command::TestWebhook { id } => {
            let event = ctx
                .store
                .write(move |tx| workflows::emit_test(tx, &workflows::get_any(tx, &id)?, now))
                .await?;
            Ok(output::print(ctx.json, &json!({ "eventId": event, "queued": true })))
        }
    }
}
