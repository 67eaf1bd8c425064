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

    /// A receive given up mid-claim (a drain, a grace period ending) leaves the message to the
    /// next receive, uncharged, instead of leased to no one for 10 minutes.
    #[tokio::test]
    async fn a_receive_given_up_mid_claim_loses_no_message() {
        let (q, _store) = queue(5);
        q.publish(Topic::JobsBatch, b"job".to_vec(), Duration::ZERO).await.unwrap();
        // Polled once (its claim handed to the store's writer), then dropped.
        let given_up = tokio::select! {
            biased;
            received = q.receive(&[Topic::JobsBatch]) => Some(received),
            () = std::future::ready(()) => None,
        };
        assert!(given_up.is_none(), "the claim waits for its flush");
        let next = tokio::time::timeout(Duration::from_secs(2), q.receive(&[Topic::JobsBatch]))
            .await
            .expect("the message was leased by the receive given up")
            .unwrap();
        assert_eq!((next.payload.as_slice(), next.attempts), (b"job".as_slice(), 1));
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

    /// Webhook events are claimed ahead, many in one transaction: each is handed out once, in
    /// order, leased (a restart hands back those not settled), and acked one by one.
    #[tokio::test]
    async fn events_are_claimed_ahead_and_handed_out_once_each() {
        let (q, _store) = queue(5);
        for i in 0..100 {
            q.publish(Topic::Events, format!("e{i}").into_bytes(), Duration::ZERO)
                .await
                .unwrap();
        }
        let first = q.receive(&[Topic::Events]).await.unwrap();
        assert_eq!(first.payload, b"e0");
        let leased: i64 = q
            .store
            .read(|c| {
                Ok::<_, QueueError>(
                    c.query_row("SELECT count(*) FROM queue_messages WHERE leased_until IS NOT NULL", [], |r| {
                        r.get(0)
                    })?,
                )
            })
            .await
            .unwrap();
        assert_eq!(leased, PREFETCH as i64, "one claim took a prefetch's worth");
        let mut order = vec![String::from_utf8(first.payload.clone()).unwrap()];
        q.ack(&first).await.unwrap();
        for _ in 1..100 {
            let d = q.receive(&[Topic::Events]).await.unwrap();
            order.push(String::from_utf8(d.payload.clone()).unwrap());
            q.ack(&d).await.unwrap();
        }
        assert_eq!(order, (0..100).map(|i| format!("e{i}")).collect::<Vec<_>>());
        assert!(q.depth().await.unwrap().is_empty(), "every event acked");
    }

    /// Consumers that find nothing claimed make one claim between them; a receive given up
    /// mid-claim loses nothing; at a stop, what was claimed and not handed out goes back with
    /// its attempt uncounted.
    #[tokio::test]
    async fn claims_ahead_are_shared_kept_and_given_back_uncharged() {
        let (q, _store) = queue(5);
        for i in 0..100 {
            q.publish(Topic::Events, format!("e{i}").into_bytes(), Duration::ZERO)
                .await
                .unwrap();
        }
        let leased = || async {
            q.store
                .read(|c| {
                    Ok::<i64, QueueError>(
                        c.query_row("SELECT count(*) FROM queue_messages WHERE leased_until IS NOT NULL", [], |r| {
                            r.get(0)
                        })?,
                    )
                })
                .await
                .unwrap()
        };
        let receivers: Vec<_> = (0..8)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.receive(&[Topic::Events]).await.unwrap() })
            })
            .collect();
        let mut handed = Vec::new();
        for r in receivers {
            handed.push(r.await.unwrap());
        }
        assert_eq!(leased().await, PREFETCH as i64, "eight receivers, one claim");
        while handed.len() < PREFETCH {
            handed.push(q.receive(&[Topic::Events]).await.unwrap());
        }

        // A receive given up while it claims: the claim still lands, for the next receive.
        let mut receiving = q.receive(&[Topic::Events]);
        let ready = std::future::poll_fn(|cx| std::task::Poll::Ready(std::future::Future::poll(receiving.as_mut(), cx).is_ready())).await;
        assert!(!ready, "nothing was claimed ahead: it had to claim");
        drop(receiving);
        let waited = std::time::Instant::now();
        while leased().await < 100 {
            assert!(waited.elapsed() < Duration::from_secs(5), "the claim was lost");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        handed.push(q.receive(&[Topic::Events]).await.unwrap());

        assert_eq!(q.give_back_claimed().await.unwrap(), 100 - handed.len());
        assert_eq!(leased().await, handed.len() as i64, "only what was handed out stays leased");
        for d in &handed {
            q.ack(d).await.unwrap();
        }
        let mut seen = 0;
        while let Ok(Ok(d)) = tokio::time::timeout(Duration::from_millis(300), q.receive(&[Topic::Events])).await {
            assert_eq!(d.attempts, 1, "given back uncharged");
            q.ack(&d).await.unwrap();
            seen += 1;
        }
        assert_eq!(seen + handed.len(), 100, "each message once");
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
