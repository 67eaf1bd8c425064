//! Companies (tenants): creation with their default batch workflows, settings, webhook secrets.
//! The secrets are sealed with the master key and bound to their company: the database files
//! never hold one in clear, and a sealed secret copied to another company does not open.
//!
//! A company's test data (API.md, Test mode) live under its *test account*: a row of its own,
//! tied to the company by `test_of`, made the first time a test key is. Everything scoped by
//! company keeps the two apart as it is; what both modes share is the live company's and read
//! through it: its workflows and its settings, which [`set`] writes to both. The webhook secret
//! is not shared: a test account signs with a `whsec_test_…` of its own ([`rotate_test_secret`]),
//! so a receiver that verifies with the live secret never takes a test event for a live one.

use super::error::{stored, stored_time, RepoError};
use super::workflows;
use super::StoreError;
use crate::crypto::envelope::MasterKeys;
use crate::crypto::webhook_signature::{generate_secret, generate_secret_for};
use ::domain::branding::JourneySettings;
use chrono::{DateTime, Duration, Utc};
use domain::ids::CompanyId;
use domain::model::{Company, WorkflowRules};
use domain::vocabulary::{DocumentCategory, Licence, Mode};
use rusqlite::{params, Connection, OptionalExtension, Row};

/// How long the previous secret still signs after a rotation.
pub const ROTATION_OVERLAP_HOURS: i64 = 24;

pub struct Created {
    pub company: Company,
    pub webhook_secret: String,
}

/// A company (`c`) with the journey settings of its live company (`live`, itself for a live one):
/// a test account shows its customers what the company set, as it shares its workflows.
const COLUMNS: &str = "c.id, c.name, c.licence, c.ai_enabled, c.retention_days, c.created_at, c.two_factor_required,
    c.test_of IS NOT NULL AS test_account, live.display_name, live.accent_color, EXISTS (SELECT 1 FROM company_logos l WHERE l.company_id = live.id) AS has_logo,
    live.privacy_controller, live.privacy_contact, live.privacy_purpose, live.privacy_policy_url";
const FROM: &str = "companies c JOIN companies live ON live.id = coalesce(c.test_of, c.id)";

/// A company as SQLite holds it, before its columns are checked.
struct CompanyRow {
    id: String,
    name: String,
    licence: String,
    ai_enabled: bool,
    retention_days: u32,
    created_at: String,
    two_factor_required: bool,
    test_account: bool,
    journey: JourneySettings,
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<CompanyRow> {
    Ok(CompanyRow {
        id: r.get("id")?,
        name: r.get("name")?,
        licence: r.get("licence")?,
        ai_enabled: r.get("ai_enabled")?,
        retention_days: r.get("retention_days")?,
        created_at: r.get("created_at")?,
        two_factor_required: r.get("two_factor_required")?,
        test_account: r.get("test_account")?,
        journey: super::branding::settings(r)?,
    })
}

fn build(row: CompanyRow) -> Result<Company, RepoError> {
    Ok(Company {
        id: stored(&row.id)?,
        name: row.name,
        licence: stored(&row.licence)?,
        ai_enabled: row.ai_enabled,
        retention_days: row.retention_days,
        two_factor_required: row.two_factor_required,
        mode: if row.test_account { Mode::Test } else { Mode::Live },
        created_at: stored_time(&row.created_at)?,
        journey: row.journey,
    })
}

/// The associated data binding a sealed webhook secret to its company.
pub fn webhook_secret_context(company: &str) -> String {
    format!("company={company};webhook-secret")
}

/// The sealed form of `secret`, as the database keeps it.
pub fn seal_secret(keys: &MasterKeys, company: &str, secret: &str) -> Vec<u8> {
    keys.seal(&webhook_secret_context(company), secret.as_bytes())
}

fn open_secret(keys: &MasterKeys, company: &CompanyId, sealed: &[u8]) -> Result<String, RepoError> {
    let unreadable = |why: String| RepoError::Store(StoreError::Corrupt(format!("the webhook secret of {company}: {why}")));
    let plain = keys
        .open(&webhook_secret_context(company.as_str()), sealed)
        .map_err(|e| unreadable(e.to_string()))?;
    String::from_utf8(plain).map_err(|_| unreadable("not text".into()))
}

/// Creates a company, its webhook secret, and one default batch workflow per category.
pub fn create(tx: &Connection, name: &str, licence: Licence, keys: &MasterKeys, now: DateTime<Utc>) -> Result<Created, RepoError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(RepoError::Invalid {
            field: "name",
            message: "the company name must have 1 to 200 characters".into(),
        });
    }
    let id = CompanyId::generate(now);
    let secret = generate_secret();
    tx.execute(
        "INSERT INTO companies (id, name, licence, webhook_secret_sealed, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            id.as_str(),
            name,
            licence.as_str(),
            seal_secret(keys, id.as_str(), &secret),
            domain::time::format(now)
        ],
    )?;
    for category in DocumentCategory::ALL {
        let label = match category {
            DocumentCategory::Identite => "Lots : pièces d'identité",
            DocumentCategory::Administratif => "Lots : documents administratifs",
        };
        workflows::create(tx, &id, label, *category, None, &WorkflowRules::default(), true, now)?;
    }
    Ok(Created {
        company: get(tx, &id)?,
        webhook_secret: secret,
    })
}

pub fn get(c: &Connection, id: &CompanyId) -> Result<Company, RepoError> {
    let row = c
        .query_row(&format!("SELECT {COLUMNS} FROM {FROM} WHERE c.id = ?1"), [id.as_str()], from_row)
        .optional()?
        .ok_or(RepoError::NotFound)?;
    build(row)
}

/// The companies, without their test accounts.
pub fn list(c: &Connection) -> Result<Vec<Company>, RepoError> {
    let mut stmt = c.prepare(&format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE c.test_of IS NULL ORDER BY c.created_at, c.id"
    ))?;
    let rows = stmt.query_map([], from_row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(build).collect()
}

/// A company, refused when it is a test account: what would change one follows its company.
fn live(c: &Connection, id: &CompanyId) -> Result<Company, RepoError> {
    let company = get(c, id)?;
    if company.mode == Mode::Test {
        return Err(RepoError::Refused(format!(
            "{id} is a test account: it follows its company's settings"
        )));
    }
    Ok(company)
}

/// The account that holds `company`'s data in `mode`: the company itself for live data, its test
/// account for test data, made on first need with the company's settings, named after it.
pub fn account(tx: &Connection, company: &CompanyId, mode: Mode, now: DateTime<Utc>) -> Result<CompanyId, RepoError> {
    let live = live(tx, company)?;
    if mode == Mode::Live {
        return Ok(live.id);
    }
    let existing: Option<String> = tx
        .query_row("SELECT id FROM companies WHERE test_of = ?1", [company.as_str()], |r| r.get(0))
        .optional()?;
    if let Some(id) = existing {
        return stored(&id);
    }
    let id = CompanyId::generate(now);
    // Its webhook secret is made when first shown ([`make_test_secret`], [`rotate_test_secret`]):
    // sealing needs the master key, which not every caller holds.
    tx.execute(
        "INSERT INTO companies (id, name, licence, ai_enabled, retention_days, two_factor_required, created_at, test_of)
         SELECT ?2, name || ' (test)', licence, ai_enabled, retention_days, two_factor_required, ?3, id FROM companies WHERE id = ?1",
        params![company.as_str(), id.as_str(), domain::time::format(now)],
    )?;
    Ok(id)
}

/// The company's test account, when one was made.
pub fn test_account(c: &Connection, company: &CompanyId) -> Result<Option<CompanyId>, RepoError> {
    let id: Option<String> = c
        .query_row("SELECT id FROM companies WHERE test_of = ?1", [company.as_str()], |r| r.get(0))
        .optional()?;
    id.as_deref().map(stored).transpose()
}

/// The company whose workflows and settings an account uses: a test account's company, or the
/// company itself.
pub fn live_company(c: &Connection, account: &CompanyId) -> Result<CompanyId, RepoError> {
    let id: String = c
        .prepare_cached("SELECT coalesce(test_of, id) FROM companies WHERE id = ?1")?
        .query_row([account.as_str()], |r| r.get(0))
        .optional()?
        .ok_or(RepoError::NotFound)?;
    stored(&id)
}

/// Changes AI use and/or retention.
pub fn set(tx: &Connection, id: &CompanyId, ai_enabled: Option<bool>, retention_days: Option<u32>) -> Result<Company, RepoError> {
    live(tx, id)?;
    if let Some(ai) = ai_enabled {
        tx.execute(
            "UPDATE companies SET ai_enabled = ?2 WHERE id = ?1 OR test_of = ?1",
            params![id.as_str(), ai],
        )?;
    }
    if let Some(days) = retention_days {
        if days > 3650 {
            return Err(RepoError::Invalid {
                field: "retention-days",
                message: "retention must be between 0 and 3650 days".into(),
            });
        }
        tx.execute(
            "UPDATE companies SET retention_days = ?2 WHERE id = ?1 OR test_of = ?1",
            params![id.as_str(), days],
        )?;
    }
    get(tx, id)
}

/// Requires (or not) a second factor of every member of the company's portal team.
pub fn set_two_factor_required(tx: &Connection, id: &CompanyId, required: bool) -> Result<Company, RepoError> {
    live(tx, id)?;
    tx.execute(
        "UPDATE companies SET two_factor_required = ?2 WHERE id = ?1 OR test_of = ?1",
        params![id.as_str(), required],
    )?;
    get(tx, id)
}

/// Makes a new secret current; the old one keeps signing for [`ROTATION_OVERLAP_HOURS`].
pub fn rotate_secret(tx: &Connection, id: &CompanyId, keys: &MasterKeys, now: DateTime<Utc>) -> Result<String, RepoError> {
    live(tx, id)?;
    replace_secret(tx, id, Mode::Live, keys, now)
}

/// Makes a new `whsec_test_…` secret current for the company's test account (made if it has
/// none yet); the old one, if any, keeps signing for [`ROTATION_OVERLAP_HOURS`].
pub fn rotate_test_secret(tx: &Connection, company: &CompanyId, keys: &MasterKeys, now: DateTime<Utc>) -> Result<String, RepoError> {
    let test = account(tx, company, Mode::Test, now)?;
    replace_secret(tx, &test, Mode::Test, keys, now)
}

/// Makes the test account's first secret when it has none yet, and returns it to be shown this
/// once; `None` when it already has one (shown when it was made or last rotated).
pub fn make_test_secret(tx: &Connection, company: &CompanyId, keys: &MasterKeys, now: DateTime<Utc>) -> Result<Option<String>, RepoError> {
    let test = account(tx, company, Mode::Test, now)?;
    let secret = generate_secret_for(Mode::Test);
    let made = tx.execute(
        "UPDATE companies SET webhook_secret_sealed = ?2 WHERE id = ?1 AND webhook_secret_sealed IS NULL",
        params![test.as_str(), seal_secret(keys, test.as_str(), &secret)],
    )?;
    Ok((made == 1).then_some(secret))
}

fn replace_secret(tx: &Connection, id: &CompanyId, mode: Mode, keys: &MasterKeys, now: DateTime<Utc>) -> Result<String, RepoError> {
    let secret = generate_secret_for(mode);
    let until = domain::time::format(now + Duration::hours(ROTATION_OVERLAP_HOURS));
    tx.execute(
        "UPDATE companies SET previous_webhook_secret_sealed = webhook_secret_sealed, previous_secret_until = ?3,
         webhook_secret_sealed = ?2 WHERE id = ?1",
        params![id.as_str(), seal_secret(keys, id.as_str(), &secret), until],
    )?;
    Ok(secret)
}

/// The secrets that sign an account's deliveries now: current first, then the previous one
/// during rotation. Each account signs with its own: a test account never with its company's.
/// A test account whose secret is not made yet has none: `NotFound`, which the notifier
/// dead-letters (replayable once the secret is made).
pub fn signing_secrets(c: &Connection, account: &CompanyId, keys: &MasterKeys, now: DateTime<Utc>) -> Result<Vec<String>, RepoError> {
    type Row = (Option<Vec<u8>>, Option<Vec<u8>>, Option<String>, bool);
    let (current, previous, until, test): Row = c
        .query_row(
            "SELECT webhook_secret_sealed, previous_webhook_secret_sealed, previous_secret_until, test_of IS NOT NULL
             FROM companies WHERE id = ?1",
            [account.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?
        .ok_or(RepoError::NotFound)?;
    let current = match current {
        Some(sealed) => sealed,
        None if test => return Err(RepoError::NotFound),
        // Only a secret of an earlier version not sealed yet (see migrations::seal_webhook_secrets).
        None => {
            return Err(RepoError::Store(StoreError::Corrupt(format!(
                "the webhook secret of {account} is not sealed yet"
            ))))
        }
    };
    let mut secrets = vec![open_secret(keys, account, &current)?];
    if let (Some(prev), Some(until)) = (previous, until) {
        if until > domain::time::format(now) {
            secrets.push(open_secret(keys, account, &prev)?);
        }
    }
    Ok(secrets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::webhook_signature::{parse, signature_header, verify};
    use crate::store::test_support::memory;

    #[test]
    fn a_test_account_signs_with_a_secret_of_its_own_never_its_company_s() {
        let (c, keys, now) = (memory(), MasterKeys::ephemeral(), Utc::now());
        let created = create(&c, "Acme", Licence::Group, &keys, now).unwrap();
        let live_id = created.company.id;
        let test_id = account(&c, &live_id, Mode::Test, now).unwrap();
        assert!(
            matches!(signing_secrets(&c, &test_id, &keys, now), Err(RepoError::NotFound)),
            "no secret made yet: nothing signs, the live secret least of all"
        );

        let first = make_test_secret(&c, &live_id, &keys, now).unwrap().expect("made now");
        assert_eq!(parse(&first).unwrap().0, Mode::Test);
        assert_eq!(make_test_secret(&c, &live_id, &keys, now).unwrap(), None, "made once");
        assert_eq!(signing_secrets(&c, &test_id, &keys, now).unwrap(), vec![first.clone()]);
        assert_eq!(
            signing_secrets(&c, &live_id, &keys, now).unwrap(),
            vec![created.webhook_secret.clone()]
        );

        let header = signature_header(&signing_secrets(&c, &test_id, &keys, now).unwrap(), "evt_1", 1, b"{}").unwrap();
        assert!(!verify(&created.webhook_secret, "evt_1", 1, b"{}", &header).unwrap());
        assert!(verify(&first, "evt_1", 1, b"{}", &header).unwrap());

        // Rotation: the test secret's own overlap; the live secret does not move.
        let second = rotate_test_secret(&c, &live_id, &keys, now).unwrap();
        assert_eq!(signing_secrets(&c, &test_id, &keys, now).unwrap(), vec![second, first]);
        assert_eq!(signing_secrets(&c, &live_id, &keys, now).unwrap(), vec![created.webhook_secret]);
        assert!(matches!(rotate_secret(&c, &test_id, &keys, now), Err(RepoError::Refused(_))));
        assert!(matches!(rotate_test_secret(&c, &test_id, &keys, now), Err(RepoError::Refused(_))));
    }

    #[test]
    fn rotating_the_test_secret_makes_the_test_account_when_there_is_none_yet() {
        let (c, keys, now) = (memory(), MasterKeys::ephemeral(), Utc::now());
        let live_id = create(&c, "Acme", Licence::Group, &keys, now).unwrap().company.id;
        let secret = rotate_test_secret(&c, &live_id, &keys, now).unwrap();
        let test_id = account(&c, &live_id, Mode::Test, now).unwrap();
        assert_eq!(signing_secrets(&c, &test_id, &keys, now).unwrap(), vec![secret]);
    }
}
