//! Operator settings that must survive any restart, such as the drain of the worker pool (Redis
//! mirrors them; SQLite is the truth).

use super::error::RepoError;
use rusqlite::{params, Connection, OptionalExtension};

pub const DRAIN: &str = "drain";
/// The base URL the gateway serves links under, recorded at its start, so operator commands
/// (invitation links) print the address the service really answers on.
pub const PUBLIC_BASE: &str = "public_base";

pub fn get(c: &Connection, key: &str) -> Result<Option<String>, RepoError> {
    Ok(c.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

pub fn set(tx: &Connection, key: &str, value: &str) -> Result<(), RepoError> {
    tx.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![key, value, domain::time::format(chrono::Utc::now())],
    )?;
    Ok(())
}

/// Whether the worker pool is drained.
pub fn draining(c: &Connection) -> Result<bool, RepoError> {
    Ok(get(c, DRAIN)?.as_deref() == Some("on"))
}
