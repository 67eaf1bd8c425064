//! The outbox relay: publishes outbox rows to the queue, oldest first, and deletes each row once
//! the queue has it. A crash between the two publishes the row again; consumers deduplicate.

use common::queue::{Outgoing, PartlyPublished, Queue, Topic};
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
    let mut ids = Vec::with_capacity(count);
    let mut messages = Vec::with_capacity(count);
    for row in rows {
        match Topic::parse(&row.topic) {
            Some(topic) => messages.push(Outgoing {
                topic,
                owner: row.owner,
                payload: row.payload.into_bytes(),
                delay: Duration::ZERO,
            }),
            None => tracing::error!(id = row.id, "outbox row for an unknown topic dropped"),
        }
        ids.push((row.id, Topic::parse(&row.topic).is_some()));
    }
    // The whole round at once (one transaction and one flush on SQLite, where a publish each
    // made the relay the webhooks' bottleneck), then one transaction removes what the queue has.
    let (handled, failure) = match queue.publish_all(messages).await {
        Ok(()) => (ids.len(), None),
        Err(PartlyPublished { published, error }) => {
            // The rows before the first one not published: those published, and the dropped
            // ones among them.
            let mut kept = 0;
            let handled = ids
                .iter()
                .take_while(|(_, known)| {
                    if *known {
                        kept += 1;
                    }
                    kept <= published
                })
                .count();
            (handled, Some(error))
        }
    };
    if handled > 0 {
        let handled: Vec<i64> = ids.iter().take(handled).map(|(id, _)| *id).collect();
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
    use common::messages::{Job, JobSource, JobV1, RecorderMessage, RecorderV1};
    use common::queue::sqlite::SqliteQueue;
    use common::store::test_support::TempStore;
    use domain::ids::{BatchId, CompanyId, VerificationId};
    use domain::vocabulary::DocumentCategory;

    /// A journey's job for `company` whose front file is named `name` (what the test reads back).
    fn journey_job(company: &CompanyId, name: &str) -> Job {
        Job::V1(JobV1 {
            company_id: company.clone(),
            source: JobSource::Verification {
                verification_id: VerificationId::generate(chrono::Utc::now()),
            },
            category: DocumentCategory::Identite,
            front_blob: name.into(),
            back_blob: None,
            selfie_blob: None,
            blob_context: String::new(),
            deadline: chrono::Utc::now(),
            request_id: None,
            mode: domain::vocabulary::Mode::Live,
            biometric_consent: false,
        })
    }

    fn front_of(payload: &[u8]) -> String {
        let Job::V1(job) = serde_json::from_slice(payload).unwrap();
        job.front_blob
    }

    /// The company of a journey's job goes with it from the outbox to the queue, where the
    /// real-time lane takes companies in turn: B's one job comes right after A's first.
    #[tokio::test]
    async fn owned_rows_keep_their_owner_on_the_queue() {
        let store = TempStore::new("relay");
        let (a, b) = (CompanyId::generate(chrono::Utc::now()), CompanyId::generate(chrono::Utc::now()));
        let deadline = RecorderMessage::V1(RecorderV1::BatchDeadline {
            batch_id: BatchId::generate(chrono::Utc::now()),
            at: chrono::Utc::now(),
        });
        store
            .write(move |tx| {
                for i in 0..4 {
                    outbox::push(tx, &journey_job(&a, &format!("a{i}")))?;
                }
                outbox::push(tx, &journey_job(&b, "b0"))?;
                outbox::push(tx, &deadline)
            })
            .await
            .unwrap();
        let queue = SqliteQueue::new(store.handle(), 5);
        assert_eq!(relay_once(&store, &queue).await.unwrap(), 6);
        let mut order = Vec::new();
        for _ in 0..5 {
            let d = queue.receive(&[Topic::JobsRealtime]).await.unwrap();
            order.push(front_of(&d.payload));
        }
        assert_eq!(order, ["a0", "b0", "a1", "a2", "a3"]);
        let result = queue.receive(&[Topic::Results]).await.unwrap();
        assert!(serde_json::from_slice::<RecorderMessage>(&result.payload).is_ok());
    }
}
