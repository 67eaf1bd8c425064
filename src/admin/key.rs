//! `sceau admin key create|list|revoke`. A key is printed once and stored only as a hash. The
//! operator's keys hold every scope unless told otherwise (`--no-images`); the list shows each
//! key's scopes and who made it.

use super::{id_arg, Ctx};
use crate::output;
use common::store::api_keys::{self, KeyInfo, KeySpec};
use common::store::{companies, RepoError};
use domain::ids::CompanyId;
use domain::key_scopes::KeyScopes;
use domain::vocabulary::Mode;
use serde_json::{json, Value};
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
        /// Without the `images` scope: the key reads results but not their images nor their
        /// certificates (403 `forbidden`).
        #[arg(long)]
        no_images: bool,
    },
    /// The company's keys, live and test, revoked ones included: prefix, access, scopes, creator.
    List {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: CompanyId,
    },
    /// Revoke a key by its prefix (the first 16 characters).
    Revoke { prefix: String },
}

/// A key as the list prints it: never its secret, which is not stored.
fn describe(k: &KeyInfo) -> Value {
    json!({
        "prefix": k.prefix, "readOnly": k.read_only, "mode": k.mode, "scopes": k.scopes,
        "createdBy": k.created_by.as_deref().unwrap_or("operator"),
        "createdAt": domain::time::format(k.created_at),
        "lastUsedAt": k.last_used_at.map(domain::time::format),
        "revokedAt": k.revoked_at.map(domain::time::format),
    })
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    match args.command {
        Command::Create {
            company,
            read_only,
            test,
            no_images,
        } => {
            let owner = company.clone();
            let spec = KeySpec {
                read_only,
                mode: if test { Mode::Test } else { Mode::Live },
                scopes: if no_images { KeyScopes::NONE } else { KeyScopes::all() },
            };
            let master = ctx.keys()?;
            // The company's first test key comes with the test account's signing secret, shown
            // this once, so that its test events can be verified from the start.
            let (key, test_secret) = ctx
                .store
                .write(move |tx| {
                    let key = api_keys::create(tx, &owner, spec, None, now)?;
                    let test_secret = match spec.mode {
                        Mode::Test => companies::make_test_secret(tx, &owner, &master, now)?,
                        Mode::Live => None,
                    };
                    Ok::<_, RepoError>((key, test_secret))
                })
                .await?;
            let mut made = json!({
                "key": key.secret, "prefix": key.prefix, "readOnly": read_only, "mode": spec.mode,
                "scopes": spec.scopes, "companyId": company,
            });
            if let Some(secret) = test_secret {
                made["testWebhookSecret"] = json!(secret);
            }
            Ok(output::print(ctx.json, &made))
        }
        Command::List { company } => {
            let keys = ctx.store.read(move |c| api_keys::list(c, &company)).await?;
            Ok(output::print(
                ctx.json,
                &json!({ "data": keys.iter().map(describe).collect::<Vec<_>>() }),
            ))
        }
        Command::Revoke { prefix } => {
            let p = prefix.clone();
            ctx.store.write(move |tx| api_keys::revoke(tx, None, &p, now)).await?;
            Ok(output::print(ctx.json, &json!({ "prefix": prefix, "revoked": true })))
        }
    }
}
