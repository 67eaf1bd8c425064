//! The figures of the portal's dashboard (PORTAL.md, Dashboard), each one query on an index of
//! only what it counts, so the page stays fast with a company's whole history in the database.

use super::error::{stored, RepoError};
use super::usage;
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use domain::ids::CompanyId;
use domain::vocabulary::Verdict;
use rusqlite::{params, Connection};

/// What the dashboard shows.
#[derive(Debug, Clone)]
pub struct Figures {
    pub acts_this_month: i64,
    pub acts_last_month: i64,
    pub reviews_waiting: i64,
    pub open_batches: i64,
    /// Webhook events retrying, dead-lettered or refused with 410.
    pub failing_deliveries: i64,
    /// Results per day and verdict over the last 30 days, oldest day first; every day present.
    pub verdicts_per_day: Vec<DayCounts>,
}

/// The results of one day, per verdict (verdicts without results are absent).
#[derive(Debug, Clone)]
pub struct DayCounts {
    pub day: NaiveDate,
    pub verdicts: Vec<(Verdict, i64)>,
}

/// The month `YYYY-MM` of `t`, and of the month before.
fn months(t: DateTime<Utc>) -> (String, String) {
    let this = t.format("%Y-%m").to_string();
    let first = NaiveDate::from_ymd_opt(t.year(), t.month(), 1).unwrap_or(t.date_naive());
    let previous = (first - Duration::days(1)).format("%Y-%m").to_string();
    (this, previous)
}

pub fn figures(c: &Connection, company: &CompanyId, now: DateTime<Utc>) -> Result<Figures, RepoError> {
    let (this, previous) = months(now);
    let count = |sql: &str| -> Result<i64, RepoError> { Ok(c.query_row(sql, [company.as_str()], |r| r.get(0))?) };
    Ok(Figures {
        acts_this_month: usage::for_month(c, company, &this)?.acts,
        acts_last_month: usage::for_month(c, company, &previous)?.acts,
        reviews_waiting: count("SELECT COUNT(*) FROM consultations WHERE company_id = ?1 AND review_status = 'pending'")?,
        open_batches: count("SELECT COUNT(*) FROM batches WHERE company_id = ?1 AND status IN ('open', 'in_progress')")?,
        failing_deliveries: count("SELECT COUNT(*) FROM webhook_events WHERE company_id = ?1 AND status IN ('retrying', 'dead', 'gone')")?,
        verdicts_per_day: verdicts_per_day(c, company, now)?,
    })
}

fn verdicts_per_day(c: &Connection, company: &CompanyId, now: DateTime<Utc>) -> Result<Vec<DayCounts>, RepoError> {
    let first = now.date_naive() - Duration::days(29);
    let mut days: Vec<DayCounts> = (0..30)
        .map(|i| DayCounts {
            day: first + Duration::days(i),
            verdicts: Vec::new(),
        })
        .collect();
    let mut stmt = c.prepare(
        "SELECT substr(created_at, 1, 10), verdict, COUNT(*) FROM consultations
         WHERE company_id = ?1 AND created_at >= ?2 GROUP BY 1, 2",
    )?;
    let rows = stmt
        .query_map(params![company.as_str(), first.format("%Y-%m-%d").to_string()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    for (day, verdict, n) in rows {
        let Ok(day) = NaiveDate::parse_from_str(&day, "%Y-%m-%d") else {
            continue;
        };
        if let Some(counts) = days.iter_mut().find(|d| d.day == day) {
            counts.verdicts.push((stored(&verdict)?, n));
        }
    }
    Ok(days)
}
