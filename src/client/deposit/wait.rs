//! After the deposits: the batches' items as the service has them (once, or with `--wait` until
//! every batch is over), and the verdict and decision of each analysed document from its
//! consultation, read a few at a time.

use super::progress::Progress;
use super::retry;
use super::DepositError;
use crate::client::api::Api;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Between two reads of a batch being processed.
const POLL: Duration = Duration::from_millis(500);
/// Consultations read at the same time.
const CONCURRENT_READS: usize = 4;

/// A batch as `GET /api/v1/batches/{id}` shows it, the parts the report needs.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchView {
    pub id: String,
    pub status: BatchStatus,
    #[serde(default)]
    pub counts: Counts,
    #[serde(default)]
    pub items: Vec<ItemView>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Counts {
    pub total: usize,
    pub pending: usize,
    pub succeeded: usize,
    pub errored: usize,
    pub canceled: usize,
    pub expired: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemView {
    pub id: String,
    pub status: ItemStatus,
    pub consultation_id: Option<String>,
    pub error: Option<String>,
}

/// A batch's state, as the service names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchStatus {
    /// Being filled: it takes deposits.
    Open,
    /// Submitted, being processed.
    InProgress,
    Ended,
    Canceled,
    Expired,
}

/// A batch document's state, as the service names it (`uploading` while its file arrives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    Uploading,
    Pending,
    Processing,
    Succeeded,
    Errored,
    Canceled,
    Expired,
}

impl ItemStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Uploading => "uploading",
            ItemStatus::Pending => "pending",
            ItemStatus::Processing => "processing",
            ItemStatus::Succeeded => "succeeded",
            ItemStatus::Errored => "errored",
            ItemStatus::Canceled => "canceled",
            ItemStatus::Expired => "expired",
        }
    }
}

/// A consultation's findings for the report.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Findings {
    pub verdict: Option<String>,
    pub decision: Option<String>,
}

impl BatchView {
    /// Whether the batch will change no more.
    pub fn is_over(&self) -> bool {
        matches!(self.status, BatchStatus::Ended | BatchStatus::Canceled | BatchStatus::Expired)
    }

    /// Its documents out of pending and processing.
    fn done(&self) -> usize {
        let c = &self.counts;
        c.succeeded + c.errored + c.canceled + c.expired
    }
}

/// Each batch once, as it is now.
pub async fn read(api: &Api, ids: &[String]) -> Result<Vec<BatchView>, DepositError> {
    let mut views = Vec::with_capacity(ids.len());
    for id in ids {
        views.push(read_one(api, id).await?);
    }
    Ok(views)
}

/// Each batch read every half second until it is over, the processing bar showing the documents
/// done.
pub async fn until_over(api: &Api, ids: &[String], progress: &mut Progress) -> Result<Vec<BatchView>, DepositError> {
    let mut views = read(api, ids).await?;
    loop {
        let total = views.iter().map(|b| b.counts.total).sum();
        progress.processing(views.iter().map(BatchView::done).sum(), total);
        if views.iter().all(BatchView::is_over) {
            return Ok(views);
        }
        tokio::time::sleep(POLL).await;
        for view in views.iter_mut().filter(|v| !v.is_over()) {
            *view = read_one(api, &view.id).await?;
        }
    }
}

/// Batch `id` as the service has it now.
pub async fn read_one(api: &Api, id: &str) -> Result<BatchView, DepositError> {
    retry::get(api, &format!("/api/v1/batches/{id}"), &format!("reading batch {id}")).await
}

/// The findings of each consultation of `ids`, read `CONCURRENT_READS` at a time.
pub async fn findings(api: &Api, ids: Vec<String>) -> Result<HashMap<String, Findings>, DepositError> {
    let permits = Arc::new(tokio::sync::Semaphore::new(CONCURRENT_READS));
    let mut reads = tokio::task::JoinSet::new();
    for id in ids {
        let (api, permits) = (api.clone(), permits.clone());
        reads.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let what = format!("reading consultation {id}");
            let findings: Findings = retry::get(&api, &format!("/api/v1/consultations/{id}"), &what).await?;
            Ok::<_, DepositError>((id, findings))
        });
    }
    let mut found = HashMap::new();
    while let Some(read) = reads.join_next().await {
        let (id, findings) = read.map_err(|e| DepositError::Unexpected {
            what: "reading consultations".into(),
            why: e.to_string(),
        })??;
        found.insert(id, findings);
    }
    Ok(found)
}
