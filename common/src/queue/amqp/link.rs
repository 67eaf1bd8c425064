//! One connection to the broker and everything that dies with it: the confirm-mode publishing
//! channel, the consumer channels and their delivery tags. A broken link is never repaired in
//! place; the supervisor replaces it with a new one of a new generation, so a delivery tag of a
//! dead channel can never acknowledge a message of a live one.

use super::inbox::{self, Inbox};
use super::topology::{self, Route, ATTEMPTS_HEADER};
use crate::queue::{QueueError, Topic};
use lapin::message::DeliveryResult;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicPublishOptions, BasicQosOptions, ConfirmSelectOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Acker, BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, Consumer, ConsumerDelegate};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// AMQP delivery mode of messages written to disk.
const PERSISTENT: u8 = 2;
/// Reply code of a normal connection close.
const REPLY_SUCCESS: u16 = 200;

pub(super) struct Link {
    pub(super) generation: u32,
    connection: Connection,
    publisher: Channel,
    /// Consumer channels by topic, watched for health.
    channels: Mutex<HashMap<Topic, Channel>>,
    /// The ackers of deliveries handed out and not settled yet. Settling takes the acker out,
    /// so a second ack or nack of one delivery is a no-op instead of an unknown delivery tag,
    /// which the broker would punish by closing the channel.
    unsettled: Arc<Mutex<HashMap<(Topic, u64), Acker>>>,
    /// Kept because dropping a lapin `Consumer` cancels it on the broker.
    consumers: Mutex<Vec<Consumer>>,
    /// Serialises consumer starts so that two callers never start the same topic twice.
    starting: tokio::sync::Mutex<()>,
    /// Retry queues already declared on this connection.
    retry_queues: Mutex<HashSet<String>>,
    /// Cancelled by whoever first sees the link fail; the supervisor then replaces it.
    lost: CancellationToken,
}

impl Link {
    /// Deliveries handed out and not settled yet, per topic (the broker's "unacked").
    pub(super) fn unsettled_by_topic(&self) -> HashMap<Topic, usize> {
        let mut counts = HashMap::new();
        for (topic, _) in lock(&self.unsettled).keys() {
            *counts.entry(*topic).or_insert(0) += 1;
        }
        counts
    }

    /// Connects, declares the topology and opens the confirm-mode publishing channel.
    pub(super) async fn open(url: &str, generation: u32, delivery_limit: u32) -> Result<Link, QueueError> {
        let properties = ConnectionProperties::default().with_connection_name(format!("sceau/{}", std::process::id()).into());
        let connection = Connection::connect(url, properties).await?;
        let publisher = connection.create_channel().await?;
        topology::declare(&publisher, delivery_limit).await?;
        publisher.confirm_select(ConfirmSelectOptions::default()).await?;
        Ok(Link {
            generation,
            connection,
            publisher,
            channels: Mutex::new(HashMap::new()),
            unsettled: Arc::new(Mutex::new(HashMap::new())),
            consumers: Mutex::new(Vec::new()),
            starting: tokio::sync::Mutex::new(()),
            retry_queues: Mutex::new(HashSet::new()),
            lost: CancellationToken::new(),
        })
    }

    /// Publishes through the default exchange and waits for the broker's confirm: only an ack
    /// without a returned message means the broker stored it.
    pub(super) async fn publish(&self, route: Route, payload: &[u8], attempts: Option<u32>) -> Result<(), QueueError> {
        if let Route::Retry(topic, millis) = route {
            self.declare_retry_queue(topic, millis).await?;
        }
        let queue = route.queue();
        let options = BasicPublishOptions {
            mandatory: true,
            immediate: false,
        };
        let confirm = self
            .publisher
            .basic_publish("".into(), queue.as_str().into(), options, payload, properties(attempts))
            .await
            .map_err(|e| self.failed(e))?;
        let confirmation = tokio::select! {
            confirmation = confirm => confirmation.map_err(|e| self.failed(e))?,
            () = self.lost.cancelled() => return Err(QueueError::Broker("connection lost before the publish was confirmed".into())),
        };
        check_confirmation(confirmation, &queue)
    }

    /// Publishes `messages` one after another without waiting, then waits for their confirms in
    /// order: one round trip to the broker (and one of its disk writes) for them all, where a
    /// confirm each held the outbox relay to about 900 messages a second. On an error, how many
    /// of the first messages are known stored comes with it; the others may or may not be.
    pub(super) async fn publish_many(&self, messages: &[(Route, &[u8])]) -> Result<(), (usize, QueueError)> {
        let options = BasicPublishOptions {
            mandatory: true,
            immediate: false,
        };
        let mut confirms = Vec::with_capacity(messages.len());
        for (route, payload) in messages {
            if let Route::Retry(topic, millis) = route {
                self.declare_retry_queue(*topic, *millis).await.map_err(|e| (0, e))?;
            }
            let queue = route.queue();
            let confirm = self
                .publisher
                .basic_publish("".into(), queue.as_str().into(), options, payload, properties(None))
                .await
                .map_err(|e| (0, self.failed(e)))?;
            confirms.push((queue, confirm));
        }
        for (stored, (queue, confirm)) in confirms.into_iter().enumerate() {
            let confirmation = tokio::select! {
                confirmation = confirm => confirmation.map_err(|e| (stored, self.failed(e)))?,
                () = self.lost.cancelled() => {
                    return Err((stored, QueueError::Broker("connection lost before the publish was confirmed".into())))
                }
            };
            check_confirmation(confirmation, &queue).map_err(|e| (stored, e))?;
        }
        Ok(())
    }

    async fn declare_retry_queue(&self, topic: Topic, millis: u64) -> Result<(), QueueError> {
        let name = Route::Retry(topic, millis).queue();
        if lock(&self.retry_queues).contains(&name) {
            return Ok(());
        }
        // A scratch channel: a refused declare closes its channel, and that must not be ours.
        let channel = self.scratch_channel().await?;
        topology::declare_retry(&channel, topic, millis).await.map_err(|e| self.failed(e))?;
        lock(&self.retry_queues).insert(name);
        Ok(())
    }

    /// Starts the topic's consumer on its own channel unless it runs already.
    pub(super) async fn ensure_consumer(&self, topic: Topic, prefetch: u16, inbox: &Arc<Inbox>) -> Result<(), QueueError> {
        if self.consumer_channel(topic).is_some() {
            return Ok(());
        }
        let _starting = self.starting.lock().await;
        if self.consumer_channel(topic).is_some() {
            return Ok(());
        }
        self.start_consumer(topic, prefetch, inbox).await.map_err(|e| self.failed(e))
    }

    async fn start_consumer(&self, topic: Topic, prefetch: u16, inbox: &Arc<Inbox>) -> lapin::Result<()> {
        let channel = self.connection.create_channel().await?;
        channel.basic_qos(prefetch, BasicQosOptions::default()).await?;
        let consumer_tag = format!("sceau.{}.g{}", topic.as_str(), self.generation);
        let consumer = channel
            .basic_consume(
                topic.as_str().into(),
                consumer_tag.into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        lock(&self.channels).insert(topic, channel);
        consumer.set_delegate(Forwarder {
            inbox: inbox.clone(),
            unsettled: self.unsettled.clone(),
            topic,
            generation: self.generation,
            lost: self.lost.clone(),
        });
        lock(&self.consumers).push(consumer);
        Ok(())
    }

    pub(super) async fn ack(&self, topic: Topic, delivery_tag: u64) -> Result<(), QueueError> {
        let Some(acker) = self.take_acker(topic, delivery_tag) else {
            return Ok(());
        };
        let outcome = acker.ack(BasicAckOptions::default()).await;
        self.settle_outcome(outcome)
    }

    pub(super) async fn requeue(&self, topic: Topic, delivery_tag: u64) -> Result<(), QueueError> {
        let Some(acker) = self.take_acker(topic, delivery_tag) else {
            return Ok(());
        };
        let options = BasicNackOptions {
            multiple: false,
            requeue: true,
        };
        let outcome = acker.nack(options).await;
        self.settle_outcome(outcome)
    }

    fn take_acker(&self, topic: Topic, delivery_tag: u64) -> Option<Acker> {
        let acker = lock(&self.unsettled).remove(&(topic, delivery_tag));
        if acker.is_none() {
            tracing::debug!(topic = topic.as_str(), delivery_tag, "delivery already settled");
        }
        acker
    }

    /// A settlement lost with its connection is no failure: the broker hands the message out
    /// again. lapin answers `false` when the channel was already gone.
    fn settle_outcome(&self, outcome: lapin::Result<bool>) -> Result<(), QueueError> {
        match outcome {
            Ok(true) => Ok(()),
            Ok(false) => {
                tracing::warn!("delivery settled on a closed channel; the broker will redeliver it");
                self.check_lost();
                Ok(())
            }
            Err(e) if self.check_lost() => {
                tracing::warn!(error = %e, "delivery settled on a lost connection; the broker will redeliver it");
                Ok(())
            }
            Err(e) => Err(self.failed(e)),
        }
    }

    /// A short-lived channel for declares, passive declares and gets: any of them may close its
    /// channel on refusal (404, 406), which must not take the publishing or consuming channels along.
    pub(super) async fn scratch_channel(&self) -> Result<Channel, QueueError> {
        self.connection.create_channel().await.map_err(|e| self.failed(e))
    }

    fn consumer_channel(&self, topic: Topic) -> Option<Channel> {
        lock(&self.channels).get(&topic).cloned()
    }

    /// Converts a lapin error, marking the link lost when the error came from a dead connection
    /// or channel (the caller cannot tell a refused operation from a lost connection otherwise).
    pub(super) fn failed(&self, error: lapin::Error) -> QueueError {
        self.check_lost();
        QueueError::from(error)
    }

    /// True when the link is (now known to be) lost.
    pub(super) fn check_lost(&self) -> bool {
        if !self.healthy() {
            self.lost.cancel();
        }
        self.lost.is_cancelled()
    }

    pub(super) fn healthy(&self) -> bool {
        self.connection.status().connected()
            && self.publisher.status().connected()
            && lock(&self.channels).values().all(|channel| channel.status().connected())
    }

    pub(super) fn is_lost(&self) -> bool {
        self.lost.is_cancelled()
    }

    pub(super) async fn lost(&self) {
        self.lost.cancelled().await;
    }

    pub(super) fn mark_lost(&self) {
        self.lost.cancel();
    }

    /// Closes the connection politely if it is still open; its unacked deliveries go back to
    /// their queues.
    pub(super) async fn shutdown(&self) {
        self.lost.cancel();
        // Channels first: closing the connection under open consumer channels makes lapin log
        // protocol errors for frames still in flight, on every clean shutdown.
        let channels: Vec<Channel> = lock(&self.channels)
            .drain()
            .map(|(_, c)| c)
            .chain(std::iter::once(self.publisher.clone()))
            .collect();
        for channel in channels {
            if channel.status().connected() {
                if let Err(e) = channel.close(REPLY_SUCCESS, "OK".into()).await {
                    tracing::debug!(error = %e, "closing a broker channel");
                }
            }
        }
        if self.connection.status().connected() {
            if let Err(e) = self.connection.close(REPLY_SUCCESS, "OK".into()).await {
                tracing::debug!(error = %e, "closing a broker connection");
            }
        }
    }
}

fn properties(attempts: Option<u32>) -> BasicProperties {
    let properties = BasicProperties::default().with_delivery_mode(PERSISTENT);
    match attempts {
        Some(attempts) => {
            let mut headers = FieldTable::default();
            headers.insert(ATTEMPTS_HEADER.into(), AMQPValue::LongLongInt(i64::from(attempts)));
            properties.with_headers(headers)
        }
        None => properties,
    }
}

fn check_confirmation(confirmation: Confirmation, queue: &str) -> Result<(), QueueError> {
    match confirmation {
        Confirmation::Ack(None) => Ok(()),
        Confirmation::Ack(Some(returned)) | Confirmation::Nack(Some(returned)) => Err(QueueError::Unroutable(format!(
            "queue {queue}: {} {}",
            returned.reply_code, returned.reply_text
        ))),
        Confirmation::Nack(None) => Err(QueueError::Unconfirmed(format!("queue {queue}: the broker nacked the publish"))),
        Confirmation::NotRequested => Err(QueueError::Unconfirmed(format!("queue {queue}: publisher confirms are off"))),
    }
}

/// Moves each delivery of one consumer into the inbox. It runs synchronously in lapin's dispatch,
/// so deliveries keep the broker's order (lapin would spawn the returned future as a task).
struct Forwarder {
    inbox: Arc<Inbox>,
    unsettled: Arc<Mutex<HashMap<(Topic, u64), Acker>>>,
    topic: Topic,
    generation: u32,
    lost: CancellationToken,
}

impl ConsumerDelegate for Forwarder {
    fn on_new_delivery(&self, delivery: DeliveryResult) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        match delivery {
            Ok(Some(delivery)) => {
                // Registered before the delivery can be handed out, so that its ack finds it.
                lock(&self.unsettled).insert((self.topic, delivery.delivery_tag), delivery.acker.clone());
                self.inbox.push(inbox::to_delivery(delivery, self.topic, self.generation));
            }
            // Our own shutdown of a lost link ends its consumers too: nothing to report then.
            Ok(None) | Err(_) if self.lost.is_cancelled() => {}
            Ok(None) => {
                tracing::warn!(topic = self.topic.as_str(), "consumer cancelled by the broker; reconnecting");
                self.lost.cancel();
            }
            Err(e) => {
                tracing::warn!(topic = self.topic.as_str(), error = %e, "consumer failed; reconnecting");
                self.lost.cancel();
            }
        }
        Box::pin(std::future::ready(()))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here is a single map operation: a poisoned lock holds consistent data.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
