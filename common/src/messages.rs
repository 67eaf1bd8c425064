//! Messages that travel on the queue. Versioned serde enums, small: ids and metadata only, never
//! document bytes.

use crate::queue::Topic;
use crate::telemetry::{request_field, RequestId};
use chrono::{DateTime, Utc};
use domain::analysis::AnalysisReport;
use domain::ids::{BatchId, BatchItemId, CompanyId, EventId, VerificationId};
use domain::vocabulary::{DocumentCategory, ItemError, Mode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A message bound to the queue it travels on: its topic (and, on a topic shared fairly among
/// companies, its company) come from the message, so nothing can publish a job on the wrong
/// lane; and the span its handling runs in carries its ids.
pub trait Message: Serialize + DeserializeOwned + Send + 'static {
    /// The topic this message travels on.
    fn topic(&self) -> Topic;

    /// The company it belongs to, on a topic shared by owners (see `Topic::shared_by_owners`).
    fn owner(&self) -> Option<&str> {
        None
    }

    /// The span its handling runs in: the document's or event's ids and the request id.
    fn span(&self) -> tracing::Span;
}

impl Message for Job {
    /// A journey's job is real-time, a batch document's is not.
    fn topic(&self) -> Topic {
        let Job::V1(job) = self;
        match job.source {
            JobSource::Verification { .. } => Topic::JobsRealtime,
            JobSource::BatchItem { .. } => Topic::JobsBatch,
        }
    }

    fn owner(&self) -> Option<&str> {
        let Job::V1(job) = self;
        self.topic().shared_by_owners().then(|| job.company_id.as_str())
    }

    fn span(&self) -> tracing::Span {
        let Job::V1(job) = self;
        job.source.span("job", job.request_id.as_ref())
    }
}

impl Message for RecorderMessage {
    fn topic(&self) -> Topic {
        Topic::Results
    }

    fn span(&self) -> tracing::Span {
        let RecorderMessage::V1(message) = self;
        match message {
            RecorderV1::JobStarted { source, request_id, .. } | RecorderV1::JobFinished { source, request_id, .. } => {
                source.span("result", request_id.as_ref())
            }
            RecorderV1::BatchDeadline { batch_id, .. } => tracing::error_span!("deadline", batch_id = %batch_id),
            RecorderV1::DeliveryAttempt(attempt) => {
                tracing::error_span!("delivery_report", event_id = %attempt.event_id, attempt = attempt.attempt)
            }
            // Each attempt was logged with its event id by the notifier; the report counts them.
            RecorderV1::DeliveryAttempts { attempts } => tracing::error_span!("delivery_report", attempts = attempts.len()),
        }
    }
}

impl Message for EventDelivery {
    fn topic(&self) -> Topic {
        Topic::Events
    }

    fn span(&self) -> tracing::Span {
        tracing::error_span!(
            "delivery",
            request_id = request_field(self.request_id.as_ref()),
            event_id = %self.event_id,
            attempt = self.attempt
        )
    }
}

/// An analysis job: one document to analyse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "v")]
pub enum Job {
    #[serde(rename = "1")]
    V1(JobV1),
}

/// Where the document of a job comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobSource {
    BatchItem { batch_id: BatchId, item_id: BatchItemId },
    Verification { verification_id: VerificationId },
}

impl JobSource {
    /// The span of work on this document (`stage`: `job` in a worker, `result` in the recorder):
    /// its ids and the request that created it, on every log line inside.
    pub fn span(&self, stage: &'static str, request_id: Option<&RequestId>) -> tracing::Span {
        let request_id = request_field(request_id);
        match self {
            JobSource::BatchItem { batch_id, item_id } => {
                tracing::error_span!("document", stage, request_id, batch_id = %batch_id, item_id = %item_id)
            }
            JobSource::Verification { verification_id } => {
                tracing::error_span!("document", stage, request_id, verification_id = %verification_id)
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobV1 {
    pub company_id: CompanyId,
    pub source: JobSource,
    pub category: DocumentCategory,
    /// Blob names of the encrypted files (front first).
    pub front_blob: String,
    pub back_blob: Option<String>,
    pub selfie_blob: Option<String>,
    /// Associated data the blobs are bound to.
    pub blob_context: String,
    /// A job taken after this instant is reported expired without analysis.
    pub deadline: DateTime<Utc>,
    /// The request that deposited the document (or submitted the journey).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// A test key's document, which may be a magic document (`worker::magic`).
    #[serde(default)]
    pub mode: Mode,
    /// The customer consented to the comparison of the selfie with the document.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub biometric_consent: bool,
}

/// What the recorder (the one writer of SQLite) is asked to apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "v")]
pub enum RecorderMessage {
    #[serde(rename = "1")]
    V1(RecorderV1),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecorderV1 {
    /// A worker took the job.
    JobStarted {
        source: JobSource,
        at: DateTime<Utc>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<RequestId>,
    },
    /// A worker finished the job.
    JobFinished {
        source: JobSource,
        outcome: JobOutcome,
        at: DateTime<Utc>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<RequestId>,
    },
    /// A batch deadline fell due.
    BatchDeadline { batch_id: BatchId, at: DateTime<Utc> },
    /// The notifier tried to deliver an event (as notifiers sent each attempt before they
    /// reported them together; still recorded).
    DeliveryAttempt(DeliveryAttempt),
    /// The notifier tried to deliver events: the attempts that ended while its last report was
    /// on its way, in one message (one publish and one confirm for all of them).
    DeliveryAttempts { attempts: Vec<DeliveryAttempt> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum JobOutcome {
    Analysed {
        report: Box<AnalysisReport>,
    },
    Errored {
        error: ItemError,
        message: String,
    },
    /// Taken after its deadline: not analysed.
    Expired,
    /// Its batch was canceled before the job started: not analysed.
    Canceled,
}

impl JobOutcome {
    /// The outcome's name, for logs (never the report's content).
    pub fn name(&self) -> &'static str {
        match self {
            JobOutcome::Analysed { .. } => "analysed",
            JobOutcome::Errored { .. } => "errored",
            JobOutcome::Expired => "expired",
            JobOutcome::Canceled => "canceled",
        }
    }
}

/// A webhook to deliver: everything the notifier needs but the company's signing secrets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventDelivery {
    pub event_id: EventId,
    pub company_id: CompanyId,
    pub url: String,
    /// The exact JSON body to send.
    pub body: String,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// Times the notifier put this attempt back because its destination had all its delivery
    /// slots taken; it spaces the next looks, and is not an attempt.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deferrals: u32,
    /// The request whose work emitted the event, for the notifier's log lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Outcome of one delivery attempt, for the delivery log and dead letters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryAttempt {
    pub event_id: EventId,
    pub attempt: u32,
    pub at: DateTime<Utc>,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub outcome: DeliveryOutcome,
    /// From sending the request to its answer (or failure); absent from older notifiers' records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryOutcome {
    Delivered,
    /// Failed; another attempt is scheduled.
    Retrying,
    /// Failed for the last time (or refused): dead-lettered.
    Dead,
    /// The receiver answered 410 Gone: no more attempts.
    Gone,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(n: u32, outcome: DeliveryOutcome) -> DeliveryAttempt {
        DeliveryAttempt {
            event_id: EventId::generate(Utc::now()),
            attempt: n,
            at: Utc::now(),
            status_code: Some(200),
            error: None,
            outcome,
            duration_ms: Some(3),
        }
    }

    /// A report of several attempts goes through the queue as JSON and comes back whole; the
    /// one-attempt report of earlier notifiers, still in a queue during an upgrade, still reads.
    #[test]
    fn attempt_reports_survive_their_encoding() {
        let report = RecorderMessage::V1(RecorderV1::DeliveryAttempts {
            attempts: vec![attempt(1, DeliveryOutcome::Delivered), attempt(2, DeliveryOutcome::Retrying)],
        });
        let encoded = serde_json::to_vec(&report).expect("encode");
        assert_eq!(serde_json::from_slice::<RecorderMessage>(&encoded).expect("decode"), report);

        let single = attempt(1, DeliveryOutcome::Dead);
        let earlier = serde_json::json!({
            "v": "1", "type": "delivery_attempt", "event_id": single.event_id, "attempt": 1,
            "at": single.at, "status_code": 200, "error": null, "outcome": "dead", "duration_ms": 3,
        });
        assert_eq!(
            serde_json::from_value::<RecorderMessage>(earlier).expect("decode"),
            RecorderMessage::V1(RecorderV1::DeliveryAttempt(single))
        );
    }
}
