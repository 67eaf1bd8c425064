//! Usage metering: only succeeded batch documents and completed journeys count as acts.

use super::error::RepoError;
use crate::ids::CompanyId;
use rusqlite::{params, Connection};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub company_id: CompanyId,
    pub month: String,
    pub acts: i64,
    pub batch_documents: i64,
    pub journeys: i64,
}

/// Acts of a month (`YYYY-MM`, by completion time, UTC).
pub fn for_month(c: &Connection, company: &CompanyId, month: &str) -> Result<Usage, RepoError> {
    let valid = month.len() == 7 && chrono::NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d").is_ok();
    if !valid {
        return Err(RepoError::Invalid {
            field: "month",
            message: "month must be YYYY-MM".into(),
        });
    }
    super::companies::get(c, company)?;
    let pattern = format!("{month}-%");
    let batch_documents: i64 = c.query_row(
        "SELECT count(*) FROM batch_items WHERE company_id = ?1 AND status = 'succeeded' AND finished_at LIKE ?2",
        params![company.as_str(), pattern],
        |r| r.get(0),
    )?;
    let journeys: i64 = c.query_row(
        "SELECT count(*) FROM consultations WHERE company_id = ?1 AND verification_id IS NOT NULL AND created_at LIKE ?2",
        params![company.as_str(), pattern],
        |r| r.get(0),
    )?;
    Ok(Usage {
        company_id: company.clone(),
        month: month.to_owned(),
        acts: batch_documents + journeys,
        batch_documents,
        journeys,
    })
}
