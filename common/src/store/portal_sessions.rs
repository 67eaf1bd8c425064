//! Portal sessions (PORTAL.md, Security): found by the hash of their cookie's secret, never by the
//! secret itself; 30 minutes idle and 12 hours absolute; ended on the server by sign-out, revoke,
//! a role change or a disabled member. Each carries the CSRF token of the member's forms.

use super::error::{stored, stored_time, RepoError};
use super::members::{self, Member, MemberState};
use chrono::{DateTime, Duration, Utc};
use domain::ids::{MemberId, PortalSessionId};
use rusqlite::{params, Connection, OptionalExtension, Row};

/// A session unused this long ends.
pub const IDLE: Duration = Duration::minutes(30);
/// No session outlives this, used or not.
pub const ABSOLUTE: Duration = Duration::hours(12);
/// `last_seen_at` is written at most this often, so reading pages costs no write each time.
pub const TOUCH_EVERY: Duration = Duration::seconds(60);

/// A live session and whose it is.
#[derive(Debug, Clone)]
pub struct PortalSession {
    pub id: PortalSessionId,
    pub member: Member,
    pub csrf_token: String,
    /// The password was right; the member's TOTP code is still awaited.
    pub second_factor_due: bool,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
}

/// Where a new session comes from, as the member's list shows it.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub ip: Option<String>,
    pub user_agent: Option<String>,
}

/// Opens a session for `member` whose cookie secret hashes to `token_hash`.
pub fn start(
    tx: &Connection,
    member: &Member,
    token_hash: &[u8],
    csrf_token: &str,
    second_factor_due: bool,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<PortalSessionId, RepoError> {
    let id = PortalSessionId::generate(now);
    let user_agent = origin.user_agent.as_deref().map(|ua| ua.chars().take(200).collect::<String>());
    tx.execute(
        "INSERT INTO portal_sessions (token_hash, id, member_id, company_id, csrf_token, second_factor_due, ip, user_agent, created_at, last_seen_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
        params![
            token_hash,
            id.as_str(),
            member.id.as_str(),
            member.company_id.as_str(),
            csrf_token,
            second_factor_due,
            origin.ip,
            user_agent,
            domain::time::format(now)
        ],
    )?;
    Ok(id)
}

const COLUMNS: &str = "id, member_id, csrf_token, second_factor_due, ip, user_agent, created_at, last_seen_at";

/// A session as SQLite holds it, before its columns are checked.
struct SessionRow {
    id: String,
    member_id: String,
    csrf_token: String,
    second_factor_due: bool,
    ip: Option<String>,
    user_agent: Option<String>,
    created_at: String,
    last_seen_at: String,
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: r.get(0)?,
        member_id: r.get(1)?,
        csrf_token: r.get(2)?,
        second_factor_due: r.get(3)?,
        ip: r.get(4)?,
        user_agent: r.get(5)?,
        created_at: r.get(6)?,
        last_seen_at: r.get(7)?,
    })
}

/// The session if it is alive at `now`: not ended, not idle or too old, its member not disabled.
fn alive(c: &Connection, row: SessionRow, now: DateTime<Utc>) -> Result<Option<PortalSession>, RepoError> {
    let (created_at, last_seen_at) = (stored_time(&row.created_at)?, stored_time(&row.last_seen_at)?);
    if now - last_seen_at >= IDLE || now - created_at >= ABSOLUTE {
        return Ok(None);
    }
    let member = members::get_any(c, &stored(&row.member_id)?)?;
    if member.state != MemberState::Active {
        return Ok(None);
    }
    Ok(Some(PortalSession {
        id: stored(&row.id)?,
        member,
        csrf_token: row.csrf_token,
        second_factor_due: row.second_factor_due,
        ip: row.ip,
        user_agent: row.user_agent,
        created_at,
        last_seen_at,
    }))
}

/// The live session whose cookie secret hashes to `token_hash`.
pub fn find(c: &Connection, token_hash: &[u8], now: DateTime<Utc>) -> Result<Option<PortalSession>, RepoError> {
    let row = c
        .query_row(
            &format!("SELECT {COLUMNS} FROM portal_sessions WHERE token_hash = ?1 AND ended_at IS NULL"),
            [token_hash],
            from_row,
        )
        .optional()?;
    match row {
        Some(row) => alive(c, row, now),
        None => Ok(None),
    }
}

/// Whether `session` was last seen long enough ago that this visit must be written.
pub fn needs_touch(session: &PortalSession, now: DateTime<Utc>) -> bool {
    now - session.last_seen_at >= TOUCH_EVERY
}

/// Records a visit, which keeps the session from going idle.
pub fn touch(tx: &Connection, token_hash: &[u8], now: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE portal_sessions SET last_seen_at = ?2 WHERE token_hash = ?1 AND ended_at IS NULL",
        params![token_hash, domain::time::format(now)],
    )?;
    Ok(())
}

/// Ends the session of this cookie (sign-out, or the password step replaced by a full session).
pub fn end(tx: &Connection, token_hash: &[u8], now: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE portal_sessions SET ended_at = ?2 WHERE token_hash = ?1 AND ended_at IS NULL",
        params![token_hash, domain::time::format(now)],
    )?;
    Ok(())
}

/// Ends one of `member`'s sessions from their list; another member's session is not found.
pub fn revoke(tx: &Connection, member: &MemberId, id: &PortalSessionId, now: DateTime<Utc>) -> Result<(), RepoError> {
    let n = tx.execute(
        "UPDATE portal_sessions SET ended_at = ?3 WHERE id = ?1 AND member_id = ?2 AND ended_at IS NULL",
        params![id.as_str(), member.as_str(), domain::time::format(now)],
    )?;
    if n == 0 {
        return Err(RepoError::NotFound);
    }
    Ok(())
}

/// Ends every session of `member` (disabled, role changed, password changed elsewhere).
pub fn end_all(tx: &Connection, member: &MemberId, now: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE portal_sessions SET ended_at = ?2 WHERE member_id = ?1 AND ended_at IS NULL",
        params![member.as_str(), domain::time::format(now)],
    )?;
    Ok(())
}

/// Ends every session of `member` but the one of this cookie (after a password change).
pub fn end_others(tx: &Connection, member: &MemberId, keep: &[u8], now: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE portal_sessions SET ended_at = ?3 WHERE member_id = ?1 AND token_hash != ?2 AND ended_at IS NULL",
        params![member.as_str(), keep, domain::time::format(now)],
    )?;
    Ok(())
}

/// The member's live sessions, newest first.
pub fn list(c: &Connection, member: &MemberId, now: DateTime<Utc>) -> Result<Vec<PortalSession>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM portal_sessions WHERE member_id = ?1 AND ended_at IS NULL AND second_factor_due = 0
         ORDER BY created_at DESC LIMIT 100"
    ))?;
    let rows = stmt.query_map([member.as_str()], from_row)?.collect::<Result<Vec<_>, _>>()?;
    let mut live = Vec::new();
    for row in rows {
        if let Some(session) = alive(c, row, now)? {
            live.push(session);
        }
    }
    Ok(live)
}

/// Forgets up to `limit` sessions started before `before`, oldest first (by
/// `portal_sessions_by_age`); how many it forgot. The caller's cut-off is at least [`ABSOLUTE`]
/// ago, so every session it takes has ended, signed out or not.
pub fn forget_ended(tx: &Connection, before: DateTime<Utc>, limit: u32) -> Result<usize, RepoError> {
    Ok(tx
        .prepare_cached(
            "DELETE FROM portal_sessions WHERE rowid IN
                (SELECT rowid FROM portal_sessions WHERE created_at < ?1 ORDER BY created_at LIMIT ?2)",
        )?
        .execute(params![domain::time::format(before), limit])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, memory};
    use domain::team::{Email, Role};

    fn member(conn: &Connection) -> Member {
        let co = company(conn);
        let m = members::invite(conn, &co, &Email::parse("s@example.fr").unwrap(), Role::Viewer, Utc::now()).unwrap();
        members::set_password(conn, &m.id, "$argon2id$fake").unwrap();
        members::get(conn, &co, &m.id).unwrap()
    }

    #[test]
    fn a_session_ends_when_idle_too_old_or_signed_out() {
        let conn = memory();
        let m = member(&conn);
        let now = Utc::now();
        start(&conn, &m, b"h1", "csrf", false, &Origin::default(), now).unwrap();
        assert!(find(&conn, b"h1", now + IDLE - Duration::seconds(1)).unwrap().is_some());
        assert!(find(&conn, b"h1", now + IDLE).unwrap().is_none(), "idle");
        touch(&conn, b"h1", now + Duration::minutes(29)).unwrap();
        assert!(
            find(&conn, b"h1", now + Duration::minutes(58)).unwrap().is_some(),
            "a visit keeps it"
        );
        assert!(find(&conn, b"h1", now + ABSOLUTE).unwrap().is_none(), "absolute");
        end(&conn, b"h1", now).unwrap();
        assert!(find(&conn, b"h1", now).unwrap().is_none(), "signed out");
    }

    #[test]
    fn a_member_revokes_only_their_own_sessions() {
        let conn = memory();
        let m = member(&conn);
        let now = Utc::now();
        let id = start(&conn, &m, b"h1", "csrf", false, &Origin::default(), now).unwrap();
        start(&conn, &m, b"h2", "csrf", false, &Origin::default(), now).unwrap();
        assert_eq!(list(&conn, &m.id, now).unwrap().len(), 2);
        let stranger = MemberId::generate(now);
        assert!(matches!(revoke(&conn, &stranger, &id, now), Err(RepoError::NotFound)));
        revoke(&conn, &m.id, &id, now).unwrap();
        assert!(find(&conn, b"h1", now).unwrap().is_none());
        end_others(&conn, &m.id, b"h3", now).unwrap();
        assert!(list(&conn, &m.id, now).unwrap().is_empty());
    }

    #[test]
    fn a_disabled_member_has_no_session() {
        let conn = memory();
        let m = member(&conn);
        let now = Utc::now();
        start(&conn, &m, b"h1", "csrf", false, &Origin::default(), now).unwrap();
        conn.execute("UPDATE members SET disabled_at = 'x'", []).unwrap();
        assert!(find(&conn, b"h1", now).unwrap().is_none());
    }

    #[test]
    fn sessions_older_than_the_cut_off_are_forgotten_in_bounded_batches() {
        let conn = memory();
        let m = member(&conn);
        let now = Utc::now();
        for (hash, age) in [(b"h1", 10), (b"h2", 9), (b"h3", 8), (b"h4", 1)] {
            start(&conn, &m, hash, "csrf", false, &Origin::default(), now - Duration::days(age)).unwrap();
        }
        let cut = now - Duration::days(5);
        let rounds: Vec<usize> = (0..3).map(|_| forget_ended(&conn, cut, 2).unwrap()).collect();
        assert_eq!(rounds, [2, 1, 0]);
        let left: Vec<Vec<u8>> = conn
            .prepare("SELECT token_hash FROM portal_sessions")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(left, [b"h4".to_vec()], "the recent session stays");
    }
}
