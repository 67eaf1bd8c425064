//! The `Delivery.tag` of an AMQP delivery: the broker's delivery tag only means something on the
//! channel that received it, so the tag also carries the topic (which consumer channel) and the
//! connection generation (which connection). An ack for a delivery of a dead connection is then
//! recognised and dropped instead of acknowledging an unrelated message of a new channel.

use crate::queue::Topic;

const TOPIC_BITS: u32 = 4;
const DELIVERY_BITS: u32 = 40;
const GENERATION_BITS: u32 = 64 - TOPIC_BITS - DELIVERY_BITS;
const DELIVERY_MASK: u64 = (1 << DELIVERY_BITS) - 1;
const TOPIC_MASK: u64 = (1 << TOPIC_BITS) - 1;
/// Generations wrap around after about a million reconnections: a delivery would have to stay
/// unacknowledged that long to be mistaken for a live one.
pub(super) const GENERATION_MASK: u32 = (1 << GENERATION_BITS) - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tag {
    pub(super) generation: u32,
    pub(super) topic: Topic,
    /// The broker's delivery tag on the topic's consumer channel (a channel counts from 1 and
    /// would need 2^40 deliveries to overflow the field).
    pub(super) delivery_tag: u64,
}

impl Tag {
    pub(super) fn encode(self) -> u64 {
        let generation = u64::from(self.generation & GENERATION_MASK);
        (generation << (TOPIC_BITS + DELIVERY_BITS)) | (topic_index(self.topic) << DELIVERY_BITS) | (self.delivery_tag & DELIVERY_MASK)
    }

    pub(super) fn decode(tag: u64) -> Option<Tag> {
        let index = usize::try_from((tag >> DELIVERY_BITS) & TOPIC_MASK).ok()?;
        let topic = *Topic::ALL.get(index)?;
        let generation = u32::try_from(tag >> (TOPIC_BITS + DELIVERY_BITS)).ok()?;
        Some(Tag {
            generation,
            topic,
            delivery_tag: tag & DELIVERY_MASK,
        })
    }
}

/// The generation that follows `current`, skipping 0 so that a zero tag never looks live.
pub(super) fn next_generation(current: u32) -> u32 {
    match current.wrapping_add(1) & GENERATION_MASK {
        0 => 1,
        next => next,
    }
}

fn topic_index(topic: Topic) -> u64 {
    Topic::ALL.iter().position(|t| *t == topic).unwrap_or(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_for_every_topic_and_large_values() {
        for topic in Topic::ALL {
            for (generation, delivery_tag) in [(1, 1), (GENERATION_MASK, DELIVERY_MASK), (77, 123_456_789)] {
                let tag = Tag {
                    generation,
                    topic,
                    delivery_tag,
                };
                assert_eq!(Tag::decode(tag.encode()), Some(tag));
            }
        }
    }

    #[test]
    fn generations_wrap_without_zero() {
        assert_eq!(next_generation(1), 2);
        assert_eq!(next_generation(GENERATION_MASK), 1);
    }

    #[test]
    fn a_tag_with_an_unknown_topic_index_is_rejected() {
        assert_eq!(Tag::decode(9 << DELIVERY_BITS), None);
    }
}
