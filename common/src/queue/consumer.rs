//! The one way a message is published and handled: published on its own topic, decoded, handled
//! inside its span, then acked or handed back as the handler says. A message that cannot be
//! decoded can never succeed, so it is logged and dropped rather than retried forever.

use super::{Delivery, Outgoing, Queue, QueueError};
use crate::messages::Message;
use std::future::Future;
use std::time::Duration;
use tracing::Instrument;

/// What becomes of a delivery once handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settle {
    /// Its effect is durable (or it was moved elsewhere): forget it.
    Ack,
    /// Hand it out again after this delay (dead-lettered once tried too often).
    Retry(Duration),
    /// Its effect is these messages: publish them and forget it, together where the backend
    /// can ([`Queue::ack_publishing`]); hand it out again after `or_retry` if that fails.
    AckPublishing { messages: Vec<Outgoing>, or_retry: Duration },
}

/// `message` ready to publish on its topic, after `delay` (webhook retries), fairly among its
/// owners when its topic is shared.
pub fn outgoing<M: Message>(message: &M, delay: Duration) -> Result<Outgoing, QueueError> {
    let payload = serde_json::to_vec(message).map_err(|e| QueueError::Storage(format!("cannot encode a message: {e}")))?;
    Ok(Outgoing {
        topic: message.topic(),
        owner: message.owner().map(str::to_owned),
        payload,
        delay,
    })
}

/// Publishes `message` on its topic, after `delay` (webhook retries), fairly among its owners
/// when its topic is shared.
pub async fn publish<M: Message>(queue: &dyn Queue, message: &M, delay: Duration) -> Result<(), QueueError> {
    let payload = serde_json::to_vec(message).map_err(|e| QueueError::Storage(format!("cannot encode a message: {e}")))?;
    match message.owner() {
        Some(owner) if delay.is_zero() => queue.publish_owned(message.topic(), owner, payload).await,
        _ => queue.publish(message.topic(), payload, delay).await,
    }
}

/// Decodes `delivery` as an `M`, runs `handler` in the message's span and settles the delivery
/// as it answers. Returns what the handler returned beside its answer; `None` for a message that
/// could not be decoded (dropped).
pub async fn handle<M, T, F, Fut>(queue: &dyn Queue, delivery: &Delivery, handler: F) -> Option<T>
where
    M: Message,
    F: FnOnce(M) -> Fut,
    Fut: Future<Output = (Settle, T)>,
{
    let message: M = match serde_json::from_slice(&delivery.payload) {
        Ok(message) => message,
        Err(error) => {
            tracing::error!(topic = delivery.topic.as_str(), %error, "undecodable message dropped");
            if let Err(error) = queue.ack(delivery).await {
                tracing::warn!(%error, "could not drop an undecodable message; it will come back");
            }
            return None;
        }
    };
    let span = message.span();
    let (settle, value) = handler(message).instrument(span.clone()).await;
    let settled = match &settle {
        Settle::Ack => queue.ack(delivery).await,
        Settle::Retry(delay) => queue.nack(delivery, *delay).await,
        Settle::AckPublishing { messages, or_retry } => match queue.ack_publishing(delivery, messages.clone()).await {
            Ok(()) => Ok(()),
            Err(error) => {
                span.in_scope(|| tracing::warn!(%error, "could not publish what a message led to; it will be handled again"));
                queue.nack(delivery, *or_retry).await
            }
        },
    };
    if let Err(error) = settled {
        // Either way the message comes back; its handling is idempotent.
        span.in_scope(|| tracing::warn!(%error, ?settle, "could not settle a message; it will be handled again"));
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{EventDelivery, RecorderMessage};
    use crate::queue::Topic;
    use crate::store::queue::SqliteQueue;
    use crate::store::test_support::TempStore;

    fn event() -> EventDelivery {
        EventDelivery {
            event_id: domain::ids::EventId::generate(chrono::Utc::now()),
            company_id: domain::ids::CompanyId::generate(chrono::Utc::now()),
            url: "https://example.com/hook".into(),
            body: "{}".into(),
            attempt: 1,
            deferrals: 0,
            request_id: None,
        }
    }

    #[tokio::test]
    async fn messages_go_to_their_topic_and_are_settled_as_the_handler_says() {
        let store = TempStore::new("consumer");
        let queue = SqliteQueue::new(store.handle(), 2);
        publish(&queue, &event(), Duration::ZERO).await.unwrap();
        let delivery = queue.receive(&[Topic::Events]).await.unwrap();
        let handled = handle(&queue, &delivery, |e: EventDelivery| async move {
            (Settle::Retry(Duration::ZERO), e.attempt)
        })
        .await;
        assert_eq!(handled, Some(1));
        let again = queue.receive(&[Topic::Events]).await.unwrap();
        assert_eq!(again.attempts, 2, "handed back");
        handle(&queue, &again, |_: EventDelivery| async { (Settle::Ack, ()) }).await;
        assert_eq!(queue.dead_letters(Topic::Events).await.unwrap(), 0);

        // A payload of another kind cannot be decoded: dropped, not retried.
        queue
            .publish(Topic::Results, b"{\"not\":\"a result\"}".to_vec(), Duration::ZERO)
            .await
            .unwrap();
        let odd = queue.receive(&[Topic::Results]).await.unwrap();
        let handled = handle(&queue, &odd, |_: RecorderMessage| async { (Settle::Ack, ()) }).await;
        assert_eq!(handled, None);
        let next = tokio::time::timeout(Duration::from_millis(300), queue.receive(&[Topic::Results])).await;
        assert!(next.is_err(), "the undecodable message is gone");
    }
}
