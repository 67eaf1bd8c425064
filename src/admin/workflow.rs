//! `sceau admin workflow create|list|set-webhook|test-webhook`. A workflow has a live URL and a
//! test URL (test events go only there, signed with the test account's `whsec_test_…` secret,
//! printed here once when it is made).

use super::{id_arg, Ctx};
use crate::output;
use common::store::{companies, workflows, RepoError};
use domain::branding::DisplayName;
use domain::ids::{CompanyId, WorkflowId};
use domain::model::WorkflowDetail;
use domain::model::WorkflowRules;
use domain::vocabulary::DocumentCategory;
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
        /// Where the events of test mode go (never to --webhook-url); none: they are not sent.
        #[arg(long)]
        test_webhook_url: Option<String>,
        /// Decision rules, e.g. '{"minAge":18,"acceptedCountries":["FRA"],"systematicReview":false}'.
        #[arg(long)]
        rules: Option<String>,
    },
    /// List a company's workflows.
    List {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: CompanyId,
    },
    /// Set or (with an empty value) remove the workflow's live and/or test webhook URL.
    SetWebhook {
        #[arg(value_parser = id_arg::<WorkflowId>)]
        id: WorkflowId,
        #[arg(long)]
        webhook_url: Option<String>,
        #[arg(long)]
        test_webhook_url: Option<String>,
    },
    /// Name the workflow's customer journeys otherwise than the company's display name (an empty
    /// name gives them the company's again).
    SetDisplayName {
        #[arg(value_parser = id_arg::<WorkflowId>)]
        id: WorkflowId,
        name: String,
    },
    /// Send a `verification.test` event to the workflow's (live) webhook URL.
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
            test_webhook_url,
            rules,
        } => {
            if let Some(url) = &webhook_url {
                checked(ctx, "webhook-url", url)?;
            }
            if let Some(url) = &test_webhook_url {
                checked(ctx, "test-webhook-url", url)?;
            }
            let rules: WorkflowRules = match rules {
                Some(r) => serde_json::from_str(&r).map_err(|e| RepoError::Invalid {
                    field: "rules",
                    message: format!("--rules is not valid rules JSON: {e}"),
                })?,
                None => WorkflowRules::default(),
            };
            let keys = match test_webhook_url {
                Some(_) => Some(ctx.keys()?),
                None => None,
            };
            let (created, secret) = ctx
                .store
                .write(move |tx| {
                    let created = workflows::create(tx, &company, &name, category, webhook_url.as_deref(), &rules, false, now)?;
                    match (test_webhook_url, keys) {
                        (Some(url), Some(keys)) => {
                            let id = &created.workflow.id;
                            let created = workflows::set_test_webhook_url(tx, &company, id, Some(&url))?;
                            Ok((created, companies::make_test_secret(tx, &company, &keys, now)?))
                        }
                        _ => Ok::<_, RepoError>((created, None)),
                    }
                })
                .await?;
            Ok(output::print(ctx.json, &with_new_secret(&created, secret)?))
        }
        Command::SetDisplayName { id, name } => {
            let name = match name.trim() {
                "" => None,
                given => Some(DisplayName::parse(given).map_err(|e| RepoError::Invalid {
                    field: "name",
                    message: format!("the display name {}", e.message),
                })?),
            };
            let shown = name.as_ref().map(|n| n.as_str().to_owned());
            let workflow = id.clone();
            ctx.store
                .write(move |tx| {
                    let company = workflows::get_any(tx, &workflow)?.company_id;
                    workflows::set_display_name(tx, &company, &workflow, name.as_ref())
                })
                .await?;
            Ok(output::print(ctx.json, &json!({ "id": id, "displayName": shown })))
        }
        Command::SetWebhook {
            id,
            webhook_url,
            test_webhook_url,
        } => {
            if webhook_url.is_none() && test_webhook_url.is_none() {
                return Err(RepoError::Invalid {
                    field: "webhook-url",
                    message: "give --webhook-url and/or --test-webhook-url (an empty value removes it)".into(),
                });
            }
            let live = optional(ctx, "webhook-url", webhook_url)?;
            let test = optional(ctx, "test-webhook-url", test_webhook_url)?;
            let keys = match &test {
                Some(Some(_)) => Some(ctx.keys()?),
                _ => None,
            };
            let (updated, secret) = ctx
                .store
                .write(move |tx| {
                    let company = workflows::get_any(tx, &id)?.company_id;
                    if let Some(url) = live {
                        workflows::set_webhook_url(tx, &company, &id, url.as_deref())?;
                    }
                    let mut secret = None;
                    if let Some(url) = test {
                        workflows::set_test_webhook_url(tx, &company, &id, url.as_deref())?;
                        if let Some(keys) = keys {
                            secret = companies::make_test_secret(tx, &company, &keys, now)?;
                        }
                    }
                    Ok::<_, RepoError>((workflows::get(tx, &company, &id)?, secret))
                })
                .await?;
            Ok(output::print(ctx.json, &with_new_secret(&updated, secret)?))
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

/// A destination the notifier will accept, or the refusal naming the option.
fn checked(ctx: &Ctx, field: &'static str, url: &str) -> Result<(), RepoError> {
    notifier::validate_url(url, &ctx.config.webhook_allow_hosts)
        .map(|_| ())
        .map_err(|e| RepoError::Invalid {
            field,
            message: e.to_string(),
        })
}

/// An option of `set-webhook`: absent (unchanged), empty (removed) or a checked URL.
fn optional(ctx: &Ctx, field: &'static str, value: Option<String>) -> Result<Option<Option<String>>, RepoError> {
    match value.as_deref().map(str::trim) {
        None => Ok(None),
        Some("") => Ok(Some(None)),
        Some(url) => {
            checked(ctx, field, url)?;
            Ok(Some(Some(url.to_owned())))
        }
    }
}

/// The workflow, with the test secret made for it this once (`testWebhookSecret`).
fn with_new_secret(workflow: &WorkflowDetail, secret: Option<String>) -> Result<serde_json::Value, RepoError> {
    let mut value = serde_json::to_value(workflow)?;
    if let Some(secret) = secret {
        value["testWebhookSecret"] = json!(secret);
    }
    Ok(value)
}
