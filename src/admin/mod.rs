//! `sceau admin …`: operator commands, one file per group. They open the same database as the
//! service and work while it runs (SQLite serialises the writers; events go through the outbox,
//! which the running service relays).

mod audit;
mod company;
mod key;
mod review;
mod trust;
mod usage;
mod user;
mod webhook;
mod workflow;

use crate::output;
use async_trait::async_trait;
use common::config::Config;
use common::crypto::envelope::MasterKeys;
use common::store::{companies, RepoError, Store};
use domain::ids::CompanyId;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct AdminArgs {
    /// Print one JSON object instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(clap::Subcommand)]
enum AdminCommand {
    /// Companies: create, list, show, set, rotate-secret.
    Company(company::Args),
    /// API keys: create, list, revoke.
    Key(key::Args),
    /// Workflows: create, list, test-webhook.
    Workflow(workflow::Args),
    /// Human review of doubtful results: list, show, accept, reject.
    Review(review::Args),
    /// Acts counted for a company in a month.
    Usage(usage::Args),
    /// The audit log of a company (image downloads).
    Audit(audit::Args),
    /// Webhook events: list, dead letters, replay.
    Webhook(webhook::Args),
    /// Members of a company's portal team: invite, list, disable.
    User(user::Args),
    /// The ANTS trust list: import a newer one (signature checked), show the one in use.
    Trust(trust::Args),
}

/// What every command gets.
pub struct Ctx {
    pub store: Store,
    pub config: Config,
    pub json: bool,
}

impl Ctx {
    /// The master keys, for the commands that seal (webhook secrets); created with the data
    /// directory when this command is the first to run, as `serve` would.
    pub fn keys(&self) -> Result<Arc<MasterKeys>, RepoError> {
        MasterKeys::load_or_create(&self.config.master_key_path())
            .map(Arc::new)
            .map_err(|e| RepoError::Refused(e.to_string()))
    }
}

pub async fn run(config: Config, args: AdminArgs) -> ExitCode {
    let store = match Store::open(&config.database_path()) {
        Ok(s) => s,
        Err(e) => return output::fail(&format!("cannot open the database {}: {e}", config.database_path().display())),
    };
    let ctx = Ctx {
        store,
        config,
        json: args.json,
    };
    let result = match args.command {
        AdminCommand::Company(a) => company::run(&ctx, a).await,
        AdminCommand::Key(a) => key::run(&ctx, a).await,
        AdminCommand::Workflow(a) => workflow::run(&ctx, a).await,
        AdminCommand::Review(a) => review::run(&ctx, a).await,
        AdminCommand::Usage(a) => usage::run(&ctx, a).await,
        AdminCommand::Audit(a) => audit::run(&ctx, a).await,
        AdminCommand::Webhook(a) => webhook::run(&ctx, a).await,
        AdminCommand::User(a) => user::run(&ctx, a).await,
        AdminCommand::Trust(a) => trust::run(&ctx, a).await,
    };
    result.unwrap_or_else(|e| output::fail(&describe(&e)))
}

/// One clear line for a refused command.
fn describe(e: &RepoError) -> String {
    match e {
        RepoError::NotFound => "no such record".into(),
        other => other.to_string(),
    }
}

/// Parses an id argument, as a clap value parser.
pub fn id_arg<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("`{s}` is not a valid id"))
}

/// Webhook signing secrets read from the store and opened with the master key, for the notifier.
pub struct StoreSecrets {
    pub store: Store,
    pub keys: Arc<MasterKeys>,
}

#[async_trait]
impl notifier::SecretSource for StoreSecrets {
    async fn signing_secrets(&self, company: &CompanyId) -> Result<Vec<String>, notifier::SecretError> {
        let (company, keys) = (company.clone(), self.keys.clone());
        match self
            .store
            .read(move |c| companies::signing_secrets(c, &company, &keys, chrono::Utc::now()))
            .await
        {
            Ok(s) => Ok(s),
            Err(RepoError::NotFound) => Err(notifier::SecretError::Missing),
            Err(e) => Err(notifier::SecretError::Unavailable(Box::new(e))),
        }
    }
}
