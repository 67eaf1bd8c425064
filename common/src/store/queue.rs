//! Embedded queue backend: messages are rows of the SQLite store. A receive leases a row (it
//! becomes invisible until the lease ends); ack deletes it; a crash leaves the lease to expire,
//! or [`SqliteQueue::release_leases`] hands everything back at the next start.

use super::{Store, StoreError};
use crate::queue::{Delivery, Outgoing, PartlyPublished, Queue, QueueError, Topic};
use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
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

/// Messages of a topic taken off the table at once, when one is asked for, by a consumer that
/// asks for that topic alone ([`prefetches`]): one transaction, and one flush, for them all. A
/// claim each, one after another, held the recorder to about 700 delivery attempts a second
/// (`scripts/bench --webhooks`), whatever else it did. The claim charges each an attempt, as a
/// lease does: after a crash nothing tells the ones handed out (one may have caused it) from the
/// others, so a crash costs all of them one of their deliveries; a message lives seconds on
/// these topics, and one dead-lettered by crashes in a row is replayed with `ops dead-letters`.
const PREFETCH: usize = 64;

/// Topics whose consumers take them alone and in no order of priority with another, so that
/// messages taken ahead (leased, as AMQP's prefetch holds them) change nothing but the cost:
/// webhook deliveries and the recorder's results.
fn prefetches(topics: &[Topic]) -> Option<Topic> {
    match topics {
        [topic @ (Topic::Events | Topic::Results)] => Some(*topic),
        _ => None,
    }
}

#[derive(Clone)]
pub struct SqliteQueue {
    store: Store,
    wake: Arc<Notify>,
    /// A message handed out this many times is moved to the dead letters instead.
    max_attempts: u32,
    /// Messages claimed ahead, per topic, handed out before the table is read again. Leased like
    /// any handed-out message: a crash leaves them to [`SqliteQueue::release_leases`], a stop
    /// gives them back ([`SqliteQueue::give_back_claimed`]).
    claimed: Arc<std::sync::Mutex<HashMap<Topic, VecDeque<Claimed>>>>,
    /// Held while a claim ahead is made: the consumers that find nothing claimed wait for that
    /// one claim rather than each make their own.
    claiming: Arc<tokio::sync::Mutex<()>>,
}

/// A message claimed ahead, and when: one still unhandled when its lease is half gone is given
/// back rather than handed out late, since the table hands it out again once the lease ends.
struct Claimed {
    delivery: Delivery,
    at: Instant,
    /// The lease the claim wrote: a give-back touches the row only while it is still this one.
    leased_until: i64,
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
            claimed: Arc::default(),
            claiming: Arc::default(),
        }
    }

    /// A message claimed ahead for `topic`, if one is left in time; those past half their lease
    /// are given back, in a task of their own: a receive given up mid-way must not drop the
    /// message it took off the list.
    fn take_claimed(&self, topic: Topic) -> Option<Delivery> {
        let mut stale = Vec::new();
        let fresh = {
            let mut claimed = self.claimed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let queue = claimed.entry(topic).or_default();
            loop {
                match queue.pop_front() {
                    Some(c) if c.at.elapsed() > LEASE / 2 => stale.push(c),
                    other => break other.map(|c| c.delivery),
                }
            }
        };
        if !stale.is_empty() {
            let this = self.clone();
            tokio::spawn(async move {
                if let Err(error) = this.give_back(stale).await {
                    tracing::warn!(%error, "could not give back stale claimed messages; their lease will end");
                }
            });
        }
        fresh
    }

    /// The next message of `topic`: one claimed ahead, or the first of a new claim ahead.
    async fn receive_ahead(&self, topic: Topic) -> Result<Option<Delivery>, QueueError> {
        if let Some(d) = self.take_claimed(topic) {
            return Ok(Some(d));
        }
        let _claiming = self.claiming.lock().await;
        // Another consumer's claim may have filled the queue while this one waited its turn.
        if let Some(d) = self.take_claimed(topic) {
            return Ok(Some(d));
        }
        // In a task of its own: a receive given up mid-way (its consumer stopping) must not lose
        // messages the claim leased for 10 minutes.
        let this = self.clone();
        tokio::spawn(async move { this.claim_ahead(topic).await })
            .await
            .map_err(|e| QueueError::Storage(format!("a claim ahead failed: {e}")))??;
        Ok(self.take_claimed(topic))
    }

    /// Claims up to [`PREFETCH`] ready messages of `topic` in one transaction, for the next
    /// receives.
    async fn claim_ahead(&self, topic: Topic) -> Result<(), QueueError> {
        let max_attempts = self.max_attempts;
        let (taken, leased_until) = self
            .store
            .write(move |tx| {
                let now = now_ms();
                let leased_until = now + ms(LEASE);
                let ready: Vec<(i64, Vec<u8>, u32)> = tx
                    .prepare_cached(&format!(
                        "SELECT id, payload, attempts FROM queue_messages WHERE id IN ({OLDEST_READY_MANY}) ORDER BY available_at, id"
                    ))?
                    .query_map(params![topic.as_str(), now, PREFETCH as i64], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })?
                    .collect::<Result<_, _>>()?;
                let mut taken = Vec::with_capacity(ready.len());
                for (id, payload, attempts) in ready {
                    if !lease_or_dead_letter(tx, id, attempts, max_attempts, leased_until)? {
                        continue;
                    }
                    taken.push(Delivery {
                        topic,
                        payload,
                        attempts: attempts + 1,
                        tag: id as u64,
                    });
                }
                Ok::<_, QueueError>((taken, leased_until))
            })
            .await?;
        let at = Instant::now();
        let mut claimed = self.claimed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        claimed.entry(topic).or_default().extend(taken.into_iter().map(|delivery| Claimed {
            delivery,
            at,
            leased_until,
        }));
        Ok(())
    }

    /// Gives back the messages claimed ahead and not handed out, their attempt not counted: at a
    /// stop, so that the next start hands them out at once and as fresh.
    pub async fn give_back_claimed(&self) -> Result<usize, QueueError> {
        let unhandled: Vec<Claimed> = {
            let mut claimed = self.claimed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            claimed.values_mut().flat_map(|q| q.drain(..)).collect()
        };
        let count = unhandled.len();
        self.give_back(unhandled).await?;
        Ok(count)
    }

    /// Makes messages claimed and never handed out visible again, uncharged; a row whose lease
    /// is no longer the claim's (it ended and the message went to another consumer) is left.
    async fn give_back(&self, claims: Vec<Claimed>) -> Result<(), QueueError> {
        if claims.is_empty() {
            return Ok(());
        }
        let leases: Vec<(i64, i64)> = claims.iter().map(|c| (c.delivery.tag as i64, c.leased_until)).collect();
        self.store
            .write(move |tx| {
                let now = now_ms();
                let mut unlease = tx.prepare_cached(
                    "UPDATE queue_messages SET attempts = max(attempts - 1, 0), available_at = ?2, leased_until = NULL WHERE id = ?1 AND leased_until = ?3",
                )?;
                for (id, leased_until) in leases {
                    unlease.execute(params![id, now, leased_until])?;
                }
                Ok::<_, QueueError>(())
            })
            .await?;
        self.wake.notify_waiters();
        Ok(())
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

    /// The first ready message of `topics`, claimed in a task of its own: a receive given up
    /// while the claim is written (a drain, a grace period ending) would leave the message leased
    /// to no one for 10 minutes; the task gives it back, uncharged, when nobody is left to take it.
    async fn try_claim(&self, topics: Vec<Topic>) -> Result<Option<Delivery>, QueueError> {
        let (answer, taken) = tokio::sync::oneshot::channel();
        let this = self.clone();
        tokio::spawn(async move {
            let claimed = this.claim_one(topics).await;
            if let Err(Ok(Some(claim))) = answer.send(claimed) {
                if let Err(error) = this.give_back(vec![claim]).await {
                    tracing::warn!(%error, "could not give back a message claimed for a receive given up; its lease will end");
                }
            }
        });
        let claimed = taken.await.map_err(|e| QueueError::Storage(format!("a claim failed: {e}")))??;
        Ok(claimed.map(|claim| claim.delivery))
    }

    async fn claim_one(&self, topics: Vec<Topic>) -> Result<Option<Claimed>, QueueError> {
        let max_attempts = self.max_attempts;
        self.store
            .write(move |tx| {
                let now = now_ms();
                let leased_until = now + ms(LEASE);
                for topic in topics {
                    while let Some(id) = next_ready(tx, topic, now)? {
                        let (payload, attempts) =
                            tx.query_row("SELECT payload, attempts FROM queue_messages WHERE id = ?1", [id], |r| {
                                Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, u32>(1)?))
                            })?;
                        if !lease_or_dead_letter(tx, id, attempts, max_attempts, leased_until)? {
                            continue;
                        }
                        return Ok(Some(Claimed {
                            delivery: Delivery {
                                topic,
                                payload,
                                attempts: attempts + 1,
                                tag: id as u64,
                            },
                            at: Instant::now(),
                            leased_until,
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
            .write(move |tx| insert_row(tx, topic, owner.as_deref(), &payload, at))
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

/// One message row, taking its owner's turn on a topic shared by owners.
fn insert_row(tx: &rusqlite::Transaction<'_>, topic: Topic, owner: Option<&str>, payload: &[u8], at: i64) -> Result<(), QueueError> {
    let turn: i64 = match owner {
        Some(owner) => tx
            .prepare_cached(NEXT_TURN)?
            .query_row(params![topic.as_str(), owner], |r| r.get(0))?,
        None => 0,
    };
    tx.prepare_cached("INSERT INTO queue_messages (topic, payload, available_at, owner, turn) VALUES (?1, ?2, ?3, ?4, ?5)")?
        .execute(params![topic.as_str(), payload, at, owner, turn])?;
    Ok(())
}

/// Messages in the order given, each visible after its own delay.
fn insert_all(tx: &rusqlite::Transaction<'_>, messages: &[Outgoing]) -> Result<(), QueueError> {
    let now = now_ms();
    for m in messages {
        let owner = m.owner.as_deref().filter(|_| m.delay.is_zero());
        insert_row(tx, m.topic, owner, &m.payload, now + ms(m.delay))?;
    }
    Ok(())
}

/// Leases a ready message until `leased_until`, charging it an attempt; false when it was handed
/// out `max_attempts` times already and went to the dead letters instead.
fn lease_or_dead_letter(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    attempts: u32,
    max_attempts: u32,
    leased_until: i64,
) -> Result<bool, QueueError> {
    if attempts >= max_attempts {
        dead_letter(tx, id)?;
        return Ok(false);
    }
    tx.prepare_cached(LEASE_ONE)?.execute(params![id, leased_until])?;
    Ok(true)
}

/// Forgets a handled message.
const ACK: &str = "DELETE FROM queue_messages WHERE id = ?1";

/// Hands a message out until its lease ends.
const LEASE_ONE: &str = "UPDATE queue_messages SET attempts = attempts + 1, available_at = ?2, leased_until = ?2 WHERE id = ?1";

/// The ids of the oldest ready messages, up to `?3`.
const OLDEST_READY_MANY: &str = "SELECT id FROM queue_messages WHERE topic = ?1 AND available_at <= ?2 ORDER BY available_at, id LIMIT ?3";

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
        params![id, domain::time::format(chrono::Utc::now())],
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

    /// One transaction: all or none, and one flush for them all.
    async fn publish_all(&self, messages: Vec<Outgoing>) -> Result<(), PartlyPublished> {
        self.store
            .write(move |tx| insert_all(tx, &messages))
            .await
            .map_err(|error| PartlyPublished { published: 0, error })?;
        self.wake.notify_waiters();
        Ok(())
    }

    /// One transaction: the messages and the ack together, or neither.
    async fn ack_publishing(&self, delivery: &Delivery, messages: Vec<Outgoing>) -> Result<(), QueueError> {
        let id = delivery.tag as i64;
        self.store
            .write(move |tx| {
                insert_all(tx, &messages)?;
                tx.prepare_cached(ACK)?.execute([id])?;
                Ok::<_, QueueError>(())
            })
            .await?;
        self.wake.notify_waiters();
        Ok(())
    }

    fn shares_fairly(&self, topic: Topic) -> bool {
        topic.shared_by_owners()
    }

    async fn receive(&self, topics: &[Topic]) -> Result<Delivery, QueueError> {
        let ahead = prefetches(topics);
        loop {
            let woken = self.wake.notified();
            let claimed = match ahead {
                Some(topic) => self.receive_ahead(topic).await?,
                None => self.try_claim(topics.to_vec()).await?,
            };
            if let Some(d) = claimed {
                return Ok(d);
            }
            let _ = tokio::time::timeout(POLL, woken).await;
        }
    }

    async fn ack(&self, delivery: &Delivery) -> Result<(), QueueError> {
        let id = delivery.tag as i64;
        self.store
            .write(move |tx| {
                tx.prepare_cached(ACK)?.execute([id])?;
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
mod tests;
