//! API keys: minted for companies with the group licence, stored as hashes, found by prefix.
//! The operator's CLI and the portal's Developers page mint and revoke them through the same
//! functions; a key remembers who made it and, to the minute, when it was last used. A test key
//! belongs to the company's test account (`companies::account`), so it reaches only test data.

use super::error::{stored, stored_time, RepoError};
use crate::crypto::api_key::{self, NewKey, PresentedKey};
use crate::domain::{Licence, Mode};
use crate::ids::{CompanyId, MemberId};
use chrono::{DateTime, Duration, Utc};
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
    /// As stored when the key was looked up, to decide whether to record this use.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A key as the portal lists it: never its secret, which is not stored.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyInfo {
    pub prefix: String,
    pub read_only: bool,
    pub mode: Mode,
    /// The member who created it; `None` for the operator's CLI (or a member since removed).
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Mints a key for `company` in `mode`; `created_by` is the member who asked, `None` for the
/// operator.
pub fn create(
    tx: &Connection,
    company: &CompanyId,
    read_only: bool,
    mode: Mode,
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
    let account = super::companies::account(tx, company, mode, now)?;
    let key = api_key::generate(read_only, mode);
    tx.execute(
        "INSERT INTO api_keys (prefix, hash, company_id, read_only, created_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            key.prefix,
            key.hash,
            account.as_str(),
            read_only,
            crate::time::format(now),
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
        params![prefix, crate::time::format(now), company.map(CompanyId::as_str)],
    )?;
    if n == 0 {
        return Err(RepoError::NotFound);
    }
    Ok(())
}

/// The company's keys, live and test, newest first, revoked ones included, with their creator's
/// e-mail.
pub fn list(c: &Connection, company: &CompanyId) -> Result<Vec<KeyInfo>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT k.prefix, k.read_only, m.email, k.created_at, k.last_used_at, k.revoked_at
         FROM api_keys k LEFT JOIN members m ON m.id = k.created_by
         WHERE k.{KEYS_OF_COMPANY} ORDER BY k.created_at DESC, k.prefix"
    ))?;
    type Row = (String, bool, Option<String>, String, Option<String>, Option<String>);
    let rows = stmt
        .query_map([company.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?
        .collect::<Result<Vec<Row>, _>>()?;
    rows.into_iter()
        .map(|(prefix, read_only, created_by, created_at, last_used_at, revoked_at)| {
            Ok(KeyInfo {
                mode: mode_of(&prefix)?,
                prefix,
                read_only,
                created_by,
                created_at: stored_time(&created_at)?,
                last_used_at: last_used_at.as_deref().map(stored_time).transpose()?,
                revoked_at: revoked_at.as_deref().map(stored_time).transpose()?,
            })
        })
        .collect()
}

/// Finds the owner of a presented key; `None` for unknown, revoked or mismatching keys.
pub fn authenticate(c: &Connection, presented: &PresentedKey<'_>) -> Result<Option<KeyOwner>, RepoError> {
    /// Hash, company, read-only, revoked at, last used at.
    type Row = (Vec<u8>, String, bool, Option<String>, Option<String>);
    let row: Option<Row> = c
        .prepare_cached("SELECT hash, company_id, read_only, revoked_at, last_used_at FROM api_keys WHERE prefix = ?1")?
        .query_row([presented.prefix()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    let Some((hash, company, read_only, revoked, last_used_at)) = row else {
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

/// Whether this use of the key is worth recording: the stored one is older than a minute.
pub fn needs_touch(owner: &KeyOwner, now: DateTime<Utc>) -> bool {
    owner.last_used_at.is_none_or(|at| now - at >= LAST_USE_PRECISION)
}

/// Records a use of the key at `now`, unless another request already did within the minute
/// (concurrent requests may all see a stale value; only the first write changes the row).
pub fn touch(tx: &Connection, prefix: &str, now: DateTime<Utc>) -> Result<(), RepoError> {
    tx.execute(
        "UPDATE api_keys SET last_used_at = ?2 WHERE prefix = ?1 AND (last_used_at IS NULL OR last_used_at <= ?3)",
        params![prefix, crate::time::format(now), crate::time::format(now - LAST_USE_PRECISION)],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::MasterKeys;
    use crate::store::test_support::{company, memory};
    use crate::store::{companies, members};
    use crate::team::{Email, Role};

    fn presented(key: &NewKey) -> PresentedKey<'_> {
        PresentedKey::parse(&key.secret).expect("a well-formed key")
    }

    #[test]
    fn keys_are_listed_with_their_creator_and_only_as_prefixes() {
        let conn = memory();
        let co = company(&conn);
        let m = members::invite(&conn, &co, &Email::parse("dev@example.fr").unwrap(), Role::Developer, Utc::now()).unwrap();
        let t0 = Utc::now();
        let by_cli = create(&conn, &co, false, Mode::Live, None, t0).unwrap();
        let by_member = create(&conn, &co, true, Mode::Live, Some(&m.id), t0 + Duration::seconds(1)).unwrap();
        let listed = list(&conn, &co).unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].prefix, by_member.prefix, "newest first");
        assert_eq!(
            (listed[0].read_only, listed[0].created_by.as_deref()),
            (true, Some("dev@example.fr"))
        );
        assert_eq!(
            (listed[1].prefix.as_str(), listed[1].created_by.as_deref()),
            (by_cli.prefix.as_str(), None)
        );
        assert!(listed.iter().all(|k| k.last_used_at.is_none() && k.revoked_at.is_none()));
        let other = company(&conn);
        assert!(list(&conn, &other).unwrap().is_empty(), "scoped to the company");
    }

    #[test]
    fn a_test_key_belongs_to_the_test_account_and_is_listed_and_revoked_with_the_company() {
        let conn = memory();
        let co = company(&conn);
        let live = create(&conn, &co, false, Mode::Live, None, Utc::now()).unwrap();
        let test = create(&conn, &co, true, Mode::Test, None, Utc::now()).unwrap();
        let again = create(&conn, &co, false, Mode::Test, None, Utc::now()).unwrap();
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
            create(&conn, &solo, false, Mode::Live, None, Utc::now()),
            Err(RepoError::Refused(_))
        ));
        assert!(list(&conn, &solo).unwrap().is_empty());
    }

    #[test]
    fn revoking_is_scoped_to_the_company_and_ends_the_key() {
        let conn = memory();
        let (co, other) = (company(&conn), company(&conn));
        let key = create(&conn, &co, false, Mode::Live, None, Utc::now()).unwrap();
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
        let key = create(&conn, &co, false, Mode::Live, None, Utc::now()).unwrap();
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
}
