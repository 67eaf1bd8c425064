//! The queue between the gateway, the workers, the recorder and the notifier. One small trait;
//! embedded mode backs it with a SQLite table, distributed mode with RabbitMQ. Delivery is
//! at-least-once: consumers ack only after the effect is durable and deduplicate by id.
pub mod amqp;
pub mod consumer;
/// The embedded backend lives with the rest of SQLite, in the store.
pub use crate::store::queue as sqlite;

use async_trait::async_trait;
use std::time::Duration;

/// Where a message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    /// Analysis jobs of customer journeys: always served first.
    JobsRealtime,
    /// Analysis jobs of batch deposits: served with what real-time leaves free.
    JobsBatch,
    /// Worker results, deadline expiries and delivery outcomes, for the recorder.
    Results,
    /// Webhook deliveries, for the notifier.
    Events,
    /// Real-time jobs a worker found over their company's share of its slots, on a queue that
    /// does not share the real-time lane by itself (RabbitMQ): served when `JobsRealtime` is
    /// empty, before batch jobs, so another company's journey never waits behind a burst.
    JobsRealtimeOverflow,
}

impl Topic {
    pub const ALL: [Topic; 5] = [
        Topic::JobsRealtime,
        Topic::JobsBatch,
        Topic::Results,
        Topic::Events,
        Topic::JobsRealtimeOverflow,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Topic::JobsRealtime => "jobs.realtime",
            Topic::JobsBatch => "jobs.batch",
            Topic::Results => "results",
            Topic::Events => "events",
            Topic::JobsRealtimeOverflow => "jobs.realtime.overflow",
        }
    }

    pub fn parse(s: &str) -> Option<Topic> {
        Topic::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Whether the topic is shared fairly among the companies that publish on it: one company's
    /// burst of journeys must not make another's customer wait behind it.
    pub fn shared_by_owners(self) -> bool {
        matches!(self, Topic::JobsRealtime)
    }
}

/// One received message; ack or nack it exactly once.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub topic: Topic,
    pub payload: Vec<u8>,
    /// How many times this message has been handed out, this time included.
    pub attempts: u32,
    /// Backend handle of the message.
    pub tag: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("queue storage: {0}")]
    Storage(String),
    #[error("queue closed")]
    Closed,
    /// The broker refused or failed an operation (channel or connection error).
    #[error("queue broker: {0}")]
    Broker(String),
    /// No live connection to the broker could be had within the allowed time.
    #[error("queue broker unavailable: {0}")]
    Unavailable(String),
    /// The broker did not confirm a publish (nack, or no confirm in time): it may not be stored.
    #[error("publish not confirmed: {0}")]
    Unconfirmed(String),
    /// The broker returned a mandatory publish: no queue takes this routing key.
    #[error("publish unroutable: {0}")]
    Unroutable(String),
}

/// A message to publish, with the owner it is shared fairly by on its topic (if any, and then
/// at once) or its delay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub topic: Topic,
    pub owner: Option<String>,
    pub payload: Vec<u8>,
    pub delay: Duration,
}

/// [`Queue::publish_all`] stopped: the first `published` messages are on the queue, the rest not.
#[derive(Debug, thiserror::Error)]
#[error("{published} messages published, then: {error}")]
pub struct PartlyPublished {
    pub published: usize,
    #[source]
    pub error: QueueError,
}

#[async_trait]
pub trait Queue: Send + Sync + 'static {
    /// Publishes durably; `delay` postpones visibility (webhook retries).
    async fn publish(&self, topic: Topic, payload: Vec<u8>, delay: Duration) -> Result<(), QueueError>;

    /// Publishes at once a message of `owner` (a company). On a topic shared by owners, a backend
    /// that [`shares_fairly`](Queue::shares_fairly) hands out next the ready message of the owner
    /// with the fewest messages in flight and ahead of it; others just publish.
    async fn publish_owned(&self, topic: Topic, owner: &str, payload: Vec<u8>) -> Result<(), QueueError> {
        let _ = owner;
        self.publish(topic, payload, Duration::ZERO).await
    }

    /// Publishes `messages` at once, in order, each as [`publish_owned`](Queue::publish_owned)
    /// or [`publish`](Queue::publish) would. A backend that can makes them durable together (the
    /// outbox relay hands over up to 200 rows at a time: one flush, not one each).
    async fn publish_all(&self, messages: Vec<Outgoing>) -> Result<(), PartlyPublished> {
        for (published, m) in messages.into_iter().enumerate() {
            let sent = match &m.owner {
                Some(owner) if m.delay.is_zero() => self.publish_owned(m.topic, owner, m.payload).await,
                _ => self.publish(m.topic, m.payload, m.delay).await,
            };
            sent.map_err(|error| PartlyPublished { published, error })?;
        }
        Ok(())
    }

    /// Publishes `messages`, then acks `delivery`: what handling it led to, then its end. A
    /// backend that can does both in one step (one transaction and one flush on SQLite, where the
    /// notifier spent two on each webhook); otherwise a failure between the two hands the
    /// delivery out again, and its handling is repeated (consumers deduplicate).
    async fn ack_publishing(&self, delivery: &Delivery, messages: Vec<Outgoing>) -> Result<(), QueueError> {
        self.publish_all(messages).await.map_err(|partly| partly.error)?;
        self.ack(delivery).await
    }

    /// Whether `receive` already shares `topic` fairly among its owners, so that consumers need
    /// not (see the worker's real-time share).
    fn shares_fairly(&self, topic: Topic) -> bool {
        let _ = topic;
        false
    }

    /// Waits for the next message of the first topic (in the given priority order) that has one.
    async fn receive(&self, topics: &[Topic]) -> Result<Delivery, QueueError>;

    /// The effect of the message is durable: forget it.
    async fn ack(&self, delivery: &Delivery) -> Result<(), QueueError>;

    /// The message could not be handled: hand it out again after `delay`, or dead-letter it when
    /// it has been tried too often (a poison message).
    async fn nack(&self, delivery: &Delivery, delay: Duration) -> Result<(), QueueError>;
}
