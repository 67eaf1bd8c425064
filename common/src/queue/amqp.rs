//! Distributed queue backend on RabbitMQ (lapin): durable quorum queues per topic, publisher
//! confirms with `mandatory`, manual acks, per-delay retry queues, dead letters after a delivery
//! limit, and a supervisor that reconnects (lapin does not) so callers survive a broker restart.

mod inbox;
mod link;
mod shared;
mod supervisor;
mod tag;
#[cfg(test)]
mod tests;
mod topology;

use super::{Delivery, Outgoing, PartlyPublished, Queue, QueueError, Topic};
use async_trait::async_trait;
use lapin::options::{BasicAckOptions, BasicGetOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use link::Link;
use shared::Shared;
use std::sync::Arc;
use std::time::Duration;
use tag::Tag;
use tokio::time::Instant;
use topology::Route;

/// How the queue talks to the broker.
#[derive(Debug, Clone)]
pub struct AmqpOptions {
    /// Unacknowledged deliveries per consumer: the consumer's free slots (worker concurrency).
    pub prefetch: u16,
    /// Unacknowledged webhook events, when the notifier's delivery slots are not the worker's
    /// (`None`: `prefetch`). Fewer than its slots would let a receiver that hangs hold them all.
    pub events_prefetch: Option<u16>,
    /// Unacknowledged real-time jobs, when the worker has slots for them beside `prefetch`
    /// (`None`: `prefetch`).
    pub realtime_prefetch: Option<u16>,
    /// Unacknowledged results, when the recorder takes more at once than `prefetch` (`None`:
    /// `prefetch`).
    pub results_prefetch: Option<u16>,
    /// A message handed out this many times is dead-lettered instead of retried (poison limit).
    pub delivery_limit: u32,
    /// How long a publish may take, waiting for a connection included, before it is an error.
    pub confirm_timeout: Duration,
}

impl AmqpOptions {
    /// The prefetch of `topic`'s consumer.
    fn prefetch_for(&self, topic: Topic) -> u16 {
        let special = match topic {
            Topic::Events => self.events_prefetch,
            Topic::JobsRealtime | Topic::JobsRealtimeOverflow => self.realtime_prefetch,
            Topic::Results => self.results_prefetch,
            _ => None,
        };
        special.unwrap_or(self.prefetch)
    }
}

impl Default for AmqpOptions {
    fn default() -> Self {
        AmqpOptions {
            prefetch: 1,
            events_prefetch: None,
            realtime_prefetch: None,
            results_prefetch: None,
            delivery_limit: 5,
            confirm_timeout: Duration::from_secs(5),
        }
    }
}

/// One queue's depth, for `sceau ops`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueStat {
    pub name: String,
    /// Messages ready for delivery (unacknowledged ones are not counted).
    pub ready: u32,
    pub consumers: u32,
}

/// The RabbitMQ queue. Clones share one connection; the last clone dropped closes it.
#[derive(Clone)]
pub struct AmqpQueue {
    shared: Arc<Shared>,
    _close_on_drop: Arc<CloseOnDrop>,
}

impl std::fmt::Debug for AmqpQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL carries the password: it is left out on purpose.
        f.debug_struct("AmqpQueue")
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

/// Stops the supervisor when the last handle goes, so a forgotten `close` leaks no connection.
struct CloseOnDrop(tokio_util::sync::CancellationToken);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl From<lapin::Error> for QueueError {
    fn from(error: lapin::Error) -> Self {
        QueueError::Broker(error.to_string())
    }
}

impl AmqpQueue {
    /// Connects and declares the topology; fails if the broker cannot be reached now (later
    /// losses are recovered by the supervisor). Must be called within a Tokio runtime.
    pub async fn connect(url: &str, options: AmqpOptions) -> Result<AmqpQueue, QueueError> {
        check_options(&options)?;
        let shared = Arc::new(Shared::new(url, options));
        let link = shared.establish().await?;
        tokio::spawn(supervisor::supervise(shared.clone(), link));
        let close_on_drop = Arc::new(CloseOnDrop(shared.closed.clone()));
        Ok(AmqpQueue {
            shared,
            _close_on_drop: close_on_drop,
        })
    }

    /// Whether a live connection is installed right now (for health reports).
    pub fn is_connected(&self) -> bool {
        self.shared.current().is_some()
    }

    /// Ready messages and consumers of the four topics and their dead-letter queues.
    /// Deliveries this process holds without having settled them yet, per topic.
    pub fn unsettled(&self) -> Vec<(Topic, usize)> {
        let counts = self.shared.current().map(|link| link.unsettled_by_topic()).unwrap_or_default();
        Topic::ALL.iter().map(|t| (*t, counts.get(t).copied().unwrap_or(0))).collect()
    }

    pub async fn queue_stats(&self) -> Result<Vec<QueueStat>, QueueError> {
        let (link, channel) = self.scratch_channel().await?;
        let mut stats = Vec::with_capacity(Topic::ALL.len() * 2);
        for topic in Topic::ALL {
            for route in [Route::Topic(topic), Route::Dead(topic)] {
                stats.push(inspect(&link, &channel, route.queue()).await?);
            }
        }
        Ok(stats)
    }

    /// How many messages of `topic` wait in its dead-letter queue.
    pub async fn dead_letters(&self, topic: Topic) -> Result<u32, QueueError> {
        let (link, channel) = self.scratch_channel().await?;
        Ok(inspect(&link, &channel, Route::Dead(topic).queue()).await?.ready)
    }

    /// Moves up to `max` dead letters of `topic` back to the topic, with a fresh attempt count.
    /// Each one is removed from the dead-letter queue only once its copy is confirmed, so a
    /// failure midway loses nothing (at worst a message is both replayed and still dead).
    pub async fn replay_dead_letters(&self, topic: Topic, max: usize) -> Result<usize, QueueError> {
        let (link, channel) = self.scratch_channel().await?;
        let dead = Route::Dead(topic).queue();
        let mut replayed = 0;
        while replayed < max {
            let get = channel.basic_get(dead.as_str().into(), BasicGetOptions { no_ack: false }).await;
            let Some(message) = get.map_err(|e| link.failed(e))? else {
                break;
            };
            self.publish_route(Route::Topic(topic), &message.delivery.data, None).await?;
            channel
                .basic_ack(message.delivery.delivery_tag, BasicAckOptions::default())
                .await
                .map_err(|e| link.failed(e))?;
            replayed += 1;
        }
        tracing::info!(topic = topic.as_str(), replayed, "dead letters replayed");
        Ok(replayed)
    }

    /// Closes the connection; pending and later calls answer `QueueError::Closed`. Unacked
    /// deliveries go back to their queues.
    pub async fn close(&self) {
        self.shared.close().await;
    }

    async fn scratch_channel(&self) -> Result<(Arc<Link>, Channel), QueueError> {
        let link = self.shared.wait_link(self.deadline()).await?;
        let channel = link.scratch_channel().await?;
        Ok((link, channel))
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.shared.options.confirm_timeout
    }

    /// Publishes with a confirm within one confirm timeout. A connection lost midway is retried
    /// on the next connection inside the same bound (at-least-once: consumers deduplicate); a
    /// refusal by a live broker (nack, returned message) is reported at once.
    async fn publish_route(&self, route: Route, payload: &[u8], attempts: Option<u32>) -> Result<(), QueueError> {
        let timeout = self.shared.options.confirm_timeout;
        let deadline = Instant::now() + timeout;
        loop {
            let link = self.shared.wait_link(deadline).await?;
            match tokio::time::timeout_at(deadline, link.publish(route, payload, attempts)).await {
                Err(_) => {
                    return Err(QueueError::Unconfirmed(format!(
                        "queue {}: no confirm within {timeout:?}",
                        route.queue()
                    )))
                }
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) if link.check_lost() => {
                    tracing::warn!(queue = route.queue(), error = %e, "publish interrupted by a lost connection; retrying");
                }
                Ok(Err(e)) => return Err(e),
            }
        }
    }

    /// Publishes a copy of `delivery` elsewhere, then acks the original: the message is never
    /// in neither place. If the copy fails, the original is handed back to the broker at once
    /// rather than held unacked, where it would take a prefetch slot until the connection ends.
    async fn move_then_ack(&self, link: &Link, tag: Tag, route: Route, delivery: &Delivery) -> Result<(), QueueError> {
        if let Err(e) = self.publish_route(route, &delivery.payload, Some(delivery.attempts)).await {
            if let Err(requeue) = link.requeue(tag.topic, tag.delivery_tag).await {
                tracing::debug!(error = %requeue, "requeue after a failed move");
            }
            return Err(e);
        }
        link.ack(tag.topic, tag.delivery_tag).await
    }
}

#[async_trait]
impl Queue for AmqpQueue {
    async fn publish(&self, topic: Topic, payload: Vec<u8>, delay: Duration) -> Result<(), QueueError> {
        self.publish_route(route_of(topic, delay), &payload, None).await
    }

    /// Pipelined: every message sent, then every confirm awaited, within one confirm timeout. A
    /// connection lost midway is left to the caller's next try (the relay's next round).
    async fn publish_all(&self, messages: Vec<Outgoing>) -> Result<(), PartlyPublished> {
        let timeout = self.shared.options.confirm_timeout;
        let deadline = Instant::now() + timeout;
        let routes: Vec<(Route, &[u8])> = messages
            .iter()
            .map(|m| (route_of(m.topic, m.delay), m.payload.as_slice()))
            .collect();
        let unpublished = |published, error| PartlyPublished { published, error };
        let link = self.shared.wait_link(deadline).await.map_err(|e| unpublished(0, e))?;
        match tokio::time::timeout_at(deadline, link.publish_many(&routes)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err((published, error))) => Err(unpublished(published, error)),
            Err(_) => Err(unpublished(
                0,
                QueueError::Unconfirmed(format!("{} messages: no confirm within {timeout:?}", routes.len())),
            )),
        }
    }

    async fn receive(&self, topics: &[Topic]) -> Result<Delivery, QueueError> {
        let shared = &self.shared;
        shared.want(topics);
        let mut links = shared.subscribe();
        loop {
            let arrival = shared.inbox.arrival();
            tokio::pin!(arrival);
            arrival.as_mut().enable();
            if shared.closed.is_cancelled() {
                return Err(QueueError::Closed);
            }
            let link = links.borrow_and_update().clone().filter(|link| !link.is_lost());
            if let Some(delivery) = shared.inbox.take(topics, link.as_ref().map(|l| l.generation)) {
                return Ok(delivery);
            }
            if let Some(link) = &link {
                shared.start_consumers(link, topics).await;
            }
            tokio::select! {
                () = &mut arrival => {}
                changed = links.changed() => {
                    if changed.is_err() {
                        return Err(QueueError::Closed);
                    }
                }
                () = shared.closed.cancelled() => return Err(QueueError::Closed),
            }
        }
    }

    async fn ack(&self, delivery: &Delivery) -> Result<(), QueueError> {
        let tag = decode(delivery.tag)?;
        match self.shared.link_of(tag.generation) {
            Some(link) => link.ack(tag.topic, tag.delivery_tag).await,
            None => {
                tracing::debug!(
                    topic = tag.topic.as_str(),
                    "ack of a delivery from a lost connection; the broker redelivers it"
                );
                Ok(())
            }
        }
    }

    async fn nack(&self, delivery: &Delivery, delay: Duration) -> Result<(), QueueError> {
        let tag = decode(delivery.tag)?;
        let Some(link) = self.shared.link_of(tag.generation) else {
            tracing::debug!(
                topic = tag.topic.as_str(),
                "nack of a delivery from a lost connection; the broker redelivers it"
            );
            return Ok(());
        };
        if delivery.attempts >= self.shared.options.delivery_limit {
            tracing::warn!(
                topic = tag.topic.as_str(),
                attempts = delivery.attempts,
                "message dead-lettered after too many attempts"
            );
            return self.move_then_ack(&link, tag, Route::Dead(tag.topic), delivery).await;
        }
        match delay_millis(delay) {
            // The quorum queue counts this return: its delivery limit catches a message that
            // kills its consumer before anyone can nack it.
            0 => link.requeue(tag.topic, tag.delivery_tag).await,
            millis => self.move_then_ack(&link, tag, Route::Retry(tag.topic, millis), delivery).await,
        }
    }
}

fn check_options(options: &AmqpOptions) -> Result<(), QueueError> {
    let problem = if options.prefetch == 0 || options.events_prefetch == Some(0) || options.realtime_prefetch == Some(0) {
        "prefetch must be at least 1 (0 would mean unlimited)"
    } else if options.delivery_limit == 0 {
        "delivery_limit must be at least 1"
    } else if options.confirm_timeout.is_zero() {
        "confirm_timeout must be positive"
    } else {
        return Ok(());
    };
    Err(QueueError::Broker(format!("invalid AMQP options: {problem}")))
}

fn decode(tag: u64) -> Result<Tag, QueueError> {
    Tag::decode(tag).ok_or_else(|| QueueError::Storage(format!("delivery tag {tag:#x} does not come from the AMQP queue")))
}

/// Whole milliseconds of a delay, a non-zero delay rounding up to at least 1 ms.
/// Where a message published after `delay` goes: its topic, or the retry queue of that delay.
fn route_of(topic: Topic, delay: Duration) -> Route {
    match delay_millis(delay) {
        0 => Route::Topic(topic),
        millis => Route::Retry(topic, millis),
    }
}

fn delay_millis(delay: Duration) -> u64 {
    if delay.is_zero() {
        return 0;
    }
    u64::try_from(delay.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// A passive declare: the queue's depth without creating or changing it.
async fn inspect(link: &Link, channel: &Channel, name: String) -> Result<QueueStat, QueueError> {
    let options = QueueDeclareOptions {
        passive: true,
        ..QueueDeclareOptions::default()
    };
    let queue = channel
        .queue_declare(name.as_str().into(), options, FieldTable::default())
        .await
        .map_err(|e| link.failed(e))?;
    Ok(QueueStat {
        name,
        ready: queue.message_count(),
        consumers: queue.consumer_count(),
    })
}
