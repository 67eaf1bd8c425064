//! Tests against the local RabbitMQ (127.0.0.1:5672, guest), each in a vhost of its own created
//! and deleted with `rabbitmqctl`, so tests and concurrent runs never see each other's messages
//! or connections. Without RabbitMQ or rabbitmqctl they fail with a clear message: never skip.

use super::*;
use std::process::Command;

/// Generous bound for anything that should happen "soon".
const WAIT: Duration = Duration::from_secs(10);

struct Vhost {
    name: String,
}

impl Vhost {
    fn create(label: &str) -> Vhost {
        let vhost = Vhost {
            name: format!("sceau-test-{label}-{}", domain::ids::random_hex(6)),
        };
        rabbitmqctl(&["add_vhost", &vhost.name]);
        vhost.allow_guest();
        vhost
    }

    fn url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:5672/{}", percent_encode(&self.name))
    }

    fn allow_guest(&self) {
        rabbitmqctl(&["set_permissions", "-p", &self.name, "guest", ".*", ".*", ".*"]);
    }

    fn deny_guest(&self) {
        rabbitmqctl(&["clear_permissions", "-p", &self.name, "guest"]);
    }

    /// What a broker restart looks like to clients, limited to this test's vhost.
    fn close_connections(&self) {
        rabbitmqctl(&["close_all_connections", "-p", &self.name, "sceau test: simulated broker restart"]);
    }
}

impl Drop for Vhost {
    fn drop(&mut self) {
        let _ = Command::new("rabbitmqctl").args(["delete_vhost", &self.name]).output();
    }
}

fn rabbitmqctl(args: &[&str]) -> String {
    let output = Command::new("rabbitmqctl").args(args).output().unwrap_or_else(|e| {
        panic!("cannot run rabbitmqctl ({e}): the AMQP queue tests need a local RabbitMQ and its rabbitmqctl on PATH; they never skip")
    });
    assert!(
        output.status.success(),
        "rabbitmqctl {args:?} failed (is RabbitMQ running on 127.0.0.1:5672?): {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs a blocking `Vhost` command off the runtime, so the queue's tasks keep running meanwhile.
async fn blocking(vhost: &Arc<Vhost>, command: fn(&Vhost)) {
    let vhost = vhost.clone();
    tokio::task::spawn_blocking(move || command(&vhost)).await.unwrap();
}

fn percent_encode(raw: &str) -> String {
    raw.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Shows the queue's logs with `--nocapture` (and in failing tests' output).
fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter("common=debug")
        .with_test_writer()
        .try_init();
}

fn options() -> AmqpOptions {
    AmqpOptions {
        prefetch: 4,
        events_prefetch: None,
        realtime_prefetch: None,
        results_prefetch: None,
        delivery_limit: 3,
        confirm_timeout: Duration::from_secs(5),
    }
}

async fn connect(vhost: &Vhost, options: AmqpOptions) -> AmqpQueue {
    init_logs();
    AmqpQueue::connect(&vhost.url(), options).await.unwrap_or_else(|e| {
        panic!("RabbitMQ not reachable on 127.0.0.1:5672 as guest ({e}): the AMQP queue tests need it; they never skip")
    })
}

/// A plain lapin channel on the test's vhost, to act on the broker behind the queue's back.
async fn raw_channel(vhost: &Vhost) -> (lapin::Connection, Channel) {
    let connection = lapin::Connection::connect(&vhost.url(), lapin::ConnectionProperties::default())
        .await
        .unwrap();
    let channel = connection.create_channel().await.unwrap();
    (connection, channel)
}

async fn receive_within(queue: &AmqpQueue, topics: &[Topic], within: Duration) -> Option<Delivery> {
    tokio::time::timeout(within, queue.receive(topics)).await.ok().map(|r| r.unwrap())
}

async fn receive_soon(queue: &AmqpQueue, topics: &[Topic]) -> Delivery {
    receive_within(queue, topics, WAIT).await.expect("a delivery within the wait bound")
}

fn ready_of(stats: &[QueueStat], name: &str) -> (u32, u32) {
    let stat = stats
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no stat for {name}"));
    (stat.ready, stat.consumers)
}

/// Many messages published at once (the outbox relay's round) arrive each once, in order, the
/// delayed one after its delay.
#[tokio::test]
async fn publish_all_sends_every_message_then_waits_for_their_confirms() {
    let vhost = Vhost::create("publish-all");
    let queue = connect(&vhost, options()).await;
    let outgoing = |payload: String, delay: Duration| crate::queue::Outgoing {
        topic: Topic::Results,
        owner: None,
        payload: payload.into_bytes(),
        delay,
    };
    let mut messages: Vec<_> = (0..100).map(|i| outgoing(format!("m{i}"), Duration::ZERO)).collect();
    messages.insert(50, outgoing("later".into(), Duration::from_millis(500)));
    queue.publish_all(messages).await.unwrap();
    let mut received = Vec::new();
    while let Some(delivery) = receive_within(&queue, &[Topic::Results], Duration::from_secs(3)).await {
        received.push(String::from_utf8(delivery.payload.clone()).unwrap());
        queue.ack(&delivery).await.unwrap();
        if received.len() == 101 {
            break;
        }
    }
    let mut expected: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
    expected.push("later".into());
    assert_eq!(received, expected);
}

#[tokio::test]
async fn publish_receive_ack_round_trip() {
    let vhost = Vhost::create("roundtrip");
    let queue = connect(&vhost, options()).await;
    queue.publish(Topic::Results, b"hello".to_vec(), Duration::ZERO).await.unwrap();
    let delivery = receive_soon(&queue, &[Topic::Results]).await;
    assert_eq!(
        (delivery.topic, delivery.payload.as_slice(), delivery.attempts),
        (Topic::Results, b"hello".as_slice(), 1)
    );
    queue.ack(&delivery).await.unwrap();
    // Settling twice is a caller's bug, but must not cost the connection (the broker closes a
    // channel acking an unknown delivery tag): the next delivery comes on the same connection.
    queue.ack(&delivery).await.unwrap();
    queue.nack(&delivery, Duration::ZERO).await.unwrap();
    queue.publish(Topic::Results, b"next".to_vec(), Duration::ZERO).await.unwrap();
    let next = receive_soon(&queue, &[Topic::Results]).await;
    assert_eq!(next.payload, b"next");
    let generation = |d: &Delivery| Tag::decode(d.tag).unwrap().generation;
    assert_eq!(generation(&next), generation(&delivery), "no reconnection happened");
    queue.ack(&next).await.unwrap();

    let stats = queue.queue_stats().await.unwrap();
    let names: Vec<_> = stats.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "jobs.realtime",
            "jobs.realtime.dead",
            "jobs.batch",
            "jobs.batch.dead",
            "results",
            "results.dead",
            "events",
            "events.dead",
            "jobs.realtime.overflow",
            "jobs.realtime.overflow.dead"
        ]
    );
    assert_eq!(ready_of(&stats, "results"), (0, 1));
    queue.close().await;
    assert!(matches!(queue.receive(&[Topic::Results]).await, Err(QueueError::Closed)));

    // The ack reached the broker: a new connection finds nothing to redeliver.
    let again = connect(&vhost, options()).await;
    assert!(receive_within(&again, &[Topic::Results], Duration::from_millis(500))
        .await
        .is_none());
    again.close().await;
}

#[tokio::test]
async fn realtime_is_served_before_batch_even_when_published_later() {
    let vhost = Vhost::create("priority");
    let queue = connect(&vhost, options()).await;
    let topics = [Topic::JobsRealtime, Topic::JobsBatch];
    // Start both consumers first, so that batch jobs are already prefetched when real-time comes.
    assert!(receive_within(&queue, &topics, Duration::from_millis(200)).await.is_none());
    for payload in [b"b1", b"b2", b"b3"] {
        queue.publish(Topic::JobsBatch, payload.to_vec(), Duration::ZERO).await.unwrap();
    }
    queue.publish(Topic::JobsRealtime, b"r1".to_vec(), Duration::ZERO).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut order = Vec::new();
    for _ in 0..4 {
        let delivery = receive_soon(&queue, &topics).await;
        order.push(String::from_utf8(delivery.payload.clone()).unwrap());
        queue.ack(&delivery).await.unwrap();
    }
    assert_eq!(order, ["r1", "b1", "b2", "b3"]);
    queue.close().await;
}

#[tokio::test]
async fn delayed_publish_arrives_after_its_delay_and_not_before() {
    let vhost = Vhost::create("delay");
    let queue = connect(&vhost, options()).await;
    let start = std::time::Instant::now();
    queue
        .publish(Topic::Events, b"later".to_vec(), Duration::from_millis(700))
        .await
        .unwrap();
    assert!(receive_within(&queue, &[Topic::Events], Duration::from_millis(400)).await.is_none());
    let delivery = receive_soon(&queue, &[Topic::Events]).await;
    assert!(start.elapsed() >= Duration::from_millis(700), "arrived after {:?}", start.elapsed());
    assert_eq!((delivery.payload.as_slice(), delivery.attempts), (b"later".as_slice(), 1));
    queue.ack(&delivery).await.unwrap();

    let (_connection, channel) = raw_channel(&vhost).await;
    let passive = QueueDeclareOptions {
        passive: true,
        ..QueueDeclareOptions::default()
    };
    let retry = channel
        .queue_declare("events.retry.700".into(), passive, FieldTable::default())
        .await
        .unwrap();
    assert_eq!(retry.message_count(), 0);
    queue.close().await;
}

#[tokio::test]
async fn nack_redelivers_now_or_after_a_delay_counting_attempts() {
    let vhost = Vhost::create("nack");
    let queue = connect(
        &vhost,
        AmqpOptions {
            delivery_limit: 5,
            ..options()
        },
    )
    .await;
    queue.publish(Topic::JobsBatch, b"flaky".to_vec(), Duration::ZERO).await.unwrap();
    let first = receive_soon(&queue, &[Topic::JobsBatch]).await;
    assert_eq!(first.attempts, 1);
    queue.nack(&first, Duration::ZERO).await.unwrap();

    let second = receive_soon(&queue, &[Topic::JobsBatch]).await;
    assert_eq!((second.payload.as_slice(), second.attempts), (b"flaky".as_slice(), 2));
    let start = std::time::Instant::now();
    queue.nack(&second, Duration::from_millis(400)).await.unwrap();
    assert!(receive_within(&queue, &[Topic::JobsBatch], Duration::from_millis(200))
        .await
        .is_none());

    let third = receive_soon(&queue, &[Topic::JobsBatch]).await;
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "came back after {:?}",
        start.elapsed()
    );
    assert_eq!((third.payload.as_slice(), third.attempts), (b"flaky".as_slice(), 3));
    queue.nack(&third, Duration::ZERO).await.unwrap();
    let fourth = receive_soon(&queue, &[Topic::JobsBatch]).await;
    assert_eq!(fourth.attempts, 4, "earlier copies and broker redeliveries add up");
    queue.ack(&fourth).await.unwrap();
    queue.close().await;
}

#[tokio::test]
async fn poison_message_is_dead_lettered_at_the_limit_and_can_be_replayed() {
    let vhost = Vhost::create("poison");
    let queue = connect(&vhost, options()).await;
    queue.publish(Topic::JobsBatch, b"poison".to_vec(), Duration::ZERO).await.unwrap();
    let mut attempts = Vec::new();
    while let Some(delivery) = receive_within(&queue, &[Topic::JobsBatch], Duration::from_secs(1)).await {
        attempts.push(delivery.attempts);
        queue.nack(&delivery, Duration::ZERO).await.unwrap();
        assert!(attempts.len() <= 10, "never dead-lettered: {attempts:?}");
    }
    assert_eq!(attempts, [1, 2, 3], "handed out delivery_limit times");
    let stats = queue.queue_stats().await.unwrap();
    assert_eq!(ready_of(&stats, "jobs.batch.dead").0, 1);
    assert_eq!(ready_of(&stats, "jobs.batch").0, 0);
    assert_eq!(queue.dead_letters(Topic::JobsBatch).await.unwrap(), 1);

    assert_eq!(queue.replay_dead_letters(Topic::JobsBatch, 10).await.unwrap(), 1);
    let replayed = receive_soon(&queue, &[Topic::JobsBatch]).await;
    assert_eq!((replayed.payload.as_slice(), replayed.attempts), (b"poison".as_slice(), 1));
    queue.ack(&replayed).await.unwrap();
    assert_eq!(queue.dead_letters(Topic::JobsBatch).await.unwrap(), 0);
    queue.close().await;
}

#[tokio::test]
async fn the_broker_delivery_limit_catches_messages_nobody_nacks_in_time() {
    // A consumer that crashes never gets to nack: only the quorum queue's own limit stops the
    // loop. Returns through a raw channel stand in for those crashes.
    let vhost = Vhost::create("limit");
    let queue = connect(&vhost, options()).await;
    queue.publish(Topic::JobsBatch, b"crasher".to_vec(), Duration::ZERO).await.unwrap();
    let (_connection, channel) = raw_channel(&vhost).await;
    let mut deliveries = 0;
    let deadline = std::time::Instant::now() + WAIT;
    while queue.dead_letters(Topic::JobsBatch).await.unwrap() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "never dead-lettered after {deliveries} deliveries"
        );
        let got = channel
            .basic_get("jobs.batch".into(), BasicGetOptions { no_ack: false })
            .await
            .unwrap();
        match got {
            Some(message) => {
                deliveries += 1;
                let requeue = lapin::options::BasicNackOptions {
                    multiple: false,
                    requeue: true,
                };
                channel.basic_nack(message.delivery.delivery_tag, requeue).await.unwrap();
            }
            None => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    // RabbitMQ 3.10 dead-letters once the count of returns exceeds x-delivery-limit, so the
    // broker alone hands a message out limit + 1 times; `nack` stops one earlier on its own.
    assert_eq!(deliveries, options().delivery_limit + 1);
    queue.close().await;
}

#[tokio::test]
async fn an_unroutable_publish_is_an_error_not_a_silent_success() {
    let vhost = Vhost::create("unroutable");
    let queue = connect(&vhost, options()).await;
    let (_connection, channel) = raw_channel(&vhost).await;
    channel
        .queue_delete("jobs.batch".into(), lapin::options::QueueDeleteOptions::default())
        .await
        .unwrap();
    let refused = queue.publish(Topic::JobsBatch, b"lost?".to_vec(), Duration::ZERO).await;
    assert!(matches!(refused, Err(QueueError::Unroutable(_))), "{refused:?}");
    // The refusal did not break the connection: other topics still publish.
    queue.publish(Topic::Results, b"fine".to_vec(), Duration::ZERO).await.unwrap();
    assert!(queue.is_connected());
    queue.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovers_by_itself_after_the_broker_closes_every_connection() {
    let vhost = Arc::new(Vhost::create("recover"));
    let queue = connect(&vhost, options()).await;
    queue
        .publish(Topic::JobsRealtime, b"before".to_vec(), Duration::ZERO)
        .await
        .unwrap();
    let unacked = receive_soon(&queue, &[Topic::JobsRealtime]).await;
    let waiting = tokio::spawn({
        let queue = queue.clone();
        async move { queue.receive(&[Topic::Events]).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;

    blocking(&vhost, Vhost::close_connections).await;
    let start = std::time::Instant::now();
    queue.publish(Topic::Results, b"after".to_vec(), Duration::ZERO).await.unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "publish recovered after {:?}",
        start.elapsed()
    );
    queue.ack(&unacked).await.unwrap(); // a delivery of the dead connection: a no-op

    let redelivered = receive_soon(&queue, &[Topic::JobsRealtime]).await;
    assert_eq!(redelivered.payload, b"before");
    assert!(
        redelivered.attempts >= 2,
        "a redelivery counts as an attempt: {}",
        redelivered.attempts
    );
    assert_ne!(redelivered.tag, unacked.tag);
    let after = receive_soon(&queue, &[Topic::Results]).await;
    assert_eq!(after.payload, b"after");
    queue.publish(Topic::Events, b"across".to_vec(), Duration::ZERO).await.unwrap();
    let across = tokio::time::timeout(WAIT, waiting).await.unwrap().unwrap().unwrap();
    assert_eq!(
        across.payload, b"across",
        "a receive pending across the reconnection gets later messages"
    );
    for delivery in [&redelivered, &after, &across] {
        queue.ack(delivery).await.unwrap();
    }
    queue.close().await;

    let again = connect(&vhost, options()).await;
    let all = [Topic::JobsRealtime, Topic::Results, Topic::Events];
    assert!(
        receive_within(&again, &all, Duration::from_millis(500)).await.is_none(),
        "everything was acked once"
    );
    again.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_while_disconnected_fail_within_their_bound_then_recover() {
    let vhost = Arc::new(Vhost::create("outage"));
    let queue = connect(
        &vhost,
        AmqpOptions {
            confirm_timeout: Duration::from_secs(1),
            ..options()
        },
    )
    .await;
    // Refused logins keep the queue disconnected for as long as the test wants.
    blocking(&vhost, Vhost::deny_guest).await;
    blocking(&vhost, Vhost::close_connections).await;
    let start = std::time::Instant::now();
    let refused = queue.publish(Topic::Results, b"during".to_vec(), Duration::ZERO).await;
    assert!(refused.is_err(), "nothing can be confirmed without a connection");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "publish bounded by the confirm timeout: {:?}",
        start.elapsed()
    );
    assert!(queue.queue_stats().await.is_err());

    blocking(&vhost, Vhost::allow_guest).await;
    let deadline = std::time::Instant::now() + WAIT;
    while queue.publish(Topic::Results, b"back".to_vec(), Duration::ZERO).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "never reconnected");
    }
    let delivery = receive_soon(&queue, &[Topic::Results]).await;
    assert_eq!(delivery.payload, b"back");
    queue.ack(&delivery).await.unwrap();
    queue.close().await;
}

#[tokio::test]
async fn connect_fails_fast_when_nothing_listens() {
    let start = std::time::Instant::now();
    let refused = AmqpQueue::connect("amqp://guest:guest@127.0.0.1:1/%2f", options()).await;
    assert!(refused.is_err());
    assert!(start.elapsed() < Duration::from_secs(11));
}
