//! Human review of doubtful results: settling a pending review emits `verification.reviewed` to
//! the workflow's webhook URL. The verdict never changes.

use super::error::RepoError;
use super::{consultations, events, workflows};
use crate::ids::ConsultationId;
use crate::model::Consultation;
use chrono::{DateTime, Utc};
use rusqlite::Connection;
use serde_json::{json, Map, Value};

/// The common envelope fields of verification events for a consultation.
pub fn envelope(c: &Consultation) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("consultationId".into(), json!(c.id));
    m.insert("workflowId".into(), json!(c.workflow_id));
    m.insert("externalRef".into(), json!(c.external_ref));
    m.insert("verdict".into(), json!(c.verdict));
    m.insert("decision".into(), json!(c.decision));
    m
}

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
            let mut fields = envelope(&consultation);
            fields.insert(
                "review".into(),
                json!({ "status": consultation.review_status, "reviewedAt": crate::time::format(now) }),
            );
            Some(events::emit(tx, &company, "verification.reviewed", &url, fields, now)?.to_string())
        }
        None => None,
    };
    Ok((consultation, event))
}
