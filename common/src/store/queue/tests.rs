//! The embedded queue through its public face: priorities, leases, acks, the real-time lane's
//! turns, claims ahead and their give-back, delays and dead letters.

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
