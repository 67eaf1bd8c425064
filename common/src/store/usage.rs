//! Usage metering: only succeeded batch documents and completed journeys count as acts. Each
//! count reads a partial index of only what counts (`items_succeeded_by_day`, `journeys_by_day`).

use super::error::RepoError;
use chrono::{Datelike, NaiveDate};
use domain::ids::CompanyId;
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

/// The first day of a month `YYYY-MM`.
fn first_day(month: &str) -> Result<NaiveDate, RepoError> {
    let parsed = (month.len() == 7)
        .then(|| NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d").ok())
        .flatten();
    parsed.ok_or_else(|| RepoError::Invalid {
        field: "month",
        message: "month must be YYYY-MM".into(),
    })
}

fn next_month(day: NaiveDate) -> NaiveDate {
    let (y, m) = if day.month() == 12 {
        (day.year() + 1, 1)
    } else {
        (day.year(), day.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(day)
}

/// Acts of a month (`YYYY-MM`, by completion time, UTC).
pub fn for_month(c: &Connection, company: &CompanyId, month: &str) -> Result<Usage, RepoError> {
    let first = first_day(month)?;
    Ok(months(c, company, first, first)?.remove(0))
}

/// Acts of each month from `from` to `to` (first days of months), oldest first, every month present.
pub fn months(c: &Connection, company: &CompanyId, from: NaiveDate, to: NaiveDate) -> Result<Vec<Usage>, RepoError> {
    super::companies::get(c, company)?;
    let (start, end) = (from.format("%Y-%m-%d").to_string(), next_month(to).format("%Y-%m-%d").to_string());
    let per_month = |sql: &str| -> Result<Vec<(String, i64)>, RepoError> {
        let mut stmt = c.prepare(sql)?;
        let rows = stmt
            .query_map(params![company.as_str(), start, end], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    };
    let documents = per_month(
        "SELECT substr(finished_at, 1, 7), COUNT(*) FROM batch_items
         WHERE company_id = ?1 AND status = 'succeeded' AND finished_at >= ?2 AND finished_at < ?3 GROUP BY 1",
    )?;
    let journeys = per_month(
        "SELECT substr(created_at, 1, 7), COUNT(*) FROM consultations
         WHERE company_id = ?1 AND verification_id IS NOT NULL AND created_at >= ?2 AND created_at < ?3 GROUP BY 1",
    )?;
    let mut out = Vec::new();
    let mut day = from;
    while day <= to {
        let month = day.format("%Y-%m").to_string();
        let find = |rows: &[(String, i64)]| rows.iter().find(|(m, _)| *m == month).map_or(0, |(_, n)| *n);
        let (batch_documents, journeys) = (find(&documents), find(&journeys));
        out.push(Usage {
            company_id: company.clone(),
            month,
            acts: batch_documents + journeys,
            batch_documents,
            journeys,
        });
        day = next_month(day);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, memory};

    #[test]
    fn every_month_of_the_range_is_present_and_a_bad_month_refused() {
        let conn = memory();
        let co = company(&conn);
        let from = NaiveDate::from_ymd_opt(2025, 11, 1).unwrap();
        let to = NaiveDate::from_ymd_opt(2026, 2, 1).unwrap();
        let months: Vec<String> = months(&conn, &co, from, to).unwrap().into_iter().map(|u| u.month).collect();
        assert_eq!(months, ["2025-11", "2025-12", "2026-01", "2026-02"]);
        assert!(matches!(for_month(&conn, &co, "2026-13"), Err(RepoError::Invalid { .. })));
        assert_eq!(for_month(&conn, &co, "2026-01").unwrap().acts, 0);
    }
}
