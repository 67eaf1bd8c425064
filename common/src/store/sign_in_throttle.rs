//! The sign-in throttle (PORTAL.md, Security): failures are counted per account and per client
//! address; past a threshold each new failure locks the scope for twice as long as the previous
//! one. Accounts that do not exist are counted the same way, so a lock reveals nothing.

use super::error::{stored_time, RepoError};
use crate::team::Email;
use chrono::{DateTime, Duration, Utc};
use rusqlite::{params, Connection, OptionalExtension};
use std::net::IpAddr;

/// What failures are counted against.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Account(&'a Email),
    Address(IpAddr),
}

impl Scope<'_> {
    fn key(&self) -> String {
        match self {
            Scope::Account(email) => format!("account:{email}"),
            Scope::Address(ip) => format!("address:{ip}"),
        }
    }

    /// Failures allowed before the first lock: an address may carry several people.
    fn threshold(&self) -> u32 {
        match self {
            Scope::Account(_) => 5,
            Scope::Address(_) => 20,
        }
    }
}

/// The first lock; each further failure doubles it, up to [`LONGEST_LOCK`].
const FIRST_LOCK: Duration = Duration::seconds(30);
const LONGEST_LOCK: Duration = Duration::minutes(15);
/// Failures older than this are forgotten.
const MEMORY: Duration = Duration::hours(1);

/// Until when the longest lock among `scopes` holds, if one does.
pub fn locked_until(c: &Connection, scopes: &[Scope<'_>], now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, RepoError> {
    let mut until = None;
    for scope in scopes {
        let row: Option<Option<String>> = c
            .query_row("SELECT locked_until FROM sign_in_failures WHERE scope = ?1", [scope.key()], |r| {
                r.get(0)
            })
            .optional()?;
        if let Some(Some(t)) = row {
            let t = stored_time(&t)?;
            if t > now && until.is_none_or(|u| t > u) {
                until = Some(t);
            }
        }
    }
    Ok(until)
}

/// Counts a failure against `scope` and locks it when past its threshold.
pub fn failed(tx: &Connection, scope: Scope<'_>, now: DateTime<Utc>) -> Result<(), RepoError> {
    let previous: Option<(u32, String)> = tx
        .query_row(
            "SELECT failures, last_failure_at FROM sign_in_failures WHERE scope = ?1",
            [scope.key()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let failures = match previous {
        Some((n, last)) if stored_time(&last)? > now - MEMORY => n + 1,
        _ => 1,
    };
    let locked_until = (failures >= scope.threshold()).then(|| {
        let doublings = (failures - scope.threshold()).min(10);
        now + (FIRST_LOCK * 2i32.pow(doublings)).min(LONGEST_LOCK)
    });
    tx.execute(
        "INSERT INTO sign_in_failures (scope, failures, locked_until, last_failure_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (scope) DO UPDATE SET failures = ?2, locked_until = ?3, last_failure_at = ?4",
        params![
            scope.key(),
            failures,
            locked_until.map(crate::time::format),
            crate::time::format(now)
        ],
    )?;
    Ok(())
}

/// Forgets the failures of `scope` after a successful sign-in.
pub fn succeeded(tx: &Connection, scope: Scope<'_>) -> Result<(), RepoError> {
    tx.execute("DELETE FROM sign_in_failures WHERE scope = ?1", [scope.key()])?;
    Ok(())
}

/// Forgets up to `limit` scopes whose failures are past [`MEMORY`] and no longer locked; how
/// many it forgot. Without it the failures of every e-mail ever tried would stay.
pub fn forget_expired(tx: &Connection, now: DateTime<Utc>, limit: u32) -> Result<usize, RepoError> {
    let now_text = crate::time::format(now);
    Ok(tx
        .prepare_cached(
            "DELETE FROM sign_in_failures WHERE rowid IN (SELECT rowid FROM sign_in_failures
                WHERE last_failure_at < ?1 AND (locked_until IS NULL OR locked_until < ?2) LIMIT ?3)",
        )?
        .execute(params![crate::time::format(now - MEMORY), now_text, limit])?)
}

#[cfg(test)]
mod forget_tests {
    use super::*;
    use crate::store::test_support::memory;

    #[test]
    fn forgotten_once_past_memory_and_unlocked_in_bounded_batches() {
        let conn = memory();
        let now = Utc::now();
        for n in 0..3 {
            failed(&conn, Scope::Address(format!("192.0.2.{n}").parse().unwrap()), now - MEMORY * 2).unwrap();
        }
        let recent = Email::parse("recent@example.fr").unwrap();
        failed(&conn, Scope::Account(&recent), now - Duration::minutes(5)).unwrap();
        let rounds: Vec<usize> = (0..3).map(|_| forget_expired(&conn, now, 2).unwrap()).collect();
        assert_eq!(rounds, [2, 1, 0]);
        let left: Vec<String> = conn
            .prepare("SELECT scope FROM sign_in_failures")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(left, [Scope::Account(&recent).key()], "the recent failure is remembered");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::memory;

    #[test]
    fn five_failures_lock_the_account_with_growing_delays() {
        let conn = memory();
        let email = Email::parse("a@example.fr").unwrap();
        let account = Scope::Account(&email);
        let now = crate::time::parse(&crate::time::format(Utc::now())).unwrap(); // as stored: milliseconds
        for _ in 0..4 {
            failed(&conn, account, now).unwrap();
        }
        assert_eq!(locked_until(&conn, &[account], now).unwrap(), None);
        failed(&conn, account, now).unwrap();
        assert_eq!(locked_until(&conn, &[account], now).unwrap(), Some(now + FIRST_LOCK));
        failed(&conn, account, now).unwrap();
        assert_eq!(locked_until(&conn, &[account], now).unwrap(), Some(now + FIRST_LOCK * 2));
        assert_eq!(locked_until(&conn, &[account], now + FIRST_LOCK * 2).unwrap(), None, "a lock ends");
        succeeded(&conn, account).unwrap();
        failed(&conn, account, now).unwrap();
        assert_eq!(
            locked_until(&conn, &[account], now).unwrap(),
            None,
            "a success forgets the failures"
        );
    }

    #[test]
    fn an_address_is_locked_apart_and_later() {
        let conn = memory();
        let address = Scope::Address("192.0.2.7".parse().unwrap());
        let now = Utc::now();
        for _ in 0..19 {
            failed(&conn, address, now).unwrap();
        }
        assert_eq!(locked_until(&conn, &[address], now).unwrap(), None);
        failed(&conn, address, now).unwrap();
        assert!(locked_until(&conn, &[address], now).unwrap().is_some());
        let other = Scope::Address("192.0.2.8".parse().unwrap());
        assert_eq!(locked_until(&conn, &[other], now).unwrap(), None);
    }
}
