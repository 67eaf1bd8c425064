//! `sceau admin review list|show|accept|reject`: settle doubtful results. The verdict never
//! changes; settling emits `verification.reviewed`. `show` prints the findings and which images
//! exist, never image bytes: a reviewer who needs to look at them asks `--export DIR` for files.

mod export;

use super::{id_arg, Ctx};
use crate::output;
use common::store::audit::Acting;
use common::store::consultations::{self, ImageRef};
use common::store::reviews::{self, Decision, Settlement};
use common::store::RepoError;
use domain::ids::{CompanyId, ConsultationId};
use domain::vocabulary::ImageSide;
use export::{export, ExportError};
use serde::Serialize;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Results waiting for a review, oldest first.
    List {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: Option<CompanyId>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// The findings of one result and which images it has (never their content).
    Show {
        #[arg(value_parser = id_arg::<ConsultationId>)]
        id: ConsultationId,
        /// Write the decrypted images into DIR as `<id>-<side>.<ext>` (DIR is created if missing;
        /// existing files are never overwritten). Each export is recorded in the audit log.
        #[arg(long, value_name = "DIR")]
        export: Option<PathBuf>,
    },
    /// Accept a result under review.
    Accept {
        #[arg(value_parser = id_arg::<ConsultationId>)]
        id: ConsultationId,
        /// Why, kept with the decision and shown in the portal.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Reject a result under review (a comment is required).
    Reject {
        #[arg(value_parser = id_arg::<ConsultationId>)]
        id: ConsultationId,
        /// Why, kept with the decision and shown in the portal.
        #[arg(long)]
        comment: Option<String>,
    },
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    let settle = |id: ConsultationId, decision: Decision, comment: Option<String>| async move {
        let settlement = Settlement::new(decision, comment.as_deref())?;
        let (consultation, event) = ctx
            .store
            .write(move |tx| reviews::settle(tx, None, &id, &settlement, &Acting::operator(), now))
            .await?;
        Ok::<_, RepoError>(output::print(ctx.json, &json!({ "consultation": consultation, "eventId": event })))
    };
    match args.command {
        Command::List { company, limit } => {
            let data = ctx
                .store
                .read(move |c| consultations::pending_reviews(c, company.as_ref(), limit))
                .await?;
            Ok(output::print(ctx.json, &json!({ "data": data })))
        }
        Command::Show { id, export } => show(ctx, id, export).await,
        Command::Accept { id, comment } => settle(id, Decision::Accept, comment).await,
        Command::Reject { id, comment } => settle(id, Decision::Reject, comment).await,
    }
}

/// Whether a side has an image, and whether retention already removed it.
#[derive(Serialize)]
struct Presence {
    side: ImageSide,
    purged: bool,
}

async fn show(ctx: &Ctx, id: ConsultationId, export_dir: Option<PathBuf>) -> Result<ExitCode, RepoError> {
    let lookup = id.clone();
    let (company, consultation, images) = ctx
        .store
        .read(move |c| {
            let (company, consultation) = consultations::get_any(c, &lookup)?;
            let images = consultations::images(c, &company, &lookup)?;
            Ok::<_, RepoError>((company, consultation, images))
        })
        .await?;
    let presence: Vec<Presence> = images
        .iter()
        .map(|(side, image)| Presence {
            side: *side,
            purged: matches!(image, ImageRef::Purged),
        })
        .collect();
    let mut printed = json!({ "companyId": company, "consultation": consultation, "images": presence });
    if let Some(dir) = export_dir {
        match export(ctx, &company, &id, images, &dir).await {
            Ok(exported) => printed["exported"] = json!(exported),
            Err(ExportError::Repo(e)) => return Err(e),
            Err(e) => return Ok(output::fail(&e.to_string())),
        }
    }
    Ok(output::print(ctx.json, &printed))
}
