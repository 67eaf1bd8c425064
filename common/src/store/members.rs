//! The members of a client company's team (PORTAL.md): invited by e-mail with a role, active once
//! they chose a password, disabled rather than deleted so the audit log keeps naming them. A
//! company always keeps an active owner: the last one can be neither demoted nor disabled. An
//! address is a member of a company at most once, and signs in to one account: the active member
//! that holds it (several companies may have invited it meanwhile).

use super::error::{stored, stored_time, RepoError};
use super::StoreError;
use chrono::{DateTime, Utc};
use domain::ids::{CompanyId, MemberId};
use domain::team::{Email, Role};
use rusqlite::{params, Connection, OptionalExtension, Row};

/// A member as the portal shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub id: MemberId,
    pub company_id: CompanyId,
    pub email: Email,
    pub role: Role,
    pub state: MemberState,
    /// Whether the member enrolled a TOTP second factor.
    pub two_factor: bool,
    /// The language the member chose for the portal (`fr`, `en`); `None` follows the browser.
    pub lang: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// Where a member is in their life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// Invited, no password chosen yet.
    Invited,
    Active,
    Disabled,
}

/// What sign-in needs besides the member: their password hash and second factor.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub member: Member,
    pub password_hash: Option<String>,
    pub totp_secret_sealed: Option<Vec<u8>>,
    pub totp_last_step: Option<u64>,
}

const COLUMNS: &str =
    "id, company_id, email, role, password_hash, disabled_at, totp_secret_sealed IS NOT NULL, lang, created_at, totp_secret_sealed, totp_last_step";

/// A member as SQLite holds it, before its columns are checked.
struct MemberRow {
    id: String,
    company_id: String,
    email: String,
    role: String,
    password_hash: Option<String>,
    disabled_at: Option<String>,
    two_factor: bool,
    lang: Option<String>,
    created_at: String,
    totp_secret_sealed: Option<Vec<u8>>,
    totp_last_step: Option<i64>,
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<MemberRow> {
    Ok(MemberRow {
        id: r.get(0)?,
        company_id: r.get(1)?,
        email: r.get(2)?,
        role: r.get(3)?,
        password_hash: r.get(4)?,
        disabled_at: r.get(5)?,
        two_factor: r.get(6)?,
        lang: r.get(7)?,
        created_at: r.get(8)?,
        totp_secret_sealed: r.get(9)?,
        totp_last_step: r.get(10)?,
    })
}

fn build(row: MemberRow) -> Result<Credentials, RepoError> {
    let state = match (&row.disabled_at, &row.password_hash) {
        (Some(_), _) => MemberState::Disabled,
        (None, None) => MemberState::Invited,
        (None, Some(_)) => MemberState::Active,
    };
    let email =
        Email::parse(&row.email).map_err(|_| RepoError::Store(StoreError::Corrupt(format!("unexpected stored e-mail {:?}", row.email))))?;
    Ok(Credentials {
        member: Member {
            id: stored(&row.id)?,
            company_id: stored(&row.company_id)?,
            email,
            role: stored(&row.role)?,
            state,
            two_factor: row.two_factor,
            lang: row.lang,
            created_at: stored_time(&row.created_at)?,
        },
        password_hash: row.password_hash,
        totp_secret_sealed: row.totp_secret_sealed,
        totp_last_step: row.totp_last_step.map(|s| s as u64),
    })
}

fn one(c: &Connection, filter: &str, key: &str) -> Result<Option<Credentials>, RepoError> {
    c.query_row(&format!("SELECT {COLUMNS} FROM members WHERE {filter}"), [key], from_row)
        .optional()?
        .map(build)
        .transpose()
}

/// The member of `company` with this id.
pub fn get(c: &Connection, company: &CompanyId, id: &MemberId) -> Result<Member, RepoError> {
    match one(c, "id = ?1", id.as_str())? {
        Some(found) if &found.member.company_id == company => Ok(found.member),
        _ => Err(RepoError::NotFound),
    }
}

/// A member by id alone, for operator commands.
pub fn get_any(c: &Connection, id: &MemberId) -> Result<Member, RepoError> {
    Ok(one(c, "id = ?1", id.as_str())?.ok_or(RepoError::NotFound)?.member)
}

/// What sign-in checks for this e-mail: the one account (password chosen, not disabled) that
/// holds it; `None` when there is none. Invitations and disabled members of any company hold no
/// address.
pub fn credentials(c: &Connection, email: &Email) -> Result<Option<Credentials>, RepoError> {
    one(
        c,
        "email = ?1 AND password_hash IS NOT NULL AND disabled_at IS NULL",
        email.as_str(),
    )
}

/// Whether an account other than `except` holds `email` (see [`credentials`]).
pub fn account_holds(c: &Connection, email: &Email, except: &MemberId) -> Result<bool, RepoError> {
    Ok(credentials(c, email)?.is_some_and(|found| &found.member.id != except))
}

/// The member's sign-in secrets, by id.
pub fn credentials_of(c: &Connection, id: &MemberId) -> Result<Credentials, RepoError> {
    one(c, "id = ?1", id.as_str())?.ok_or(RepoError::NotFound)
}

/// The company's members, oldest first.
pub fn list(c: &Connection, company: &CompanyId) -> Result<Vec<Member>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM members WHERE company_id = ?1 ORDER BY created_at, id"
    ))?;
    let rows = stmt.query_map([company.as_str()], from_row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(|r| build(r).map(|c| c.member)).collect()
}

/// Records a member invited with `role`, or finds the invited member of this company with this
/// address (a new invitation replaces the old one). Refused when the address is an active or
/// disabled member of this company. Only this company's members are read: whether another
/// company knows the address changes nothing here, so inviting tells nothing of it (the one
/// account an address may hold is settled when an invitation is accepted, see
/// `invitations::accept`).
pub fn invite(tx: &Connection, company: &CompanyId, email: &Email, role: Role, now: DateTime<Utc>) -> Result<Member, RepoError> {
    super::companies::get(tx, company)?;
    let id: Option<String> = tx
        .query_row(
            "SELECT id FROM members WHERE company_id = ?1 AND email = ?2",
            params![company.as_str(), email.as_str()],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = id {
        let member = get(tx, company, &stored(&id)?)?;
        if member.state != MemberState::Invited {
            return Err(RepoError::Invalid {
                field: "email",
                message: format!("{email} is already a member of this company"),
            });
        }
        tx.execute(
            "UPDATE members SET role = ?2 WHERE id = ?1",
            params![member.id.as_str(), role.as_str()],
        )?;
        return get(tx, company, &member.id);
    }
    let id = MemberId::generate(now);
    tx.execute(
        "INSERT INTO members (id, company_id, email, role, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            id.as_str(),
            company.as_str(),
            email.as_str(),
            role.as_str(),
            domain::time::format(now)
        ],
    )?;
    get(tx, company, &id)
}

/// Sets the password of an invited or active member (invitation accepted, password changed).
pub fn set_password(tx: &Connection, id: &MemberId, password_hash: &str) -> Result<(), RepoError> {
    let n = tx.execute(
        "UPDATE members SET password_hash = ?2 WHERE id = ?1 AND disabled_at IS NULL",
        params![id.as_str(), password_hash],
    )?;
    if n == 0 {
        return Err(RepoError::NotFound);
    }
    Ok(())
}

/// The member's portal language.
pub fn set_lang(tx: &Connection, id: &MemberId, lang: Option<&str>) -> Result<(), RepoError> {
    tx.execute("UPDATE members SET lang = ?2 WHERE id = ?1", params![id.as_str(), lang])?;
    Ok(())
}

/// Enrols a TOTP second factor (sealed secret) with the hashes of its recovery codes.
pub fn enable_two_factor(
    tx: &Connection,
    id: &MemberId,
    sealed_secret: &[u8],
    step: u64,
    recovery_hashes: &[Vec<u8>],
) -> Result<(), RepoError> {
    let codes: Vec<String> = recovery_hashes.iter().map(|h| hex(h)).collect();
    tx.execute(
        "UPDATE members SET totp_secret_sealed = ?2, totp_last_step = ?3, recovery_codes = ?4 WHERE id = ?1",
        params![id.as_str(), sealed_secret, step as i64, serde_json::to_string(&codes)?],
    )?;
    Ok(())
}

/// Removes the member's second factor and their recovery codes.
pub fn disable_two_factor(tx: &Connection, id: &MemberId) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE members SET totp_secret_sealed = NULL, totp_last_step = NULL, recovery_codes = NULL WHERE id = ?1",
        [id.as_str()],
    )?;
    Ok(())
}

/// Records the TOTP step just used, so the same code is never accepted twice. False when a
/// concurrent sign-in already used this step or a later one.
pub fn use_totp_step(tx: &Connection, id: &MemberId, step: u64) -> Result<bool, RepoError> {
    let n = tx.execute(
        "UPDATE members SET totp_last_step = ?2 WHERE id = ?1 AND (totp_last_step IS NULL OR totp_last_step < ?2)",
        params![id.as_str(), step as i64],
    )?;
    Ok(n == 1)
}

/// Spends one recovery code: true when one of the member's unused codes equals one of
/// `candidates` (the presented code's keyed hashes, see `recovery_codes::candidates`). Every pair
/// is compared in constant time.
pub fn use_recovery_code(tx: &Connection, id: &MemberId, candidates: &[Vec<u8>]) -> Result<bool, RepoError> {
    let stored: Option<String> = tx
        .query_row("SELECT recovery_codes FROM members WHERE id = ?1", [id.as_str()], |r| r.get(0))
        .optional()?
        .flatten();
    let Some(stored) = stored else { return Ok(false) };
    let mut codes: Vec<String> = serde_json::from_str(&stored)?;
    let wanted: Vec<String> = candidates.iter().map(|c| hex(c)).collect();
    let mut found = None;
    for (i, code) in codes.iter().enumerate() {
        let matches = wanted.iter().fold(false, |any, w| {
            any | crate::crypto::api_key::hashes_match(code.as_bytes(), w.as_bytes())
        });
        if matches && found.is_none() {
            found = Some(i);
        }
    }
    let Some(position) = found else { return Ok(false) };
    codes.remove(position);
    tx.execute(
        "UPDATE members SET recovery_codes = ?2 WHERE id = ?1",
        params![id.as_str(), serde_json::to_string(&codes)?],
    )?;
    Ok(true)
}

/// How many recovery codes the member has left.
pub fn recovery_codes_left(c: &Connection, id: &MemberId) -> Result<usize, RepoError> {
    let stored: Option<String> = c
        .query_row("SELECT recovery_codes FROM members WHERE id = ?1", [id.as_str()], |r| r.get(0))
        .optional()?
        .flatten();
    Ok(match stored {
        Some(s) => serde_json::from_str::<Vec<String>>(&s)?.len(),
        None => 0,
    })
}

/// Gives `member` a new role; refused when it would leave the company without an active owner.
pub fn set_role(tx: &Connection, company: &CompanyId, id: &MemberId, role: Role) -> Result<Member, RepoError> {
    let member = get(tx, company, id)?;
    if member.role == Role::Owner && role != Role::Owner {
        keep_an_owner(tx, company, id)?;
    }
    tx.execute("UPDATE members SET role = ?2 WHERE id = ?1", params![id.as_str(), role.as_str()])?;
    super::portal_sessions::end_all(tx, id, chrono::Utc::now())?;
    get(tx, company, id)
}

/// Disables a member and ends their sessions; refused for the last active owner. An invited
/// member is removed instead (their invitation with them), since they never did anything.
pub fn disable(tx: &Connection, company: &CompanyId, id: &MemberId, now: DateTime<Utc>) -> Result<Member, RepoError> {
    let member = get(tx, company, id)?;
    match member.state {
        MemberState::Disabled => return Err(RepoError::InvalidState(format!("{} is already disabled", member.email))),
        MemberState::Invited => {
            super::invitations::revoke_for(tx, id)?;
            tx.execute("DELETE FROM members WHERE id = ?1", [id.as_str()])?;
            return Ok(member);
        }
        MemberState::Active => {}
    }
    if member.role == Role::Owner {
        keep_an_owner(tx, company, id)?;
    }
    tx.execute(
        "UPDATE members SET disabled_at = ?2 WHERE id = ?1",
        params![id.as_str(), domain::time::format(now)],
    )?;
    super::portal_sessions::end_all(tx, id, now)?;
    get(tx, company, id)
}

/// Refuses when `leaving` is the company's only active owner.
fn keep_an_owner(tx: &Connection, company: &CompanyId, leaving: &MemberId) -> Result<(), RepoError> {
    let others: i64 = tx.query_row(
        "SELECT COUNT(*) FROM members WHERE company_id = ?1 AND id != ?2 AND role = 'owner'
         AND disabled_at IS NULL AND password_hash IS NOT NULL",
        params![company.as_str(), leaving.as_str()],
        |r| r.get(0),
    )?;
    if others == 0 {
        return Err(RepoError::Invalid {
            field: "role",
            message: "a company always keeps one owner: make another member owner first".into(),
        });
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{company, memory};

    fn active(tx: &Connection, company: &CompanyId, email: &str, role: Role) -> Member {
        let m = invite(tx, company, &Email::parse(email).unwrap(), role, Utc::now()).unwrap();
        set_password(tx, &m.id, "$argon2id$fake").unwrap();
        get(tx, company, &m.id).unwrap()
    }

    #[test]
    fn an_invited_member_becomes_active_with_a_password() {
        let conn = memory();
        let co = company(&conn);
        let m = invite(&conn, &co, &Email::parse("Ana@Example.fr").unwrap(), Role::Reviewer, Utc::now()).unwrap();
        assert_eq!(
            (m.state, m.role, m.email.as_str()),
            (MemberState::Invited, Role::Reviewer, "ana@example.fr")
        );
        let again = invite(&conn, &co, &Email::parse("ana@example.fr").unwrap(), Role::Viewer, Utc::now()).unwrap();
        assert_eq!(
            (again.id.clone(), again.role),
            (m.id.clone(), Role::Viewer),
            "a new invitation replaces the old"
        );
        set_password(&conn, &m.id, "$argon2id$fake").unwrap();
        assert_eq!(get(&conn, &co, &m.id).unwrap().state, MemberState::Active);
        let taken = invite(&conn, &co, &Email::parse("ana@example.fr").unwrap(), Role::Viewer, Utc::now());
        assert!(matches!(taken, Err(RepoError::Invalid { field: "email", .. })), "{taken:?}");
    }

    #[test]
    fn a_company_always_keeps_an_owner() {
        let conn = memory();
        let co = company(&conn);
        let first = active(&conn, &co, "first@example.fr", Role::Owner);
        let keep = |r: Result<Member, RepoError>| matches!(r, Err(RepoError::Invalid { field: "role", .. }));
        assert!(keep(set_role(&conn, &co, &first.id, Role::Admin)));
        assert!(keep(disable(&conn, &co, &first.id, Utc::now())));
        let second = active(&conn, &co, "second@example.fr", Role::Admin);
        set_role(&conn, &co, &second.id, Role::Owner).unwrap();
        assert_eq!(set_role(&conn, &co, &first.id, Role::Viewer).unwrap().role, Role::Viewer);
        assert_eq!(disable(&conn, &co, &first.id, Utc::now()).unwrap().state, MemberState::Disabled);
    }

    #[test]
    fn members_of_another_company_are_not_found() {
        let conn = memory();
        let (a, b) = (company(&conn), company(&conn));
        let m = active(&conn, &a, "x@example.fr", Role::Owner);
        assert!(matches!(get(&conn, &b, &m.id), Err(RepoError::NotFound)));
        assert!(matches!(set_role(&conn, &b, &m.id, Role::Viewer), Err(RepoError::NotFound)));
        assert!(list(&conn, &b).unwrap().is_empty());
    }

    #[test]
    fn a_recovery_code_is_spent_once_and_a_totp_step_used_once() {
        let conn = memory();
        let co = company(&conn);
        let m = active(&conn, &co, "y@example.fr", Role::Owner);
        enable_two_factor(&conn, &m.id, b"sealed", 10, &[vec![1, 2], vec![3, 4]]).unwrap();
        assert!(get(&conn, &co, &m.id).unwrap().two_factor);
        assert!(!use_totp_step(&conn, &m.id, 10).unwrap(), "the enrolment's step");
        assert!(use_totp_step(&conn, &m.id, 11).unwrap());
        assert!(use_recovery_code(&conn, &m.id, &[vec![9, 9], vec![3, 4]]).unwrap(), "any candidate");
        assert!(!use_recovery_code(&conn, &m.id, &[vec![3, 4]]).unwrap());
        assert_eq!(recovery_codes_left(&conn, &m.id).unwrap(), 1);
    }
}
