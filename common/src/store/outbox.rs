//! The transactional outbox: rows written in the same transaction as the state change they
//! announce, then published to the queue by the relay. A 2xx means the job or event exists.

use super::error::RepoError;
use crate::messages::Message;
use crate::queue::Topic;
use rusqlite::{params, Connection};

/// Writes `message` for its topic (and owner), to be published once the transaction commits.
pub fn push<M: Message>(tx: &Connection, message: &M) -> Result<(), RepoError> {
    insert(tx, message.topic(), message.owner(), message)
}

fn insert(tx: &Connection, topic: Topic, owner: Option<&str>, payload: &impl serde::Serialize) -> Result<(), RepoError> {
    tx.execute(
        "INSERT INTO outbox (topic, payload, created_at, owner) VALUES (?1, ?2, ?3, ?4)",
        params![
            topic.as_str(),
            serde_json::to_string(payload)?,
            domain::time::format(chrono::Utc::now()),
            owner
        ],
    )?;
    Ok(())
}

/// One pending row.
pub struct OutboxRow {
    pub id: i64,
    pub topic: String,
    pub payload: String,
    pub owner: Option<String>,
}

/// The oldest pending rows.
pub fn next(c: &Connection, limit: u32) -> Result<Vec<OutboxRow>, RepoError> {
    let mut stmt = c.prepare("SELECT id, topic, payload, owner FROM outbox ORDER BY id LIMIT ?1")?;
    let rows = stmt.query_map([limit], |r| {
        Ok(OutboxRow {
            id: r.get(0)?,
            topic: r.get(1)?,
            payload: r.get(2)?,
            owner: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

pub fn remove(tx: &Connection, id: i64) -> Result<(), RepoError> {
    tx.execute("DELETE FROM outbox WHERE id = ?1", params![id])?;
    Ok(())
}
