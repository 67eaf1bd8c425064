//! The outbox relay: publishes outbox rows to the queue, oldest first, and deletes each row once
//! the queue has it. A crash between the two publishes the row again; consumers deduplicate.

use common::queue::{Queue, Topic};
use common::store::{outbox, RepoError, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const BATCH: u32 = 200;

pub async fn run(store: Store, queue: Arc<dyn Queue>, wake: Arc<Notify>, poll: Duration, shutdown: CancellationToken) {
    loop {
        match relay_once(&store, queue.as_ref()).await {
            Ok(n) if n == BATCH as usize => continue,
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "outbox relay failed; retrying"),
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = wake.notified() => {}
            // Other processes (the operator CLI) write outbox rows too.
            _ = tokio::time::sleep(poll) => {}
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error(transparent)]
    Queue(#[from] common::queue::QueueError),
}

/// Publishes pending rows; returns how many were handled.
pub async fn relay_once(store: &Store, queue: &dyn Queue) -> Result<usize, RelayError> {
    let rows = store.read(|c| outbox::next(c, BATCH)).await?;
    let count = rows.len();
    let mut handled = Vec::with_capacity(count);
    let mut failure = None;
    for row in rows {
        let published = match (Topic::parse(&row.topic), row.owner) {
            (Some(topic), Some(owner)) => queue.publish_owned(topic, &owner, row.payload.into_bytes()).await,
            (Some(topic), None) => queue.publish(topic, row.payload.into_bytes(), Duration::ZERO).await,
            (None, _) => {
                tracing::error!(id = row.id, "outbox row for an unknown topic dropped");
                Ok(())
            }
        };
        if let Err(e) = published {
            failure = Some(e);
            break;
        }
        handled.push(row.id);
    }
    // One transaction removes what the queue has: one fsync per round, not one per row.
    if !handled.is_empty() {
        store
            .write(move |tx| {
                for id in handled {
                    outbox::remove(tx, id)?;
                }
                Ok::<_, RepoError>(())
            })
            .await?;
    }
    match failure {
        Some(e) => Err(e.into()),
        None => Ok(count),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::queue::sqlite::SqliteQueue;

    /// The company of a journey's job goes with it from the outbox to the queue, where the
    /// real-time lane takes companies in turn: B's one job comes right after A's first.
    #[tokio::test]
    async fn owned_rows_keep_their_owner_on_the_queue() {
        let dir = std::env::temp_dir().join(format!("sceau-relay-{}", common::ids::random_hex(8)));
        let store = Store::open(&dir.join("db.sqlite")).unwrap();
        store
            .write(|tx| {
                for i in 0..4 {
                    outbox::push_owned(tx, Topic::JobsRealtime, "CMP-a", &format!("a{i}"))?;
                }
                outbox::push_owned(tx, Topic::JobsRealtime, "CMP-b", &"b0")?;
                outbox::push(tx, Topic::Results, &"r0")
            })
            .await
            .unwrap();
        let queue = SqliteQueue::new(store.clone(), 5);
        assert_eq!(relay_once(&store, &queue).await.unwrap(), 6);
        let mut order = Vec::new();
        for _ in 0..5 {
            let d = queue.receive(&[Topic::JobsRealtime]).await.unwrap();
            order.push(String::from_utf8(d.payload).unwrap());
        }
        assert_eq!(order, ["\"a0\"", "\"b0\"", "\"a1\"", "\"a2\"", "\"a3\""]);
        assert_eq!(queue.receive(&[Topic::Results]).await.unwrap().payload, b"\"r0\"");
        let _ = std::fs::remove_dir_all(dir);
    }
}
