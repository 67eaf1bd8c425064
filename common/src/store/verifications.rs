//! Verification sessions: the link handed to a customer. The token is random (256 bits), stored
//! hashed, and the session's status is computed against its expiry.

use super::error::{stored, RepoError};
use crate::domain::VerificationStatus;
use crate::ids::{CompanyId, VerificationId, WorkflowId};
use crate::model::VerificationSession;
use chrono::{DateTime, Duration, Utc};
use rusqlite::{params, Connection, OptionalExtension, Row};

pub fn token_hash(token: &str) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref().to_vec()
}

const COLUMNS: &str = "id, workflow_id, external_ref, status, consultation_id, expires_at, created_at";

type RawRow = (String, String, Option<String>, String, Option<String>, String, String);

fn raw(r: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
}

/// The session as its owner sees it; `url` is rebuilt by the caller from the public base.
fn build(r: RawRow, url: String, now: DateTime<Utc>) -> Result<VerificationSession, RepoError> {
    let mut status: VerificationStatus = stored(&r.3)?;
    let open = matches!(status, VerificationStatus::Created | VerificationStatus::Started);
    if open && r.5 <= crate::time::format(now) {
        status = VerificationStatus::Expired;
    }
    Ok(VerificationSession {
        id: stored(&r.0)?,
        verification_url: url,
        external_ref: r.2,
        workflow_id: stored(&r.1)?,
        expires_at: r.5,
        status,
        consultation_id: r.4.as_deref().map(stored).transpose()?,
        created_at: r.6,
    })
}

pub struct NewSession<'a> {
    pub company: &'a CompanyId,
    pub workflow_id: &'a WorkflowId,
    pub external_ref: Option<&'a str>,
    pub expires_in_minutes: i64,
    pub token: &'a str,
    /// The token sealed by the master key, so the link can be shown again.
    pub token_sealed: Vec<u8>,
    pub url: String,
}

pub fn create(tx: &Connection, id: &VerificationId, n: NewSession<'_>, now: DateTime<Utc>) -> Result<VerificationSession, RepoError> {
    super::workflows::get(tx, n.company, n.workflow_id)?;
    let expires = now + Duration::minutes(n.expires_in_minutes);
    tx.execute(
        "INSERT INTO verifications (id, company_id, workflow_id, external_ref, token_hash, token_sealed, status, expires_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'created', ?7, ?8)",
        params![id.as_str(), n.company.as_str(), n.workflow_id.as_str(), n.external_ref, token_hash(n.token), n.token_sealed, crate::time::format(expires), crate::time::format(now)],
    )?;
    let row = tx.query_row(&format!("SELECT {COLUMNS} FROM verifications WHERE id = ?1"), [id.as_str()], raw)?;
    build(row, n.url, now)
}

/// A session of the company with its sealed token; the caller rebuilds `verificationUrl`.
pub fn get(
    c: &Connection,
    company: &CompanyId,
    id: &VerificationId,
    now: DateTime<Utc>,
) -> Result<(VerificationSession, Vec<u8>), RepoError> {
    let (row, sealed) = c
        .query_row(
            &format!("SELECT {COLUMNS}, token_sealed FROM verifications WHERE id = ?1 AND company_id = ?2"),
            [id.as_str(), company.as_str()],
            |r| Ok((raw(r)?, r.get::<_, Vec<u8>>(7)?)),
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    Ok((build(row, String::new(), now)?, sealed))
}

/// The associated data binding a sealed journey token to its session.
pub fn token_context(id: &VerificationId) -> String {
    format!("verification={id}")
}

/// The session behind a journey link, if any.
pub fn by_token(c: &Connection, token: &str, now: DateTime<Utc>) -> Result<Option<VerificationSession>, RepoError> {
    let row = c
        .query_row(
            &format!("SELECT {COLUMNS} FROM verifications WHERE token_hash = ?1"),
            [token_hash(token)],
            raw,
        )
        .optional()?;
    row.map(|r| build(r, String::new(), now)).transpose()
}

/// Records the analysis of a journey: the consultation with the workflow's decision, the session
/// completed, and `verification.completed` to the workflow's webhook URL (if it has one). Returns
/// `None` when the session already has its result (a redelivered job changes nothing).
pub fn record_result(
    tx: &Connection,
    id: &VerificationId,
    consultation_id: &crate::ids::ConsultationId,
    report: &crate::analysis::AnalysisReport,
    analyzed_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Option<crate::model::Consultation>, RepoError> {
    let row: Option<(String, String, Option<String>, String)> = tx
        .query_row(
            "SELECT company_id, workflow_id, external_ref, status FROM verifications WHERE id = ?1",
            [id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let (company, workflow_id, external_ref, status) = row.ok_or(RepoError::NotFound)?;
    if status == VerificationStatus::Completed.as_str() {
        return Ok(None);
    }
    let company: CompanyId = stored(&company)?;
    let workflow = super::workflows::get(tx, &company, &stored(&workflow_id)?)?;
    let (decision, review_status) = crate::decision::decide(report, &workflow.rules);
    super::consultations::insert(
        tx,
        &super::consultations::NewConsultation {
            id: consultation_id,
            company: &company,
            workflow_id: &workflow.workflow.id,
            external_ref: external_ref.as_deref(),
            category: workflow.workflow.document_category,
            report,
            decision: Some(decision),
            review_status,
            batch_item_id: None,
            verification_id: Some(id.as_str()),
            analyzed_at,
            now,
        },
    )?;
    tx.execute(
        "UPDATE verifications SET status = 'completed', consultation_id = ?2 WHERE id = ?1",
        params![id.as_str(), consultation_id.as_str()],
    )?;
    let consultation = super::consultations::get(tx, &company, consultation_id)?;
    if let Some(url) = &workflow.webhook_url {
        super::events::emit(
            tx,
            &company,
            "verification.completed",
            url,
            super::reviews::envelope(&consultation),
            now,
        )?;
    }
    Ok(Some(consultation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::AnalysisReport;
    use crate::domain::{Decision, DocumentCategory, Licence, ReviewStatus, Verdict};
    use crate::ids::ConsultationId;
    use crate::model::WorkflowRules;

    #[tokio::test]
    async fn a_journey_result_is_recorded_once_with_its_decision_and_event() {
        let dir = std::env::temp_dir().join(format!("sceau-vrf-{}", crate::ids::random_hex(8)));
        let store = crate::store::Store::open(&dir.join("db.sqlite")).unwrap();
        let recorded = store
            .write(|tx| {
                let now = Utc::now();
                let company = super::super::companies::create(tx, "Acme", Licence::Group, now)?.company.id;
                let rules = WorkflowRules {
                    min_age: Some(18),
                    ..Default::default()
                };
                let wf = super::super::workflows::create(
                    tx,
                    &company,
                    "KYC",
                    DocumentCategory::Identite,
                    Some("https://hooks.example.com/x"),
                    &rules,
                    false,
                    now,
                )?;
                let id = VerificationId::generate(now);
                let new = NewSession {
                    company: &company,
                    workflow_id: &wf.workflow.id,
                    external_ref: Some("d-1"),
                    expires_in_minutes: 60,
                    token: "tok",
                    token_sealed: vec![1],
                    url: String::new(),
                };
                create(tx, &id, new, now)?;
                let report = AnalysisReport {
                    verdict: Verdict::Conforme,
                    document_type: "passeport".into(),
                    document_country: Some("FRA".into()),
                    anomalies: vec![],
                    two_d_doc: None,
                    holder_age: Some(16),
                    pages: 1,
                    checks: vec![],
                };
                let first = record_result(tx, &id, &ConsultationId::generate(now), &report, now, now)?;
                let again = record_result(tx, &id, &ConsultationId::generate(now), &report, now, now)?;
                let events: i64 = tx.query_row(
                    "SELECT count(*) FROM webhook_events WHERE event_type = 'verification.completed'",
                    [],
                    |r| r.get(0),
                )?;
                let (session, _) = get(tx, &company, &id, now)?;
                Ok::<_, RepoError>((first, again.is_none(), events, session.status))
            })
            .await
            .unwrap();
        let (first, second_ignored, events, status) = recorded;
        let first = first.unwrap();
        assert_eq!(first.verdict, Verdict::Conforme, "the verdict is the engine's");
        assert_eq!(first.decision, Some(Decision::Refuse), "minAge applies to the decision");
        assert_eq!(first.review_status, None::<ReviewStatus>);
        assert!(second_ignored);
        assert_eq!(events, 1);
        assert_eq!(status, VerificationStatus::Completed);
        let _ = std::fs::remove_dir_all(dir);
    }
}
