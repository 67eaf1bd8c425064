//! The deadline reaper: turns due batch deadlines into `BatchDeadline` messages for the recorder,
//! which expires what is left. A deadline stays until the recorder closes the batch, so a lost
//! message is simply sent again.

use common::deadlines::Deadlines;
use common::messages::{RecorderMessage, RecorderV1};
use common::queue::Queue;
use domain::ids::BatchId;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A due batch is announced again only after this long (the recorder may be busy).
const RESEND_AFTER: Duration = Duration::from_secs(30);

pub async fn run(deadlines: Arc<dyn Deadlines>, queue: Arc<dyn Queue>, every: Duration, shutdown: CancellationToken) {
    let mut sent: HashMap<BatchId, Instant> = HashMap::new();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        let due = match deadlines.due(chrono::Utc::now()).await {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(error = %e, "cannot read deadlines");
                continue;
            }
        };
        sent.retain(|_, at| at.elapsed() < RESEND_AFTER);
        for batch_id in due {
            if sent.contains_key(&batch_id) {
                continue;
            }
            let message = RecorderMessage::V1(RecorderV1::BatchDeadline {
                batch_id: batch_id.clone(),
                at: chrono::Utc::now(),
            });
            match common::queue::consumer::publish(queue.as_ref(), &message, Duration::ZERO).await {
                Ok(()) => {
                    sent.insert(batch_id, Instant::now());
                }
                Err(e) => tracing::error!(error = %e, "cannot publish a batch deadline"),
            }
        }
    }
}
