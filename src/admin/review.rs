//! `sceau admin review list|show|accept|reject`: settle doubtful results. The verdict never
//! changes; settling emits `verification.reviewed`.

use super::{id_arg, Ctx};
use crate::output;
use common::ids::{CompanyId, ConsultationId};
use common::store::{consultations, reviews, RepoError};
use serde_json::json;
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
    /// The findings of one result (never its images).
    Show {
        #[arg(value_parser = id_arg::<ConsultationId>)]
        id: ConsultationId,
    },
    /// Accept a result under review.
    Accept {
        #[arg(value_parser = id_arg::<ConsultationId>)]
        id: ConsultationId,
    },
    /// Reject a result under review.
    Reject {
        #[arg(value_parser = id_arg::<ConsultationId>)]
        id: ConsultationId,
    },
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    let settle = |id: ConsultationId, accepted: bool| async move {
        let (consultation, event) = ctx.store.write(move |tx| reviews::settle(tx, &id, accepted, now)).await?;
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
        Command::Show { id } => {
            let (company, consultation) = ctx.store.read(move |c| consultations::get_any(c, &id)).await?;
            Ok(output::print(
                ctx.json,
                &json!({ "companyId": company, "consultation": consultation }),
            ))
        }
        Command::Accept { id } => settle(id, true).await,
        Command::Reject { id } => settle(id, false).await,
    }
}
