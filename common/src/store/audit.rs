//! The audit log (PORTAL.md, Audit log): every change made in the portal and every image viewed,
//! downloaded or exported, with who did it (member, API key or operator), from where and when.

use super::error::{stored, stored_time, RepoError};
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, MemberId};
use domain::team::{AuditAction, Email};
use rusqlite::{params, Connection};
use serde::Serialize;

/// Who acted.
#[derive(Debug, Clone, PartialEq)]
pub enum Actor {
    Member {
        id: MemberId,
        email: Email,
    },
    ApiKey {
        prefix: String,
    },
    /// A `sceau admin` command on the server.
    Operator,
}

/// Who acts and from which address: what every audited operation is given.
#[derive(Debug, Clone, PartialEq)]
pub struct Acting {
    pub actor: Actor,
    pub ip: Option<String>,
}

impl Acting {
    /// An operator's command on the server.
    pub fn operator() -> Self {
        Self {
            actor: Actor::Operator,
            ip: None,
        }
    }

    /// The row recording that this actor did `action` on `target`.
    pub fn entry(&self, action: AuditAction, target: impl Into<String>, at: DateTime<Utc>) -> AuditEntry {
        AuditEntry::new(action, target, &self.actor, self.ip.clone(), at)
    }

    /// The member acting, if a member is.
    pub fn member(&self) -> Option<&MemberId> {
        match &self.actor {
            Actor::Member { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// One row of the log.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub action: AuditAction,
    /// What was acted on: an id, or an id and a side (`CSL-…/recto`).
    pub target: String,
    /// The member's e-mail, the API key's prefix, or `operator`.
    pub actor: String,
    pub key_prefix: Option<String>,
    pub member_id: Option<MemberId>,
    pub ip: Option<String>,
    #[serde(with = "domain::time::serde_millis")]
    pub at: DateTime<Utc>,
}

impl AuditEntry {
    pub fn new(action: AuditAction, target: impl Into<String>, actor: &Actor, ip: Option<String>, at: DateTime<Utc>) -> Self {
        let (actor, key_prefix, member_id) = match actor {
            Actor::Member { id, email } => (email.to_string(), None, Some(id.clone())),
            Actor::ApiKey { prefix } => (prefix.clone(), Some(prefix.clone()), None),
            Actor::Operator => ("operator".to_owned(), None, None),
        };
        Self {
            action,
            target: target.into(),
            actor,
            key_prefix,
            member_id,
            ip,
            at,
        }
    }
}

pub fn record(tx: &Connection, company: &CompanyId, entry: &AuditEntry) -> Result<(), RepoError> {
    tx.execute(
        "INSERT INTO audit_log (company_id, action, target, key_prefix, member_id, actor_email, ip, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            company.as_str(),
            entry.action.as_str(),
            entry.target,
            entry.key_prefix,
            entry.member_id.as_ref().map(|m| m.as_str()),
            entry.member_id.as_ref().map(|_| entry.actor.as_str()),
            entry.ip,
            domain::time::format(entry.at)
        ],
    )?;
    Ok(())
}

/// Forgets up to `limit` entries recorded before `before`, oldest first (by `audit_by_time`);
/// how many it forgot. One bounded transaction each call.
pub fn forget_before(tx: &Connection, before: DateTime<Utc>, limit: u32) -> Result<usize, RepoError> {
    Ok(tx
        .prepare_cached("DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ?1 ORDER BY at LIMIT ?2)")?
        .execute(params![domain::time::format(before), limit])?)
}

/// Which rows a reader wants; every field narrows.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub action: Option<AuditAction>,
    /// An e-mail or key prefix, exactly.
    pub actor: Option<String>,
    /// Keyset: rows older than this one.
    pub before: Option<i64>,
}

/// The company's entries matching `filter`, newest first, each with its position for the next page.
pub fn list(c: &Connection, company: &CompanyId, filter: &Filter, limit: u32) -> Result<Vec<(i64, AuditEntry)>, RepoError> {
    let mut stmt = c.prepare(
        "SELECT id, action, target, key_prefix, member_id, actor_email, ip, at FROM audit_log
         WHERE company_id = ?1 AND (?2 IS NULL OR action = ?2)
           AND (?3 IS NULL OR actor_email = ?3 OR key_prefix = ?3 OR (?3 = 'operator' AND key_prefix IS NULL AND member_id IS NULL))
           AND (?4 IS NULL OR id < ?4)
         ORDER BY id DESC LIMIT ?5",
    )?;
    type Row = (
        i64,
        String,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        String,
    );
    let rows = stmt
        .query_map(
            params![
                company.as_str(),
                filter.action.map(|a| a.as_str()),
                filter.actor,
                filter.before,
                limit
            ],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            },
        )?
        .collect::<Result<Vec<Row>, _>>()?;
    rows.into_iter()
        .map(|(id, action, target, key_prefix, member_id, email, ip, at)| {
            let actor = email.or_else(|| key_prefix.clone()).unwrap_or_else(|| "operator".to_owned());
            Ok((
                id,
                AuditEntry {
                    action: stored(&action)?,
                    target,
                    actor,
                    key_prefix,
                    member_id: member_id.map(|m| stored(&m)).transpose()?,
                    ip,
                    at: stored_time(&at)?,
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, memory};
    use chrono::Months;

    #[test]
    fn entries_older_than_the_cut_off_are_forgotten_in_bounded_batches() {
        let c = memory();
        let co = company(&c);
        let now = Utc::now();
        let ages = [Months::new(15), Months::new(14), Months::new(14), Months::new(12)];
        for (n, age) in ages.into_iter().enumerate() {
            let at = now.checked_sub_months(age).unwrap();
            record(
                &c,
                &co,
                &Acting::operator().entry(AuditAction::SettingsChanged, format!("t{n}"), at),
            )
            .unwrap();
        }
        record(&c, &co, &Acting::operator().entry(AuditAction::SettingsChanged, "now", now)).unwrap();
        let cut = now.checked_sub_months(Months::new(13)).unwrap();
        let rounds: Vec<usize> = (0..3).map(|_| forget_before(&c, cut, 2).unwrap()).collect();
        assert_eq!(rounds, [2, 1, 0]);
        let left: Vec<String> = list(&c, &co, &Filter::default(), 10)
            .unwrap()
            .into_iter()
            .map(|(_, e)| e.target)
            .collect();
        assert_eq!(left, ["now", "t3"], "twelve months old and newer stay");
    }
}
