//! The broker objects Sceau relies on, declared idempotently at every (re)connection so that a
//! fresh vhost, a restarted broker or a deleted queue all heal the same way: quorum queues per
//! topic with a delivery limit, a dead-letter exchange and queues, and per-delay retry queues.

use crate::queue::Topic;
use lapin::options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{Channel, ExchangeKind};

/// Where poison messages go, routed by topic name to `<topic>.dead`.
pub(super) const DEAD_EXCHANGE: &str = "sceau.dead";
/// Attempts already spent on a message before this copy was published (retries, dead letters).
pub(super) const ATTEMPTS_HEADER: &str = "x-sceau-attempts";
/// Set by quorum queues on redelivery: how many times this copy was handed out and returned.
pub(super) const DELIVERY_COUNT_HEADER: &str = "x-delivery-count";

/// A queue a message can be published to, through the default exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Route {
    /// The topic's own queue.
    Topic(Topic),
    /// Holds a message for this many milliseconds, then dead-letters it back to the topic.
    Retry(Topic, u64),
    /// The topic's dead letters.
    Dead(Topic),
}

impl Route {
    pub(super) fn queue(self) -> String {
        match self {
            Route::Topic(topic) => topic.as_str().to_owned(),
            Route::Retry(topic, millis) => format!("{}.retry.{millis}", topic.as_str()),
            Route::Dead(topic) => dead_queue(topic),
        }
    }
}

pub(super) fn dead_queue(topic: Topic) -> String {
    format!("{}.dead", topic.as_str())
}

/// Declares the exchange and the per-topic queues; safe to repeat.
pub(super) async fn declare(channel: &Channel, delivery_limit: u32) -> lapin::Result<()> {
    let durable = ExchangeDeclareOptions {
        durable: true,
        ..ExchangeDeclareOptions::default()
    };
    channel
        .exchange_declare(DEAD_EXCHANGE.into(), ExchangeKind::Direct, durable, FieldTable::default())
        .await?;
    for topic in Topic::ALL {
        declare_topic(channel, topic, delivery_limit).await?;
    }
    Ok(())
}

/// The dead queue comes first so that nothing dead-lettered is ever dropped for want of a route.
async fn declare_topic(channel: &Channel, topic: Topic, delivery_limit: u32) -> lapin::Result<()> {
    let dead = dead_queue(topic);
    channel
        .queue_declare(dead.as_str().into(), QueueDeclareOptions::durable(), FieldTable::default())
        .await?;
    channel
        .queue_bind(
            dead.as_str().into(),
            DEAD_EXCHANGE.into(),
            topic.as_str().into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
    channel
        .queue_declare(
            topic.as_str().into(),
            QueueDeclareOptions::durable(),
            topic_arguments(topic, delivery_limit),
        )
        .await?;
    Ok(())
}

/// A retry queue keeps a message for a fixed time (one TTL per queue, so expiry stays in FIFO
/// order), then the broker dead-letters it through the default exchange back to its topic.
pub(super) async fn declare_retry(channel: &Channel, topic: Topic, millis: u64) -> lapin::Result<()> {
    let name = Route::Retry(topic, millis).queue();
    channel
        .queue_declare(name.as_str().into(), QueueDeclareOptions::durable(), retry_arguments(topic, millis))
        .await?;
    Ok(())
}

fn topic_arguments(topic: Topic, delivery_limit: u32) -> FieldTable {
    let mut args = FieldTable::default();
    args.insert("x-queue-type".into(), text("quorum"));
    args.insert("x-delivery-limit".into(), AMQPValue::LongLongInt(i64::from(delivery_limit)));
    args.insert("x-dead-letter-exchange".into(), text(DEAD_EXCHANGE));
    args.insert("x-dead-letter-routing-key".into(), text(topic.as_str()));
    args
}

fn retry_arguments(topic: Topic, millis: u64) -> FieldTable {
    let mut args = FieldTable::default();
    args.insert(
        "x-message-ttl".into(),
        AMQPValue::LongLongInt(i64::try_from(millis).unwrap_or(i64::MAX)),
    );
    args.insert("x-dead-letter-exchange".into(), text(""));
    args.insert("x-dead-letter-routing-key".into(), text(topic.as_str()));
    args
}

fn text(value: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(value))
}
