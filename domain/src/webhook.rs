//! The webhook events Sceau sends (`API.md`, "Webhooks"): one typed payload per event, serialised
//! with its `event` tag, inside the envelope every event shares (`eventId`, `occurredAt`).

use crate::ids::{BatchId, ConsultationId, EventId, WorkflowId};
use crate::model::{Consultation, Counts};
use crate::vocabulary::{wire_enum, Decision, ReviewStatus, Verdict};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

wire_enum!(
    /// The name of an event, as its `event` field and the event list say.
    EventType {
        VerificationCompleted => "verification.completed",
        VerificationReviewed => "verification.reviewed",
        VerificationTest => "verification.test",
        BatchCompleted => "batch.completed",
    }
);

wire_enum!(
    /// Where the delivery of an event stands.
    DeliveryStatus {
        Pending => "pending",
        Delivered => "delivered",
        Retrying => "retrying",
        /// Every attempt failed; an operator may replay it.
        Dead => "dead",
        /// The receiver answered 410: it wants no more events at that URL.
        Gone => "gone",
        /// A test event of a workflow with no test URL: kept, never sent (the live URL never
        /// gets a test event).
        NotSent => "not_sent",
    }
);

impl DeliveryStatus {
    /// A dead letter, which an operator may replay.
    pub fn is_dead_letter(self) -> bool {
        matches!(self, DeliveryStatus::Dead | DeliveryStatus::Gone)
    }
}

/// What a verification event says of its consultation: the result, never the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsultationOutcome {
    pub consultation_id: ConsultationId,
    pub workflow_id: WorkflowId,
    /// The client's reference, returned as given.
    #[schema(required = true)]
    pub external_ref: Option<String>,
    pub verdict: Verdict,
    /// The workflow's decision.
    #[schema(required = true)]
    pub decision: Option<Decision>,
}

impl ConsultationOutcome {
    pub fn of(c: &Consultation) -> ConsultationOutcome {
        ConsultationOutcome {
            consultation_id: c.id.clone(),
            workflow_id: c.workflow_id.clone(),
            external_ref: c.external_ref.clone(),
            verdict: c.verdict,
            decision: c.decision,
        }
    }
}

/// How a human review settled a consultation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    pub status: ReviewStatus,
    #[serde(with = "crate::time::serde_millis")]
    pub reviewed_at: DateTime<Utc>,
}

/// One event, tagged with its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "event")]
pub enum WebhookEvent {
    /// A journey ended, whatever its verdict.
    #[serde(rename = "verification.completed")]
    VerificationCompleted(ConsultationOutcome),
    /// The company's team settled a consultation in review; the verdict is unchanged.
    #[serde(rename = "verification.reviewed", rename_all = "camelCase")]
    VerificationReviewed {
        #[serde(flatten)]
        consultation: ConsultationOutcome,
        review: Review,
    },
    /// The test button: the envelope of `verification.completed` with dummy identifiers.
    #[serde(rename = "verification.test")]
    VerificationTest(ConsultationOutcome),
    /// A batch ended; its documents are read on `GET /api/v1/batches/{id}`.
    #[serde(rename = "batch.completed", rename_all = "camelCase")]
    BatchCompleted {
        batch_id: BatchId,
        /// The client's reference of the batch, returned as given.
        #[schema(required = true)]
        external_ref: Option<String>,
        counts: Counts,
    },
}

impl WebhookEvent {
    pub fn event_type(&self) -> EventType {
        match self {
            WebhookEvent::VerificationCompleted(_) => EventType::VerificationCompleted,
            WebhookEvent::VerificationReviewed { .. } => EventType::VerificationReviewed,
            WebhookEvent::VerificationTest(_) => EventType::VerificationTest,
            WebhookEvent::BatchCompleted { .. } => EventType::BatchCompleted,
        }
    }

    /// The workflow a `verification.*` event belongs to (its Diffusion tab lists it).
    pub fn workflow_id(&self) -> Option<&WorkflowId> {
        match self {
            WebhookEvent::VerificationCompleted(c) | WebhookEvent::VerificationTest(c) => Some(&c.workflow_id),
            WebhookEvent::VerificationReviewed { consultation, .. } => Some(&consultation.workflow_id),
            WebhookEvent::BatchCompleted { .. } => None,
        }
    }
}

/// The body of a delivery: the event with its id and time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventBody {
    pub event_id: EventId,
    #[serde(with = "crate::time::serde_millis")]
    pub occurred_at: DateTime<Utc>,
    /// `false` for an event of test mode (a test key's session or batch), `true` otherwise. A test
    /// event is also signed with the test secret only, so a receiver that verifies with the live
    /// secret refuses it without reading this field.
    pub livemode: bool,
    #[serde(flatten)]
    pub event: WebhookEvent,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn outcome() -> ConsultationOutcome {
        ConsultationOutcome {
            consultation_id: ConsultationId::parse("CSL-20261124-0123456789ab").unwrap(),
            workflow_id: WorkflowId::parse("WFL-20261124-0123456789ab").unwrap(),
            external_ref: None,
            verdict: Verdict::Suspect,
            decision: Some(Decision::AVerifier),
        }
    }

    fn body(event: WebhookEvent) -> Value {
        let at = crate::time::parse("2026-11-24T08:00:00.000Z").unwrap();
        let body = EventBody {
            event_id: EventId::generate(at),
            occurred_at: at,
            livemode: true,
            event,
        };
        let value = serde_json::to_value(&body).unwrap();
        assert_eq!(serde_json::from_value::<EventBody>(value.clone()).unwrap(), body, "round trip");
        value
    }

    #[test]
    fn each_event_carries_its_tag_and_the_envelope() {
        let reviewed = body(WebhookEvent::VerificationReviewed {
            consultation: outcome(),
            review: Review {
                status: ReviewStatus::Accepted,
                reviewed_at: crate::time::parse("2026-11-24T09:00:00Z").unwrap(),
            },
        });
        assert_eq!(reviewed["event"], "verification.reviewed");
        assert_eq!(reviewed["occurredAt"], "2026-11-24T08:00:00.000Z");
        assert_eq!(reviewed["consultationId"], "CSL-20261124-0123456789ab");
        assert_eq!(reviewed["externalRef"], Value::Null);
        assert_eq!(reviewed["decision"], "a_verifier");
        assert_eq!(
            reviewed["review"],
            json!({ "status": "accepted", "reviewedAt": "2026-11-24T09:00:00.000Z" })
        );
        assert!(reviewed["eventId"].as_str().unwrap().starts_with("evt_"));

        let batch = body(WebhookEvent::BatchCompleted {
            batch_id: BatchId::generate(chrono::Utc::now()),
            external_ref: Some("lot-7".into()),
            counts: Counts {
                total: 2,
                succeeded: 2,
                ..Counts::default()
            },
        });
        assert_eq!(batch["event"], "batch.completed");
        assert_eq!(batch["counts"]["succeeded"], 2);
        assert!(batch.get("consultationId").is_none() && batch.get("verdict").is_none());

        for event in EventType::ALL {
            let tag = serde_json::to_value(event).unwrap();
            assert_eq!(tag, event.as_str());
        }
        assert_eq!(WebhookEvent::VerificationTest(outcome()).event_type(), EventType::VerificationTest);
    }
}
