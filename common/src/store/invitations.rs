//! Invitations to join a company's team: single use, valid 7 days, kept only as the hash of their
//! token (the link itself is shown once to whoever invited, or e-mailed). A new invitation of the
//! same member replaces the previous one. Companies invite independently: an address may be
//! invited by several, and the first invitation accepted makes its account.

use super::error::{stored_time, RepoError};
use super::members::{self, Member, MemberState};
use chrono::{DateTime, Duration, Utc};
use domain::ids::{CompanyId, MemberId};
use rusqlite::{params, Connection, OptionalExtension};

/// How long an invitation link can be used.
pub const VALIDITY: Duration = Duration::days(7);

/// An invitation waiting for its member, as the Team page lists it.
#[derive(Debug, Clone)]
pub struct Pending {
    pub member: Member,
    pub expires_at: DateTime<Utc>,
}

/// Records the invitation of `member` whose token hashes to `token_hash`; returns when it expires.
pub fn create(
    tx: &Connection,
    member: &Member,
    token_hash: &[u8],
    invited_by: Option<&MemberId>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, RepoError> {
    if member.state != MemberState::Invited {
        return Err(RepoError::InvalidState(format!("{} has already joined", member.email)));
    }
    revoke_for(tx, &member.id)?;
    let expires_at = now + VALIDITY;
    tx.execute(
        "INSERT INTO invitations (token_hash, member_id, company_id, invited_by, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            token_hash,
            member.id.as_str(),
            member.company_id.as_str(),
            invited_by.map(|m| m.as_str()),
            domain::time::format(now),
            domain::time::format(expires_at)
        ],
    )?;
    Ok(expires_at)
}

/// The member an unused, unexpired invitation is for; `NotFound` for any other token, so a page
/// never tells an expired link from one that never existed.
pub fn open(c: &Connection, token_hash: &[u8], now: DateTime<Utc>) -> Result<Member, RepoError> {
    let row: Option<(String, String, Option<String>)> = c
        .query_row(
            "SELECT member_id, expires_at, used_at FROM invitations WHERE token_hash = ?1",
            [token_hash],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((member_id, expires_at, None)) = row else {
        return Err(RepoError::NotFound);
    };
    if stored_time(&expires_at)? <= now {
        return Err(RepoError::NotFound);
    }
    let member = members::get_any(c, &super::error::stored(&member_id)?)?;
    if member.state != MemberState::Invited {
        return Err(RepoError::NotFound);
    }
    Ok(member)
}

/// Uses the invitation: the member gets their password and becomes active. `NotFound`, as for an
/// expired link, when the address already has an account (in another company, which a company
/// inviting it is not told): an address signs in to one account, and an invitation never takes
/// over or blocks one. The invitation stays unused; it expires or is revoked as any other.
pub fn accept(tx: &Connection, token_hash: &[u8], password_hash: &str, now: DateTime<Utc>) -> Result<Member, RepoError> {
    let member = open(tx, token_hash, now)?;
    if members::account_holds(tx, &member.email, &member.id)? {
        return Err(RepoError::NotFound);
    }
    tx.execute(
        "UPDATE invitations SET used_at = ?2 WHERE token_hash = ?1",
        params![token_hash, domain::time::format(now)],
    )?;
    members::set_password(tx, &member.id, password_hash)?;
    members::get(tx, &member.company_id, &member.id)
}

/// Forgets the member's unused invitations.
pub fn revoke_for(tx: &Connection, member: &MemberId) -> Result<(), RepoError> {
    tx.execute(
        "DELETE FROM invitations WHERE member_id = ?1 AND used_at IS NULL",
        [member.as_str()],
    )?;
    Ok(())
}

/// The company's members still invited, with when their link expires (an expired one shows as such).
pub fn pending(c: &Connection, company: &CompanyId) -> Result<Vec<Pending>, RepoError> {
    let mut stmt = c.prepare(
        "SELECT i.member_id, MAX(i.expires_at) FROM invitations i JOIN members m ON m.id = i.member_id
         WHERE i.company_id = ?1 AND i.used_at IS NULL AND m.password_hash IS NULL AND m.disabled_at IS NULL
         GROUP BY i.member_id ORDER BY MAX(i.created_at)",
    )?;
    let rows = stmt
        .query_map([company.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(id, expires_at)| {
            Ok(Pending {
                member: members::get(c, company, &super::error::stored(&id)?)?,
                expires_at: stored_time(&expires_at)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, memory};
    use domain::team::{Email, Role};

    #[test]
    fn an_invitation_is_used_once_and_expires() {
        let conn = memory();
        let co = company(&conn);
        let now = Utc::now();
        let m = members::invite(&conn, &co, &Email::parse("z@example.fr").unwrap(), Role::Owner, now).unwrap();
        create(&conn, &m, b"old", None, now).unwrap();
        create(&conn, &m, b"new", None, now).unwrap();
        assert!(matches!(open(&conn, b"old", now), Err(RepoError::NotFound)), "replaced");
        assert_eq!(pending(&conn, &co).unwrap().len(), 1);
        assert!(matches!(open(&conn, b"new", now + VALIDITY), Err(RepoError::NotFound)), "expired");
        let joined = accept(&conn, b"new", "$argon2id$fake", now).unwrap();
        assert_eq!(joined.state, MemberState::Active);
        assert!(
            matches!(accept(&conn, b"new", "$argon2id$other", now), Err(RepoError::NotFound)),
            "single use"
        );
        assert!(pending(&conn, &co).unwrap().is_empty());
    }

    /// Two companies invite the same address: neither invitation tells or blocks the other, and
    /// the second accepted fails as an expired link would, leaving the first company's member
    /// untouched.
    #[test]
    fn an_address_invited_by_two_companies_makes_one_account() {
        let conn = memory();
        let (a, b) = (company(&conn), company(&conn));
        let (now, email) = (Utc::now(), Email::parse("bob@example.fr").unwrap());
        let in_b = members::invite(&conn, &b, &email, Role::Viewer, now).unwrap();
        create(&conn, &in_b, b"b", None, now).unwrap();
        let in_a = members::invite(&conn, &a, &email, Role::Owner, now).expect("a pending invitation elsewhere changes nothing");
        create(&conn, &in_a, b"a", None, now).unwrap();
        let joined = accept(&conn, b"b", "$argon2id$bob", now).unwrap();
        assert_eq!(joined.company_id, b);

        assert!(matches!(accept(&conn, b"a", "$argon2id$squat", now), Err(RepoError::NotFound)));
        let account = members::credentials(&conn, &email).unwrap().unwrap();
        assert_eq!(
            (account.member.id, account.password_hash.as_deref()),
            (joined.id.clone(), Some("$argon2id$bob")),
            "B's member keeps their account and password"
        );
        let again = members::invite(&conn, &a, &email, Role::Viewer, now).expect("A may invite again, as if nothing existed");
        assert_eq!(again.id, in_a.id);
        assert_eq!(pending(&conn, &a).unwrap().len(), 1, "A still sees its invitation pending");

        // Once B disables its member, the address is free for the next invitation accepted.
        members::disable(&conn, &b, &joined.id, now).unwrap();
        create(&conn, &again, b"a2", None, now).unwrap();
        assert_eq!(accept(&conn, b"a2", "$argon2id$new", now).unwrap().company_id, a);
        assert_eq!(members::credentials(&conn, &email).unwrap().unwrap().member.company_id, a);
    }
}
