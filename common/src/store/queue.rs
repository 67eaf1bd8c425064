//! Embedded queue backend: messages are rows of the SQLite store. A receive leases a row (it
//! becomes invisible until the lease ends); ack deletes it; a crash leaves the lease to expire,
//! or [`SqliteQueue::release_leases`] hands everything back at the next start.

use super::{Store, StoreError};
use crate::queue::{Delivery, Queue, QueueError, Topic};
use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How long a received message stays invisible to other consumers.
const LEASE: Duration = Duration::from_secs(600);
/// How often idle consumers look again (delayed messages, other processes).
const POLL: Duration = Duration::from_millis(200);

impl From<StoreError> for QueueError {
    fn from(e: StoreError) -> Self {
        QueueError::Storage(e.to_string())
    }
}

impl From<rusqlite::Error> for QueueError {
    fn from(e: rusqlite::Error) -> Self {
        QueueError::Storage(e.to_string())
    }
}

#[derive(Clone)]
pub struct SqliteQueue {
    store: Store,
    wake: Arc<Notify>,
    /// A message handed out this many times is moved to the dead letters instead.
    max_attempts: u32,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)
}

impl SqliteQueue {
    pub fn new(store: Store, max_attempts: u32) -> Self {
        Self {
            store,
            wake: Arc::new(Notify::new()),
            max_attempts,
        }
    }

    /// Makes every leased message visible again: at start, nothing of ours can be in flight.
    pub async fn release_leases(&self) -> Result<usize, QueueError> {
        let now = now_ms();
        self.store
            .write(move |tx| {
                Ok(tx.execute(
                    "UPDATE queue_messages SET available_at = ?1, leased_until = NULL WHERE leased_until IS NOT NULL",
                    [now],
                )?)
            })
            .await
    }

    async fn try_claim(&self, topics: Vec<Topic>) -> Result<Option<Delivery>, QueueError> {
        let max_attempts = self.max_attempts;
        self.store
            .write(move |tx| {
                let now = now_ms();
                for topic in topics {
                    while let Some(id) = next_ready(tx, topic, now)? {
                        let (payload, attempts) =
                            tx.query_row("SELECT payload, attempts FROM queue_messages WHERE id = ?1", [id], |r| {
                                Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, u32>(1)?))
                            })?;
                        if attempts >= max_attempts {
                            dead_letter(tx, id)?;
                            continue;
                        }
                        let lease_end = now + ms(LEASE);
                        tx.execute(
                            "UPDATE queue_messages SET attempts = attempts + 1, available_at = ?2, leased_until = ?2 WHERE id = ?1",
                            params![id, lease_end],
                        )?;
                        return Ok(Some(Delivery {
                            topic,
                            payload,
                            attempts: attempts + 1,
                            tag: id as u64,
                        }));
                    }
                }
                Ok(None)
            })
            .await
    }

    async fn insert(&self, topic: Topic, owner: Option<String>, payload: Vec<u8>, delay: Duration) -> Result<(), QueueError> {
        let at = now_ms() + ms(delay);
        self.store
            .write(move |tx| {
                let turn: i64 = match &owner {
                    Some(owner) => tx.query_row(NEXT_TURN, params![topic.as_str(), owner], |r| r.get(0))?,
                    None => 0,
                };
                tx.execute(
                    "INSERT INTO queue_messages (topic, payload, available_at, owner, turn) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![topic.as_str(), payload, at, owner, turn],
                )?;
                Ok::<_, QueueError>(())
            })
            .await?;
        self.wake.notify_waiters();
        Ok(())
    }

    /// Poison messages of a topic.
    pub async fn dead_letters(&self, topic: Topic) -> Result<u32, QueueError> {
        self.store
            .read(move |c| {
                Ok(
                    c.query_row("SELECT count(*) FROM queue_dead_letters WHERE topic = ?1", [topic.as_str()], |r| {
                        r.get(0)
                    })?,
                )
            })
            .await
    }

    /// Puts up to `max` poison messages of a topic back on it, attempts from zero.
    pub async fn replay_dead_letters(&self, topic: Topic, max: usize) -> Result<usize, QueueError> {
        let now = now_ms();
        let moved = self
            .store
            .write(move |tx| {
                let ids: Vec<i64> = tx
                    .prepare("SELECT id FROM queue_dead_letters WHERE topic = ?1 ORDER BY id LIMIT ?2")?
                    .query_map(params![topic.as_str(), max as i64], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                for id in &ids {
                    tx.execute(
                        "INSERT INTO queue_messages (topic, payload, available_at) SELECT topic, payload, ?2 FROM queue_dead_letters WHERE id = ?1",
                        params![id, now],
                    )?;
                    tx.execute("DELETE FROM queue_dead_letters WHERE id = ?1", [id])?;
                }
                Ok::<_, QueueError>(ids.len())
            })
            .await?;
        self.wake.notify_waiters();
        Ok(moved)
    }

    /// Messages ready or leased, per topic (for status pages).
    pub async fn depth(&self) -> Result<Vec<(String, i64)>, QueueError> {
        self.store
            .read(|c| {
                let mut stmt = c.prepare("SELECT topic, count(*) FROM queue_messages GROUP BY topic ORDER BY topic")?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
    }
}

/// The oldest ready message.
const OLDEST_READY: &str = "SELECT id FROM queue_messages WHERE topic = ?1 AND available_at <= ?2 ORDER BY available_at, id LIMIT 1";

/// The ready message of the earliest turn, the oldest on a tie (see [`NEXT_TURN`]).
const EARLIEST_TURN_READY: &str =
    "SELECT id FROM queue_messages WHERE topic = ?1 AND available_at <= ?2 ORDER BY turn, available_at, id LIMIT 1";

/// The turn of a new message of owner `?2` on topic `?1`: right after the owner's last message
/// still queued (ready or in flight), and never before the earliest turn queued. Owners thus
/// take turns: a company's tenth job waits for the first job of every other company, and a
/// company with nothing queued joins at the head of the line, whatever others have queued.
const NEXT_TURN: &str = "
SELECT max(
    coalesce((SELECT max(turn) + 1 FROM queue_messages WHERE topic = ?1 AND owner = ?2), 0),
    coalesce((SELECT min(turn) FROM queue_messages WHERE topic = ?1), 0)
)";

/// The id of the message of `topic` to hand out next, if one is ready at `now`.
fn next_ready(tx: &rusqlite::Transaction<'_>, topic: Topic, now: i64) -> rusqlite::Result<Option<i64>> {
    let sql = if topic.shared_by_owners() {
        EARLIEST_TURN_READY
    } else {
        OLDEST_READY
    };
    tx.query_row(sql, params![topic.as_str(), now], |r| r.get(0)).optional()
}

fn dead_letter(tx: &rusqlite::Transaction<'_>, id: i64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO queue_dead_letters (id, topic, payload, attempts, dead_at) SELECT id, topic, payload, attempts, ?2 FROM queue_messages WHERE id = ?1",
        params![id, crate::time::format(chrono::Utc::now())],
    )?;
    tx.execute("DELETE FROM queue_messages WHERE id = ?1", [id])?;
    tracing::warn!(message_id = id, "queue message dead-lettered after too many attempts");
    Ok(())
}

#[async_trait]
impl Queue for SqliteQueue {
    async fn publish(&self, topic: Topic, payload: Vec<u8>, delay: Duration) -> Result<(), QueueError> {
        self.insert(topic, None, payload, delay).await
    }

    async fn publish_owned(&self, topic: Topic, owner: &str, payload: Vec<u8>) -> Result<(), QueueError> {
        self.insert(topic, Some(owner.to_owned()), payload, Duration::ZERO).await
    }

    fn shares_fairly(&self, topic: Topic) -> bool {
        topic.shared_by_owners()
    }

    async fn receive(&self, topics: &[Topic]) -> Result<Delivery, QueueError> {
        loop {
            let woken = self.wake.notified();
            if let Some(d) = self.try_claim(topics.to_vec()).await? {
                return Ok(d);
            }
            let _ = tokio::time::timeout(POLL, woken).await;
        }
    }

    async fn ack(&self, delivery: &Delivery) -> Result<(), QueueError> {
        let id = delivery.tag as i64;
        self.store
            .write(move |tx| {
                tx.execute("DELETE FROM queue_messages WHERE id = ?1", [id])?;
                Ok(())
            })
            .await
    }

    async fn nack(&self, delivery: &Delivery, delay: Duration) -> Result<(), QueueError> {
        let id = delivery.tag as i64;
        let at = now_ms() + ms(delay);
        self.store
            .write(move |tx| {
                tx.execute(
                    "UPDATE queue_messages SET available_at = ?2, leased_until = NULL WHERE id = ?1",
                    params![id, at],
                )?;
                Ok::<_, QueueError>(())
            })
            .await?;
        self.wake.notify_waiters();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::TempStore;

    /// A queue on a fresh store; the store (and its directory) lives as long as the second value.
    fn queue(max_attempts: u32) -> (SqliteQueue, TempStore) {
        let store = TempStore::new("queue");
        (SqliteQueue::new(store.handle(), max_attempts), store)
    }

    #[tokio::test]
    async fn priority_lease_ack_and_redelivery() {
        let (q, _store) = queue(5);
        q.publish(Topic::JobsBatch, b"batch".to_vec(), Duration::ZERO).await.unwrap();
        q.publish(Topic::JobsRealtime, b"rt".to_vec(), Duration::ZERO).await.unwrap();
        let first = q.receive(&[Topic::JobsRealtime, Topic::JobsBatch]).await.unwrap();
        assert_eq!(first.payload, b"rt");
        let second = q.receive(&[Topic::JobsRealtime, Topic::JobsBatch]).await.unwrap();
        assert_eq!(second.payload, b"batch");
        q.ack(&first).await.unwrap();
        // The batch message is leased: after a "crash", releasing leases hands it out again.
        assert_eq!(q.release_leases().await.unwrap(), 1);
        let again = q.receive(&[Topic::JobsBatch]).await.unwrap();
        assert_eq!((again.payload.as_slice(), again.attempts), (b"batch".as_slice(), 2));
        q.ack(&again).await.unwrap();
        assert!(q.depth().await.unwrap().is_empty());
    }

    /// Company A puts ten journeys' jobs on the real-time lane at once, then B and C one each:
    /// taken one at a time and still in flight, B's and C's come right after A's first, not after
    /// A's tenth; A's keep their order.
    #[tokio::test]
    async fn the_real_time_lane_takes_companies_in_turn() {
        let (q, _store) = queue(5);
        for i in 0..10 {
            q.publish_owned(Topic::JobsRealtime, "A", format!("A{i}").into_bytes())
                .await
                .unwrap();
        }
        q.publish_owned(Topic::JobsRealtime, "B", b"B0".to_vec()).await.unwrap();
        q.publish_owned(Topic::JobsRealtime, "C", b"C0".to_vec()).await.unwrap();
        let mut order = Vec::new();
        let mut held = Vec::new();
        for _ in 0..12 {
            let d = q.receive(&[Topic::JobsRealtime]).await.unwrap();
            order.push(String::from_utf8(d.payload.clone()).unwrap());
            held.push(d);
        }
        assert_eq!(&order[..4], ["A0", "B0", "C0", "A1"], "{order:?}");
        let a: Vec<&String> = order.iter().filter(|p| p.starts_with('A')).collect();
        assert_eq!(a, (0..10).map(|i| format!("A{i}")).collect::<Vec<_>>().iter().collect::<Vec<_>>());
        for d in &held {
            q.ack(d).await.unwrap();
        }
    }

    /// A finished job frees its company's turn: taken and acked one by one, B's single job is
    /// second, and a late one of B's goes ahead of A's backlog too.
    #[tokio::test]
    async fn finished_jobs_give_their_turn_back() {
        let (q, _store) = queue(5);
        for i in 0..5 {
            q.publish_owned(Topic::JobsRealtime, "A", format!("A{i}").into_bytes())
                .await
                .unwrap();
        }
        q.publish_owned(Topic::JobsRealtime, "B", b"B0".to_vec()).await.unwrap();
        let mut order = Vec::new();
        for step in 0..6 {
            if step == 2 {
                q.publish_owned(Topic::JobsRealtime, "B", b"B1".to_vec()).await.unwrap();
            }
            let d = q.receive(&[Topic::JobsRealtime]).await.unwrap();
            order.push(String::from_utf8(d.payload.clone()).unwrap());
            q.ack(&d).await.unwrap();
        }
        assert_eq!(order, ["A0", "B0", "A1", "B1", "A2", "A3"]);
        // Topics not shared by owners stay first in, first out.
        for p in [b"x1", b"x2"] {
            q.publish(Topic::JobsBatch, p.to_vec(), Duration::ZERO).await.unwrap();
        }
        assert_eq!(q.receive(&[Topic::JobsBatch]).await.unwrap().payload, b"x1");
    }

    #[tokio::test]
    async fn delayed_messages_wait_and_poison_messages_are_dead_lettered() {
        let (q, _store) = queue(2);
        q.publish(Topic::Events, b"later".to_vec(), Duration::from_millis(300))
            .await
            .unwrap();
        let start = std::time::Instant::now();
        let d = q.receive(&[Topic::Events]).await.unwrap();
        assert!(start.elapsed() >= Duration::from_millis(250));
        q.nack(&d, Duration::ZERO).await.unwrap();
        let d = q.receive(&[Topic::Events]).await.unwrap();
        assert_eq!(d.attempts, 2);
        q.nack(&d, Duration::ZERO).await.unwrap();
        let nothing = tokio::time::timeout(Duration::from_millis(400), q.receive(&[Topic::Events])).await;
        assert!(nothing.is_err(), "a message tried max_attempts times is not handed out again");
        assert_eq!(q.dead_letters(Topic::Events).await.unwrap(), 1);
        assert_eq!(q.replay_dead_letters(Topic::Events, 10).await.unwrap(), 1);
        let back = q.receive(&[Topic::Events]).await.unwrap();
        assert_eq!((back.payload.as_slice(), back.attempts), (b"later".as_slice(), 1));
    }
}
