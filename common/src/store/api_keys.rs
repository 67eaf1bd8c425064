//! API keys: minted for companies with the group licence, stored as hashes, found by prefix.

use super::error::RepoError;
use crate::crypto::api_key::{self, NewKey, PresentedKey};
use crate::domain::Licence;
use crate::ids::CompanyId;
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

/// Who a valid key speaks for.
#[derive(Debug, Clone)]
pub struct KeyOwner {
    pub company_id: CompanyId,
    pub prefix: String,
    pub read_only: bool,
}

pub fn create(tx: &Connection, company: &CompanyId, read_only: bool, now: DateTime<Utc>) -> Result<NewKey, RepoError> {
    let c = super::companies::get(tx, company)?;
    if c.licence != Licence::Group {
        return Err(RepoError::Refused(format!(
            "company {} has no group licence: API keys require it",
            company
        )));
    }
    let key = api_key::generate(read_only);
    tx.execute(
        "INSERT INTO api_keys (prefix, hash, company_id, read_only, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![key.prefix, key.hash, company.as_str(), read_only, crate::time::format(now)],
    )?;
    Ok(key)
}

pub fn revoke(tx: &Connection, prefix: &str, now: DateTime<Utc>) -> Result<(), RepoError> {
    let n = tx.execute(
        "UPDATE api_keys SET revoked_at = ?2 WHERE prefix = ?1 AND revoked_at IS NULL",
        params![prefix, crate::time::format(now)],
    )?;
    if n == 0 {
        return Err(RepoError::NotFound);
    }
    Ok(())
}

/// Finds the owner of a presented key; `None` for unknown, revoked or mismatching keys.
pub fn authenticate(c: &Connection, presented: &PresentedKey<'_>) -> Result<Option<KeyOwner>, RepoError> {
    let row: Option<(Vec<u8>, String, bool, Option<String>)> = c
        .query_row(
            "SELECT hash, company_id, read_only, revoked_at FROM api_keys WHERE prefix = ?1",
            [presented.prefix()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((hash, company, read_only, revoked)) = row else {
        return Ok(None);
    };
    if !api_key::hashes_match(&hash, &presented.hash()) || revoked.is_some() || read_only != presented.read_only {
        return Ok(None);
    }
    Ok(Some(KeyOwner {
        company_id: super::error::stored(&company)?,
        prefix: presented.prefix().to_owned(),
        read_only,
    }))
}
