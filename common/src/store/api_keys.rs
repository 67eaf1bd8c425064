//! API keys: minted for companies with the group licence, stored as hashes, found by prefix.
//! The operator's CLI and the portal's Developers page mint and revoke them through the same
//! functions; a key remembers who made it and, to the minute, when it was last used. A test key
//! belongs to the company's test account (`companies::account`), so it reaches only test data.
//! A key holds scopes (`KeyScopes`): a member gives a key only the scopes their role has, a key
//! never keeps more than its creator's current role allows, and a member's keys may be revoked
//! with them.

use super::error::{stored, stored_time, RepoError};
use crate::crypto::api_key::{self, NewKey, PresentedKey};
use chrono::{DateTime, Duration, Utc};
use domain::ids::{CompanyId, MemberId};
use domain::key_scopes::KeyScopes;
use domain::vocabulary::{Licence, Mode};
use rusqlite::{params, Connection, OptionalExtension};

/// How stale a key's last use may get before a request records it again: the API writes at
/// most once a minute per key, never once per request.
pub const LAST_USE_PRECISION: Duration = Duration::seconds(60);

/// Who a valid key speaks for.
#[derive(Debug, Clone)]
pub struct KeyOwner {
    /// The account whose data the key acts on: the company, or its test account for a test key.
    pub company_id: CompanyId,
    pub prefix: String,
    pub read_only: bool,
    pub mode: Mode,
    pub scopes: KeyScopes,
    /// As stored when the key was looked up, to decide whether to record this use.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A key as the portal lists it: never its secret, which is not stored.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyInfo {
    pub prefix: String,
    pub read_only: bool,
    pub mode: Mode,
    pub scopes: KeyScopes,
    /// The member who created it; `None` for the operator's CLI (or a member since removed).
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// What a new key is: its access, mode and scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    pub read_only: bool,
    pub mode: Mode,
    pub scopes: KeyScopes,
}

/// Mints a key for `company`; `created_by` is the member who asked, `None` for the operator. A
/// member's key may hold only the scopes of their role (`Role::key_scopes`), whatever the form
/// they sent: asking more is refused (`Invalid` on `scopes`).
pub fn create(
    tx: &Connection,
    company: &CompanyId,
    spec: KeySpec,
    created_by: Option<&MemberId>,
    now: DateTime<Utc>,
) -> Result<NewKey, RepoError> {
    let c = super::companies::get(tx, company)?;
    if c.licence != Licence::Group {
        return Err(RepoError::Refused(format!(
            "company {} has no group licence: API keys require it",
            company
        )));
    }
    if let Some(member) = created_by {
        let role = super::members::get(tx, company, member)?.role;
        if !spec.scopes.within(role.key_scopes()) {
            return Err(RepoError::Invalid {
                field: "scopes",
                message: format!(
                    "a member with the role {role} cannot give a key the scopes {:?}",
                    spec.scopes.stored()
                ),
            });
        }
    }
    let account = super::companies::account(tx, company, spec.mode, now)?;
    let key = api_key::generate(spec.read_only, spec.mode);
    tx.execute(
        "INSERT INTO api_keys (prefix, hash, company_id, read_only, scopes, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            key.prefix,
            key.hash,
            account.as_str(),
            spec.read_only,
            spec.scopes.stored(),
            domain::time::format(now),
            created_by.map(MemberId::as_str)
        ],
    )?;
    Ok(key)
}

/// The accounts of a company's keys: the company and its test account.
const KEYS_OF_COMPANY: &str = "company_id IN (SELECT id FROM companies WHERE id = ?1 OR test_of = ?1)";

/// Revokes a live key; with `company`, only one of that company's (another's is not found).
pub fn revoke(tx: &Connection, company: Option<&CompanyId>, prefix: &str, now: DateTime<Utc>) -> Result<(), RepoError> {
    let n = tx.execute(
        "UPDATE api_keys SET revoked_at = ?2 WHERE prefix = ?1 AND revoked_at IS NULL
         AND (?3 IS NULL OR company_id IN (SELECT id FROM companies WHERE id = ?3 OR test_of = ?3))",
        params![prefix, domain::time::format(now), company.map(CompanyId::as_str)],
    )?;
    if n == 0 {
        return Err(RepoError::NotFound);
    }
    Ok(())
}

/// The live keys `member` created for `company` (live and test), oldest first: what disabling the
/// member offers to revoke.
pub fn live_created_by(c: &Connection, company: &CompanyId, member: &MemberId) -> Result<Vec<String>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT prefix FROM api_keys WHERE {KEYS_OF_COMPANY} AND created_by = ?2 AND revoked_at IS NULL
         ORDER BY created_at, prefix"
    ))?;
    let prefixes = stmt
        .query_map(params![company.as_str(), member.as_str()], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(prefixes)
}

/// Revokes every live key `member` created for `company`; their prefixes, for the audit log.
pub fn revoke_created_by(tx: &Connection, company: &CompanyId, member: &MemberId, now: DateTime<Utc>) -> Result<Vec<String>, RepoError> {
    let prefixes = live_created_by(tx, company, member)?;
    for prefix in &prefixes {
        revoke(tx, Some(company), prefix, now)?;
    }
    Ok(prefixes)
}

/// Takes from the live keys `member` created the scopes beyond `allowed` (their new role's):
/// a key never keeps more than its creator may give. The prefixes of the keys narrowed.
pub fn narrow_created_by(tx: &Connection, company: &CompanyId, member: &MemberId, allowed: KeyScopes) -> Result<Vec<String>, RepoError> {
    let rows: Vec<(String, String)> = tx
        .prepare(&format!(
            "SELECT prefix, scopes FROM api_keys WHERE {KEYS_OF_COMPANY} AND created_by = ?2 AND revoked_at IS NULL
             ORDER BY created_at, prefix"
        ))?
        .query_map(params![company.as_str(), member.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut narrowed = Vec::new();
    for (prefix, stored) in rows {
        let scopes = scopes_of(&stored)?;
        if !scopes.within(allowed) {
            tx.execute(
                "UPDATE api_keys SET scopes = ?2 WHERE prefix = ?1",
                params![prefix, scopes.and(allowed).stored()],
            )?;
            narrowed.push(prefix);
        }
    }
    Ok(narrowed)
}

/// The company's keys, live and test, newest first, revoked ones included, with their creator's
/// e-mail.
pub fn list(c: &Connection, company: &CompanyId) -> Result<Vec<KeyInfo>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT k.prefix, k.read_only, k.scopes, m.email, k.created_at, k.last_used_at, k.revoked_at
         FROM api_keys k LEFT JOIN members m ON m.id = k.created_by
         WHERE k.{KEYS_OF_COMPANY} ORDER BY k.created_at DESC, k.prefix"
    ))?;
    /// A key as SQLite holds it, before its columns are checked.
    struct Row {
        prefix: String,
        read_only: bool,
        scopes: String,
        created_by: Option<String>,
        created_at: String,
        last_used_at: Option<String>,
        revoked_at: Option<String>,
    }
    let rows = stmt
        .query_map([company.as_str()], |r| {
            Ok(Row {
                prefix: r.get(0)?,
                read_only: r.get(1)?,
                scopes: r.get(2)?,
                created_by: r.get(3)?,
                created_at: r.get(4)?,
                last_used_at: r.get(5)?,
                revoked_at: r.get(6)?,
            })
        })?
        .collect::<Result<Vec<Row>, _>>()?;
    rows.into_iter()
        .map(|row| {
            Ok(KeyInfo {
                mode: mode_of(&row.prefix)?,
                scopes: scopes_of(&row.scopes)?,
                prefix: row.prefix,
                read_only: row.read_only,
                created_by: row.created_by,
                created_at: stored_time(&row.created_at)?,
                last_used_at: row.last_used_at.as_deref().map(stored_time).transpose()?,
                revoked_at: row.revoked_at.as_deref().map(stored_time).transpose()?,
            })
        })
        .collect()
}

/// Finds the owner of a presented key; `None` for unknown, revoked or mismatching keys.
pub fn authenticate(c: &Connection, presented: &PresentedKey<'_>) -> Result<Option<KeyOwner>, RepoError> {
    /// Hash, company, read-only, scopes, revoked at, last used at.
    type Row = (Vec<u8>, String, bool, String, Option<String>, Option<String>);
    let row: Option<Row> = c
        .prepare_cached("SELECT hash, company_id, read_only, scopes, revoked_at, last_used_at FROM api_keys WHERE prefix = ?1")?
        .query_row([presented.prefix()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })
        .optional()?;
    let Some((hash, company, read_only, scopes, revoked, last_used_at)) = row else {
        return Ok(None);
    };
    if !api_key::hashes_match(&hash, &presented.hash()) || revoked.is_some() || read_only != presented.read_only {
        return Ok(None);
    }
    Ok(Some(KeyOwner {
        company_id: stored(&company)?,
        prefix: presented.prefix().to_owned(),
        read_only,
        mode: presented.mode,
        scopes: scopes_of(&scopes)?,
        last_used_at: last_used_at.as_deref().map(stored_time).transpose()?,
    }))
}

/// A stored key's mode, which its prefix says (`sk_test_…`).
fn mode_of(prefix: &str) -> Result<Mode, RepoError> {
    prefix
        .get(3..7)
        .map_or(Err(()), |m| m.parse().map_err(|_| ()))
        .map_err(|()| RepoError::Store(super::StoreError::Corrupt(format!("the API key prefix {prefix:?} names no mode"))))
}

/// A stored key's scopes; an unknown name means the database was altered.
fn scopes_of(stored: &str) -> Result<KeyScopes, RepoError> {
    KeyScopes::parse(stored).map_err(|e| RepoError::Store(super::StoreError::Corrupt(format!("an API key's scopes: {e}"))))
}

/// Whether this use of the key is worth recording: the stored one is older than a minute.
pub fn needs_touch(owner: &KeyOwner, now: DateTime<Utc>) -> bool {
    owner.last_used_at.is_none_or(|at| now - at >= LAST_USE_PRECISION)
}

/// Records a use of the key at `now`, unless another request already did within the minute
/// (concurrent requests may all see a stale value; only the first write changes the row).
pub fn touch(tx: &Connection, prefix: &str, now: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE api_keys SET last_used_at = ?2 WHERE prefix = ?1 AND (last_used_at IS NULL OR last_used_at <= ?3)",
        params![prefix, domain::time::format(now), domain::time::format(now - LAST_USE_PRECISION)],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::MasterKeys;
    use crate::store::test_support::{company, memory};
    use crate::store::{companies, members};
    use domain::team::{Email, Role};

    /// A key with every scope, as the operator makes them.
    fn full(read_only: bool, mode: Mode) -> KeySpec {
        KeySpec {
            read_only,
            mode,
            scopes: KeyScopes::all(),
        }
    }

    /// A key without any scope, as a developer makes them.
    fn bare(read_only: bool, mode: Mode) -> KeySpec {
        KeySpec {
            scopes: KeyScopes::NONE,
            ..full(read_only, mode)
        }
    }

    /// An active member of `co` with `role`.
    fn member(conn: &Connection, co: &CompanyId, email: &str, role: Role) -> MemberId {
        let m = members::invite(conn, co, &Email::parse(email).unwrap(), role, Utc::now()).unwrap();
        members::set_password(conn, &m.id, "$argon2id$fake").unwrap();
        m.id
    }

    fn presented(key: &NewKey) -> PresentedKey<'_> {
        PresentedKey::parse(&key.secret).expect("a well-formed key")
    }

    #[test]
    fn keys_are_listed_with_their_creator_and_only_as_prefixes() {
        let conn = memory();
        let co = company(&conn);
        let m = members::invite(&conn, &co, &Email::parse("dev@example.fr").unwrap(), Role::Developer, Utc::now()).unwrap();
        let t0 = Utc::now();
        let by_cli = create(&conn, &co, full(false, Mode::Live), None, t0).unwrap();
        let by_member = create(&conn, &co, bare(true, Mode::Live), Some(&m.id), t0 + Duration::seconds(1)).unwrap();
        let listed = list(&conn, &co).unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].prefix, by_member.prefix, "newest first");
        assert_eq!(
            (listed[0].read_only, listed[0].scopes, listed[0].created_by.as_deref()),
            (true, KeyScopes::NONE, Some("dev@example.fr"))
        );
        assert_eq!(
            (listed[1].prefix.as_str(), listed[1].scopes, listed[1].created_by.as_deref()),
            (by_cli.prefix.as_str(), KeyScopes::all(), None)
        );
        assert!(listed.iter().all(|k| k.last_used_at.is_none() && k.revoked_at.is_none()));
        let other = company(&conn);
        assert!(list(&conn, &other).unwrap().is_empty(), "scoped to the company");
    }

    #[test]
    fn a_test_key_belongs_to_the_test_account_and_is_listed_and_revoked_with_the_company() {
        let conn = memory();
        let co = company(&conn);
        let live = create(&conn, &co, full(false, Mode::Live), None, Utc::now()).unwrap();
        let test = create(&conn, &co, full(true, Mode::Test), None, Utc::now()).unwrap();
        let again = create(&conn, &co, full(false, Mode::Test), None, Utc::now()).unwrap();
        let (live_owner, test_owner) = (
            authenticate(&conn, &presented(&live)).unwrap().unwrap(),
            authenticate(&conn, &presented(&test)).unwrap().unwrap(),
        );
        assert_eq!((live_owner.company_id.clone(), live_owner.mode), (co.clone(), Mode::Live));
        assert_eq!(test_owner.mode, Mode::Test);
        assert_ne!(test_owner.company_id, co, "test data live under another account");
        assert_eq!(
            authenticate(&conn, &presented(&again)).unwrap().unwrap().company_id,
            test_owner.company_id,
            "one test account per company"
        );
        assert_eq!(companies::live_company(&conn, &test_owner.company_id).unwrap(), co);
        let modes: Vec<Mode> = list(&conn, &co).unwrap().iter().map(|k| k.mode).collect();
        assert_eq!(modes.iter().filter(|m| **m == Mode::Test).count(), 2, "{modes:?}");
        revoke(&conn, Some(&co), &test.prefix, Utc::now()).unwrap();
        assert!(authenticate(&conn, &presented(&test)).unwrap().is_none());
        assert!(
            companies::list(&conn).unwrap().iter().all(|c| c.id != test_owner.company_id),
            "a test account is not a company of the list"
        );
    }

    #[test]
    fn only_a_group_licence_mints_keys() {
        let conn = memory();
        let keys = MasterKeys::ephemeral();
        let solo = companies::create(&conn, "Solo", Licence::Standard, &keys, Utc::now())
            .unwrap()
            .company
            .id;
        assert!(matches!(
            create(&conn, &solo, full(false, Mode::Live), None, Utc::now()),
            Err(RepoError::Refused(_))
        ));
        assert!(list(&conn, &solo).unwrap().is_empty());
    }

    #[test]
    fn revoking_is_scoped_to_the_company_and_ends_the_key() {
        let conn = memory();
        let (co, other) = (company(&conn), company(&conn));
        let key = create(&conn, &co, full(false, Mode::Live), None, Utc::now()).unwrap();
        assert!(matches!(
            revoke(&conn, Some(&other), &key.prefix, Utc::now()),
            Err(RepoError::NotFound)
        ));
        assert!(authenticate(&conn, &presented(&key)).unwrap().is_some(), "still live");
        revoke(&conn, Some(&co), &key.prefix, Utc::now()).unwrap();
        assert!(authenticate(&conn, &presented(&key)).unwrap().is_none());
        assert!(list(&conn, &co).unwrap()[0].revoked_at.is_some());
        assert!(
            matches!(revoke(&conn, None, &key.prefix, Utc::now()), Err(RepoError::NotFound)),
            "once"
        );
    }

    #[test]
    fn a_use_is_recorded_at_most_once_a_minute() {
        let conn = memory();
        let co = company(&conn);
        let key = create(&conn, &co, full(false, Mode::Live), None, Utc::now()).unwrap();
        let t0 = Utc::now();
        let owner = authenticate(&conn, &presented(&key)).unwrap().unwrap();
        assert!(needs_touch(&owner, t0), "never used");
        touch(&conn, &key.prefix, t0).unwrap();
        let owner = authenticate(&conn, &presented(&key)).unwrap().unwrap();
        let recorded = owner.last_used_at.expect("recorded");
        assert!(!needs_touch(&owner, t0 + Duration::seconds(59)));
        // A late concurrent write within the minute leaves the first one.
        touch(&conn, &key.prefix, t0 + Duration::seconds(30)).unwrap();
        assert_eq!(list(&conn, &co).unwrap()[0].last_used_at, Some(recorded));
        assert!(needs_touch(&owner, t0 + Duration::seconds(60)));
        touch(&conn, &key.prefix, t0 + Duration::seconds(61)).unwrap();
        assert!(list(&conn, &co).unwrap()[0].last_used_at > Some(recorded));
    }

    #[test]
    fn a_member_gives_a_key_only_the_scopes_of_their_role() {
        let conn = memory();
        let co = company(&conn);
        let dev = member(&conn, &co, "dev@example.fr", Role::Developer);
        let admin = member(&conn, &co, "admin@example.fr", Role::Admin);
        let refused = create(&conn, &co, full(false, Mode::Live), Some(&dev), Utc::now());
        assert!(
            matches!(refused, Err(RepoError::Invalid { field: "scopes", .. })),
            "{:?}",
            refused.err()
        );
        let for_test = create(&conn, &co, full(true, Mode::Test), Some(&dev), Utc::now());
        assert!(for_test.is_err(), "nor for test mode, nor read-only");
        let dev_key = create(&conn, &co, bare(false, Mode::Live), Some(&dev), Utc::now()).unwrap();
        let admin_key = create(&conn, &co, full(false, Mode::Live), Some(&admin), Utc::now()).unwrap();
        let scopes = |key: &NewKey| authenticate(&conn, &presented(key)).unwrap().unwrap().scopes;
        assert_eq!((scopes(&dev_key), scopes(&admin_key)), (KeyScopes::NONE, KeyScopes::all()));
        let stranger = company(&conn);
        assert!(
            matches!(
                create(&conn, &stranger, bare(false, Mode::Live), Some(&admin), Utc::now()),
                Err(RepoError::NotFound)
            ),
            "another company's member mints nothing here"
        );
    }

    #[test]
    fn a_members_keys_are_revoked_with_them_and_narrowed_with_their_role() {
        let conn = memory();
        let co = company(&conn);
        let admin = member(&conn, &co, "admin@example.fr", Role::Admin);
        let other = member(&conn, &co, "other@example.fr", Role::Admin);
        let live = create(&conn, &co, full(false, Mode::Live), Some(&admin), Utc::now()).unwrap();
        let test = create(&conn, &co, full(true, Mode::Test), Some(&admin), Utc::now()).unwrap();
        let theirs = create(&conn, &co, full(false, Mode::Live), Some(&other), Utc::now()).unwrap();
        let operator = create(&conn, &co, full(false, Mode::Live), None, Utc::now()).unwrap();
        let mut mine = vec![live.prefix.clone(), test.prefix.clone()];
        mine.sort();
        let mut listed = live_created_by(&conn, &co, &admin).unwrap();
        listed.sort();
        assert_eq!(listed, mine, "live and test keys");

        // Demoted to developer: their keys lose the images, the others' keep them.
        members::set_role(&conn, &co, &admin, Role::Developer).unwrap();
        let mut narrowed = narrow_created_by(&conn, &co, &admin, Role::Developer.key_scopes()).unwrap();
        narrowed.sort();
        assert_eq!(narrowed, mine);
        let scopes = |key: &NewKey| authenticate(&conn, &presented(key)).unwrap().unwrap().scopes;
        assert_eq!(scopes(&live), KeyScopes::NONE);
        assert_eq!(scopes(&test), KeyScopes::NONE);
        assert_eq!((scopes(&theirs), scopes(&operator)), (KeyScopes::all(), KeyScopes::all()));
        assert!(narrow_created_by(&conn, &co, &admin, KeyScopes::NONE).unwrap().is_empty(), "once");

        let mut revoked = revoke_created_by(&conn, &co, &admin, Utc::now()).unwrap();
        revoked.sort();
        assert_eq!(revoked, mine);
        assert!(authenticate(&conn, &presented(&live)).unwrap().is_none());
        assert!(authenticate(&conn, &presented(&test)).unwrap().is_none());
        assert!(authenticate(&conn, &presented(&theirs)).unwrap().is_some());
        assert!(authenticate(&conn, &presented(&operator)).unwrap().is_some());
        assert!(live_created_by(&conn, &co, &admin).unwrap().is_empty());
        let stranger = company(&conn);
        assert!(
            revoke_created_by(&conn, &stranger, &other, Utc::now()).unwrap().is_empty(),
            "scoped to the company"
        );
    }
}
