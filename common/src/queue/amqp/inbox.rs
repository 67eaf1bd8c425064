//! Deliveries wait here between the consumers (one per topic, pushing as the broker sends) and
//! `receive` (taking in the caller's priority order). Looking at every topic's buffer in order on
//! each take is what keeps a real-time job from waiting behind batch jobs already prefetched.

use super::tag::Tag;
use super::topology::{ATTEMPTS_HEADER, DELIVERY_COUNT_HEADER};
use crate::queue::{Delivery, Topic};
use lapin::types::{AMQPValue, FieldTable};
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::futures::Notified;
use tokio::sync::Notify;

#[derive(Default)]
pub(super) struct Inbox {
    buffers: Mutex<HashMap<Topic, VecDeque<Delivery>>>,
    arrived: Notify,
}

impl Inbox {
    pub(super) fn push(&self, delivery: Delivery) {
        self.lock().entry(delivery.topic).or_default().push_back(delivery);
        self.arrived.notify_waiters();
    }

    /// A future resolved by the next push; create it (and enable it) before looking, so that a
    /// push between the look and the wait is not missed.
    pub(super) fn arrival(&self) -> Notified<'_> {
        self.arrived.notified()
    }

    /// The first delivery of the first topic that has one, in the given order. Deliveries of an
    /// older connection are dropped on the way: their acks would be lost, the broker hands them
    /// out again on the new connection. Without a live connection nothing is handed out, nor
    /// dropped: a new connection fills the inbox before it is installed.
    pub(super) fn take(&self, topics: &[Topic], live_generation: Option<u32>) -> Option<Delivery> {
        let live_generation = live_generation?;
        let mut buffers = self.lock();
        for topic in topics {
            let Some(buffer) = buffers.get_mut(topic) else { continue };
            while let Some(delivery) = buffer.pop_front() {
                if generation_of(&delivery) == Some(live_generation) {
                    return Some(delivery);
                }
            }
        }
        None
    }

    /// Forgets everything buffered: called when the connection that received it is gone.
    pub(super) fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Topic, VecDeque<Delivery>>> {
        // A panic while holding this lock cannot leave a half-updated buffer behind.
        self.buffers.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn generation_of(delivery: &Delivery) -> Option<u32> {
    Tag::decode(delivery.tag).map(|tag| tag.generation)
}

/// Turns a broker delivery into the queue's `Delivery`, its tag naming the channel it came from.
pub(super) fn to_delivery(delivery: lapin::message::Delivery, topic: Topic, generation: u32) -> Delivery {
    let tag = Tag {
        generation,
        topic,
        delivery_tag: delivery.delivery_tag,
    };
    Delivery {
        topic,
        attempts: attempts(delivery.properties.headers().as_ref()),
        payload: delivery.data,
        tag: tag.encode(),
    }
}

/// Attempts spent on earlier copies (retries carry them in a header) plus the deliveries of this
/// copy (quorum queues count returns in `x-delivery-count`), this one included.
pub(super) fn attempts(headers: Option<&FieldTable>) -> u32 {
    let earlier = header_count(headers, ATTEMPTS_HEADER);
    let returned = header_count(headers, DELIVERY_COUNT_HEADER);
    earlier.saturating_add(returned).saturating_add(1)
}

/// A missing or malformed count is taken as zero: a header must never make a message unreadable.
fn header_count(headers: Option<&FieldTable>, name: &str) -> u32 {
    let value = headers.and_then(|h| h.inner().get(name));
    let count = match value {
        Some(AMQPValue::LongLongInt(v)) => *v,
        Some(AMQPValue::LongInt(v)) => i64::from(*v),
        Some(AMQPValue::LongUInt(v)) => i64::from(*v),
        Some(AMQPValue::ShortInt(v)) => i64::from(*v),
        Some(AMQPValue::ShortUInt(v)) => i64::from(*v),
        Some(AMQPValue::ShortShortInt(v)) => i64::from(*v),
        Some(AMQPValue::ShortShortUInt(v)) => i64::from(*v),
        _ => 0,
    };
    u32::try_from(count.max(0)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(entries: &[(&str, AMQPValue)]) -> FieldTable {
        let mut table = FieldTable::default();
        for (name, value) in entries {
            table.insert((*name).into(), value.clone());
        }
        table
    }

    fn delivery(topic: Topic, generation: u32, delivery_tag: u64) -> Delivery {
        Delivery {
            topic,
            payload: delivery_tag.to_string().into_bytes(),
            attempts: 1,
            tag: Tag {
                generation,
                topic,
                delivery_tag,
            }
            .encode(),
        }
    }

    #[test]
    fn attempts_add_earlier_copies_and_broker_redeliveries() {
        assert_eq!(attempts(None), 1);
        assert_eq!(attempts(Some(&headers(&[(DELIVERY_COUNT_HEADER, AMQPValue::LongLongInt(1))]))), 2);
        assert_eq!(attempts(Some(&headers(&[(ATTEMPTS_HEADER, AMQPValue::LongUInt(3))]))), 4);
        let both = headers(&[
            (ATTEMPTS_HEADER, AMQPValue::LongLongInt(3)),
            (DELIVERY_COUNT_HEADER, AMQPValue::LongInt(2)),
        ]);
        assert_eq!(attempts(Some(&both)), 6);
        let junk = headers(&[
            (ATTEMPTS_HEADER, AMQPValue::Boolean(true)),
            (DELIVERY_COUNT_HEADER, AMQPValue::LongInt(-4)),
        ]);
        assert_eq!(attempts(Some(&junk)), 1);
    }

    #[test]
    fn take_honours_topic_order_and_drops_stale_generations() {
        let inbox = Inbox::default();
        inbox.push(delivery(Topic::JobsBatch, 2, 1));
        inbox.push(delivery(Topic::JobsRealtime, 1, 1));
        inbox.push(delivery(Topic::JobsRealtime, 2, 2));
        let order = [Topic::JobsRealtime, Topic::JobsBatch];
        assert_eq!(inbox.take(&order, Some(2)).map(|d| d.payload), Some(b"2".to_vec()));
        assert_eq!(inbox.take(&order, Some(2)).map(|d| d.topic), Some(Topic::JobsBatch));
        assert!(inbox.take(&order, Some(2)).is_none());
        inbox.push(delivery(Topic::JobsBatch, 3, 3));
        assert!(inbox.take(&order, None).is_none(), "nothing is handed out while disconnected");
        assert_eq!(
            inbox.take(&order, Some(3)).map(|d| d.payload),
            Some(b"3".to_vec()),
            "a new connection's deliveries, buffered before it was installed, are kept"
        );
    }
}
