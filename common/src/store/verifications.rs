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
