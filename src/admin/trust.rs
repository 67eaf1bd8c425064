//! `sceau admin trust import FILE` and `sceau admin trust show`: the ANTS trust list the engine verifies
//! seals with, updated without a rebuild. Workers read it at start: restart them after an import.

use super::Ctx;
use crate::output;
use chrono::Utc;
use common::blobs::BlobStore;
use common::store::RepoError;
use std::path::PathBuf;
use std::process::ExitCode;
use worker::analysis::twoddoc::{trust_import, trust_list};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Check a newer ANTS trust list (its XML signature with xmlsec1, against the ANTS signer root
    /// shipped in the binary) and make it the list in use, under the data directory. Refused, with
    /// nothing changed, when the signature does not verify or the list is older than the one in use.
    /// Running workers keep their list until they restart.
    Import {
        /// The trust list, as ANTS publishes it (tsl_signed.xml).
        file: PathBuf,
        /// A certificate (DER or PEM) between the list's signing certificate and the ANTS root, when
        /// the list does not carry it; repeatable.
        #[arg(long = "intermediate")]
        intermediates: Vec<PathBuf>,
    },
    /// The trust list in use: origin (shipped or imported), sequence number, issue date, next update.
    Show,
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let data_dir = ctx.config.data_dir.clone();
    match args.command {
        Command::Import { file, intermediates } => {
            let options = trust_import::ImportOptions {
                intermediates,
                ..trust_import::ImportOptions::default()
            };
            let imported = trust_import::import(&data_dir, &file, &options).map_err(|e| RepoError::Refused(e.to_string()))?;
            publish(ctx, &imported.path).await?;
            Ok(output::print(ctx.json, &imported))
        }
        Command::Show => {
            let list = trust_list::in_use(Some(&data_dir)).map_err(|e| RepoError::Refused(e.to_string()))?;
            let expired = list.summary.expired_at(Utc::now());
            let mut value = serde_json::to_value(&list.summary).map_err(|e| RepoError::Refused(e.to_string()))?;
            value["expired"] = expired.into();
            Ok(output::print(ctx.json, &value))
        }
    }
}

/// Hands the list just imported to the workers of other hosts, through the blob store (see
/// `worker::trust_sync`).
async fn publish(ctx: &Ctx, imported: &std::path::Path) -> Result<(), RepoError> {
    let unpublished = |e: String| RepoError::Refused(format!("imported here, but not handed to the workers: {e}"));
    let xml = std::fs::read_to_string(imported).map_err(|e| unpublished(e.to_string()))?;
    let blobs = BlobStore::open(&ctx.config.blob_location(), ctx.keys()?)
        .await
        .map_err(|e| unpublished(e.to_string()))?;
    worker::trust_sync::publish(&blobs, &xml)
        .await
        .map_err(|e| unpublished(e.to_string()))
}
