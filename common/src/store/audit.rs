//! The audit log: image downloads (key prefix, IP, time) and operator actions.

use super::error::RepoError;
use crate::ids::CompanyId;
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub action: String,
    pub target: String,
    pub key_prefix: Option<String>,
    pub ip: Option<String>,
    pub at: String,
}

pub fn record(tx: &Connection, company: &CompanyId, entry: &AuditEntry) -> Result<(), RepoError> {
    tx.execute(
        "INSERT INTO audit_log (company_id, action, target, key_prefix, ip, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![company.as_str(), entry.action, entry.target, entry.key_prefix, entry.ip, entry.at],
    )?;
    Ok(())
}

pub fn entry(action: &str, target: &str, key_prefix: Option<&str>, ip: Option<String>, now: DateTime<Utc>) -> AuditEntry {
    AuditEntry {
        action: action.into(),
        target: target.into(),
        key_prefix: key_prefix.map(Into::into),
        ip,
        at: crate::time::format(now),
    }
}

/// The company's entries, newest first.
pub fn list(c: &Connection, company: &CompanyId, limit: u32) -> Result<Vec<AuditEntry>, RepoError> {
    let mut stmt = c.prepare("SELECT action, target, key_prefix, ip, at FROM audit_log WHERE company_id = ?1 ORDER BY id DESC LIMIT ?2")?;
    let rows = stmt.query_map(params![company.as_str(), limit], |r| {
        Ok(AuditEntry {
            action: r.get(0)?,
            target: r.get(1)?,
            key_prefix: r.get(2)?,
            ip: r.get(3)?,
            at: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}
