//! The sign-in throttle (PORTAL.md, Security): failures are counted per account and per client
//! address; past a threshold each new failure locks the scope for twice as long as the previous
//! one. An attempt is counted, and the locks checked, in one write before its password or code is
//! checked, then undone when the check succeeds: concurrent guesses cannot all pass a check that
//! none of them has yet failed. E-mails that match no member are counted in a bounded number of
//! keyed buckets, so a lock reveals nothing and a spray of made-up addresses cannot grow the table.

use super::error::{stored_time, RepoError};
use chrono::{DateTime, Duration, Utc};
use domain::team::Email;
use ring::hmac;
use rusqlite::{params, Connection, OptionalExtension};
use std::sync::OnceLock;

/// What failures are counted against.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// The e-mail address typed (a member's, or one that matches nobody).
    Account(&'a Email),
    /// The client's address as the edge's limits key it (an IPv6 client by its /64).
    Address(&'a str),
}

impl Scope<'_> {
    /// The row of the scope. An unknown e-mail shares its row with the others of its bucket: a
    /// member's row per member, at most [`UNKNOWN_BUCKETS`] more for everything else typed.
    fn key(&self, c: &Connection) -> Result<String, RepoError> {
        Ok(match self {
            Scope::Account(email) => {
                let known: bool = c.query_row("SELECT EXISTS (SELECT 1 FROM members WHERE email = ?1)", [email.as_str()], |r| {
                    r.get(0)
                })?;
                if known {
                    format!("account:{email}")
                } else {
                    format!("unknown:{:04x}", unknown_bucket(email))
                }
            }
            Scope::Address(key) => format!("address:{key}"),
        })
    }

    /// Failures allowed before the first lock: an address may carry several people.
    fn threshold(&self) -> u32 {
        match self {
            Scope::Account(_) => 5,
            Scope::Address(_) => 20,
        }
    }
}

/// How many rows the e-mails that match no member share (the bucket is 16 bits of a keyed hash).
pub const UNKNOWN_BUCKETS: u32 = 1 << 16;

/// The bucket of an e-mail that matches no member: keyed with a secret of this process, so that
/// nobody outside can choose addresses that share a bucket with another.
fn unknown_bucket(email: &Email) -> u16 {
    static KEY: OnceLock<hmac::Key> = OnceLock::new();
    let key = KEY.get_or_init(|| {
        let mut secret = [0u8; 32];
        domain::ids::random_bytes(&mut secret);
        hmac::Key::new(hmac::HMAC_SHA256, &secret)
    });
    let tag = hmac::sign(key, email.as_str().as_bytes());
    let bytes = tag.as_ref();
    u16::from_be_bytes([bytes[0], bytes[1]])
}

/// The first lock; each further failure doubles it, up to [`LONGEST_LOCK`].
const FIRST_LOCK: Duration = Duration::seconds(30);
const LONGEST_LOCK: Duration = Duration::minutes(15);
/// Failures older than this are forgotten (and their rows deleted by [`forget_expired`]).
const MEMORY: Duration = Duration::hours(1);

/// What [`attempt`] decided.
#[derive(Debug)]
pub enum Attempt {
    /// Counted as a failure until [`undo`] says the check succeeded.
    Admitted(Admitted),
    /// A scope is locked until then; nothing was counted, nothing may be checked.
    Locked(DateTime<Utc>),
}

/// An attempt counted in advance: what [`undo`] takes back.
#[derive(Debug, Clone)]
pub struct Admitted {
    counted: Vec<Counted>,
}

#[derive(Debug, Clone)]
struct Counted {
    key: String,
    /// The lock the row had before (text as stored), and the one this attempt wrote.
    previous_lock: Option<String>,
    written_lock: Option<String>,
}

/// One row of `sign_in_failures`.
struct Failures {
    failures: u32,
    locked_until: Option<String>,
    last_failure_at: DateTime<Utc>,
}

fn read(c: &Connection, key: &str) -> Result<Option<Failures>, RepoError> {
    let row: Option<(u32, Option<String>, String)> = c
        .query_row(
            "SELECT failures, locked_until, last_failure_at FROM sign_in_failures WHERE scope = ?1",
            [key],
            |r| Ok((r.get("failures")?, r.get("locked_until")?, r.get("last_failure_at")?)),
        )
        .optional()?;
    row.map(|(failures, locked_until, last)| {
        Ok(Failures {
            failures,
            locked_until,
            last_failure_at: stored_time(&last)?,
        })
    })
    .transpose()
}

/// Until when the longest lock among `scopes` holds, if one does: a read, for refusing at once
/// what [`attempt`] would refuse. Only [`attempt`] admits.
pub fn locked_until(c: &Connection, scopes: &[Scope<'_>], now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, RepoError> {
    let mut until = None;
    for scope in scopes {
        if let Some(t) = read(c, &scope.key(c)?)?.and_then(|row| row.locked_until) {
            let t = stored_time(&t)?;
            if t > now && until.is_none_or(|u| t > u) {
                until = Some(t);
            }
        }
    }
    Ok(until)
}

/// Counts an attempt against every one of `scopes` as a failure, unless one of them is locked;
/// a scope that reaches its threshold is locked by this very attempt. Run it in a write
/// transaction, before the check it stands for: the count and the locks are then one decision,
/// so no more checks run than the thresholds allow, however many attempts arrive at once.
pub fn attempt(tx: &Connection, scopes: &[Scope<'_>], now: DateTime<Utc>) -> Result<Attempt, RepoError> {
    let mut rows = Vec::with_capacity(scopes.len());
    let mut until: Option<DateTime<Utc>> = None;
    for scope in scopes {
        let key = scope.key(tx)?;
        let row = read(tx, &key)?;
        if let Some(t) = row.as_ref().and_then(|r| r.locked_until.as_deref()) {
            let t = stored_time(t)?;
            if t > now && until.is_none_or(|u| t > u) {
                until = Some(t);
            }
        }
        rows.push((scope.threshold(), key, row));
    }
    if let Some(until) = until {
        return Ok(Attempt::Locked(until));
    }
    let counted = rows
        .into_iter()
        .map(|(threshold, key, row)| count(tx, key, threshold, row, now))
        .collect::<Result<_, _>>()?;
    Ok(Attempt::Admitted(Admitted { counted }))
}

/// One more failure on the row `key`, locked once past `threshold`.
fn count(tx: &Connection, key: String, threshold: u32, row: Option<Failures>, now: DateTime<Utc>) -> Result<Counted, RepoError> {
    let (failures, previous_lock) = match row {
        Some(r) if r.last_failure_at > now - MEMORY => (r.failures + 1, r.locked_until),
        Some(r) => (1, r.locked_until),
        None => (1, None),
    };
    let written_lock = (failures >= threshold).then(|| {
        let doublings = (failures - threshold).min(10);
        domain::time::format(now + (FIRST_LOCK * 2i32.pow(doublings)).min(LONGEST_LOCK))
    });
    tx.execute(
        "INSERT INTO sign_in_failures (scope, failures, locked_until, last_failure_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (scope) DO UPDATE SET failures = ?2, locked_until = ?3, last_failure_at = ?4",
        params![key, failures, written_lock, domain::time::format(now)],
    )?;
    Ok(Counted {
        key,
        previous_lock,
        written_lock,
    })
}

/// Takes back an admitted attempt whose check succeeded: one failure fewer on each scope, and
/// the lock it set (if no later attempt replaced it) back to what it was.
pub fn undo(tx: &Connection, admitted: &Admitted) -> Result<(), RepoError> {
    for counted in &admitted.counted {
        tx.execute(
            "UPDATE sign_in_failures SET failures = failures - 1,
                 locked_until = CASE WHEN locked_until IS ?2 THEN ?3 ELSE locked_until END
             WHERE scope = ?1",
            params![counted.key, counted.written_lock, counted.previous_lock],
        )?;
        tx.execute("DELETE FROM sign_in_failures WHERE scope = ?1 AND failures <= 0", [&counted.key])?;
    }
    Ok(())
}

/// Forgets the failures of `scope` after a complete sign-in.
pub fn succeeded(tx: &Connection, scope: Scope<'_>) -> Result<(), RepoError> {
    tx.execute("DELETE FROM sign_in_failures WHERE scope = ?1", [scope.key(tx)?])?;
    Ok(())
}

/// Forgets up to `limit` scopes whose failures are past [`MEMORY`] and no longer locked; how
/// many it forgot. Without it the failures of every e-mail ever tried would stay.
pub fn forget_expired(tx: &Connection, now: DateTime<Utc>, limit: u32) -> Result<usize, RepoError> {
    let now_text = domain::time::format(now);
    Ok(tx
        .prepare_cached(
            "DELETE FROM sign_in_failures WHERE rowid IN (SELECT rowid FROM sign_in_failures
                WHERE last_failure_at < ?1 AND (locked_until IS NULL OR locked_until < ?2) LIMIT ?3)",
        )?
        .execute(params![domain::time::format(now - MEMORY), now_text, limit])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, memory};

    /// `now` as stored: milliseconds.
    fn stored_now() -> DateTime<Utc> {
        domain::time::parse(&domain::time::format(Utc::now())).unwrap()
    }

    fn admitted(c: &Connection, scopes: &[Scope<'_>], now: DateTime<Utc>) -> Admitted {
        match attempt(c, scopes, now).unwrap() {
            Attempt::Admitted(a) => a,
            Attempt::Locked(until) => panic!("locked until {until}"),
        }
    }

    fn rows(c: &Connection) -> Vec<(String, u32)> {
        let mut stmt = c.prepare("SELECT scope, failures FROM sign_in_failures ORDER BY scope").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn the_fifth_attempt_locks_the_account_with_growing_delays() {
        let conn = memory();
        let email = Email::parse("a@example.fr").unwrap();
        let account = Scope::Account(&email);
        let now = stored_now();
        for _ in 0..4 {
            admitted(&conn, &[account], now);
        }
        assert_eq!(locked_until(&conn, &[account], now).unwrap(), None);
        // The fifth is still checked, and locks for whoever comes next.
        admitted(&conn, &[account], now);
        assert_eq!(locked_until(&conn, &[account], now).unwrap(), Some(now + FIRST_LOCK));
        assert!(matches!(attempt(&conn, &[account], now).unwrap(), Attempt::Locked(t) if t == now + FIRST_LOCK));
        let later = now + FIRST_LOCK;
        admitted(&conn, &[account], later);
        assert_eq!(locked_until(&conn, &[account], later).unwrap(), Some(later + FIRST_LOCK * 2));
        assert_eq!(
            locked_until(&conn, &[account], later + FIRST_LOCK * 2).unwrap(),
            None,
            "a lock ends"
        );
        succeeded(&conn, account).unwrap();
        admitted(&conn, &[account], later);
        assert_eq!(
            locked_until(&conn, &[account], later).unwrap(),
            None,
            "a success forgets the failures"
        );
    }

    #[test]
    fn a_locked_scope_counts_nothing_on_the_others() {
        let conn = memory();
        let email = Email::parse("a@example.fr").unwrap();
        let (account, address) = (Scope::Account(&email), Scope::Address("192.0.2.7"));
        let now = stored_now();
        for _ in 0..5 {
            admitted(&conn, &[account, address], now);
        }
        assert!(matches!(attempt(&conn, &[account, address], now).unwrap(), Attempt::Locked(_)));
        assert_eq!(
            rows(&conn),
            vec![
                ("address:192.0.2.7".to_owned(), 5),
                ("unknown:".to_owned() + &format!("{:04x}", unknown_bucket(&email)), 5)
            ]
        );
    }

    #[test]
    fn an_undone_attempt_leaves_the_count_and_lock_it_found() {
        let conn = memory();
        let email = Email::parse("a@example.fr").unwrap();
        let (account, address) = (Scope::Account(&email), Scope::Address("2001:db8:1:2::/64"));
        let now = stored_now();
        for _ in 0..4 {
            admitted(&conn, &[account, address], now);
        }
        // The fifth locks; its check succeeded: the lock goes with it.
        let fifth = admitted(&conn, &[account, address], now);
        assert!(locked_until(&conn, &[account], now).unwrap().is_some());
        undo(&conn, &fifth).unwrap();
        assert_eq!(locked_until(&conn, &[account, address], now).unwrap(), None);
        assert!(rows(&conn).iter().all(|(_, n)| *n == 4), "{:?}", rows(&conn));
        // A single attempt undone leaves no row at all.
        let other = Email::parse("b@example.fr").unwrap();
        let conn = memory();
        let once = admitted(&conn, &[Scope::Account(&other)], now);
        undo(&conn, &once).unwrap();
        assert!(rows(&conn).is_empty());
    }

    #[test]
    fn an_address_is_locked_apart_and_later() {
        let conn = memory();
        let address = Scope::Address("192.0.2.7");
        let now = Utc::now();
        for _ in 0..20 {
            admitted(&conn, &[address], now);
        }
        assert!(locked_until(&conn, &[address], now).unwrap().is_some());
        let other = Scope::Address("192.0.2.8");
        assert_eq!(locked_until(&conn, &[other], now).unwrap(), None);
    }

    /// A member's failures have a row of their own; made-up e-mails share at most 65,536 rows,
    /// the same way whatever address is typed (a lock reveals nothing).
    #[test]
    fn members_have_their_row_and_unknown_emails_share_buckets() {
        let conn = memory();
        let co = company(&conn);
        let member = Email::parse("member@example.fr").unwrap();
        crate::store::members::invite(&conn, &co, &member, domain::team::Role::Viewer, Utc::now()).unwrap();
        let now = stored_now();
        admitted(&conn, &[Scope::Account(&member)], now);
        for i in 0..300 {
            admitted(
                &conn,
                &[Scope::Account(&Email::parse(&format!("nobody{i}@example.fr")).unwrap())],
                now,
            );
        }
        let rows = rows(&conn);
        assert!(rows.contains(&("account:member@example.fr".to_owned(), 1)), "{rows:?}");
        let unknown: Vec<_> = rows.iter().filter(|(k, _)| k != "account:member@example.fr").collect();
        assert!(
            unknown
                .iter()
                .all(|(k, _)| k.len() == "unknown:".len() + 4 && k.starts_with("unknown:")),
            "{unknown:?}"
        );
        assert_eq!(unknown.iter().map(|(_, n)| n).sum::<u32>(), 300);
        assert_eq!(UNKNOWN_BUCKETS, u32::from(u16::MAX) + 1, "a bucket is 16 bits");
    }

    #[test]
    fn forgotten_rows_are_purged_in_batches() {
        let conn = memory();
        let now = stored_now();
        for i in 0..5 {
            admitted(
                &conn,
                &[Scope::Address(&format!("192.0.2.{i}"))],
                now - MEMORY - Duration::seconds(1),
            );
        }
        admitted(&conn, &[Scope::Address("198.51.100.1")], now - MEMORY + Duration::seconds(1));
        assert_eq!(forget_expired(&conn, now, 3).unwrap(), 3);
        assert_eq!(forget_expired(&conn, now, 3).unwrap(), 2);
        assert_eq!(forget_expired(&conn, now, 3).unwrap(), 0);
        assert_eq!(rows(&conn), vec![("address:198.51.100.1".to_owned(), 1)]);
    }
}
