//! Human review of doubtful results: settling a pending review emits `verification.reviewed` to
//! the workflow's webhook URL. The verdict never changes.

use super::error::RepoError;
use super::{consultations, events, workflows};
use crate::domain::ReviewStatus;
use crate::ids::ConsultationId;
use crate::model::Consultation;
use crate::webhook::{ConsultationOutcome, Review, WebhookEvent};
use chrono::{DateTime, Utc};
use rusqlite::Connection;

/// Accepts or rejects; returns the settled consultation and the event id when one was emitted.
pub fn settle(
    tx: &Connection,
    id: &ConsultationId,
    accepted: bool,
    now: DateTime<Utc>,
) -> Result<(Consultation, Option<String>), RepoError> {
    let (company, consultation) = consultations::settle_review(tx, id, accepted, now)?;
    let workflow = workflows::get(tx, &company, &consultation.workflow_id)?;
    let event = match workflow.webhook_url {
        Some(url) => {
            let event = WebhookEvent::VerificationReviewed {
                consultation: ConsultationOutcome::of(&consultation),
                review: Review {
                    status: if accepted { ReviewStatus::Accepted } else { ReviewStatus::Rejected },
                    reviewed_at: now,
                },
            };
            Some(events::emit(tx, &company, &url, event, None, now)?.to_string())
        }
        None => None,
    };
    Ok((consultation, event))
}
