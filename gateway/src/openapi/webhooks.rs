//! The OpenAPI 3.1 `webhooks` of the document: one entry per event Sceau sends, its body the
//! typed [`EventBody`](domain::webhook::EventBody) narrowed to that event, with the Standard
//! Webhooks headers that sign it (`API.md`, Webhooks).

use domain::webhook::EventType;
use serde_json::{json, Map, Value};

/// What each event tells its receiver, and where it goes.
fn meaning(event: EventType) -> &'static str {
    match event {
        EventType::VerificationCompleted => {
            "A journey ended, whatever its verdict. Sent to the workflow's webhook URL (in test mode, to its test \
             webhook URL only, signed with the test secret); read the result with \
             `GET /api/v1/consultations/{consultationId}`."
        }
        EventType::VerificationReviewed => {
            "The company's team settled a consultation in review; the verdict is unchanged. Sent to the workflow's webhook URL \
             (in test mode, to its test webhook URL only, signed with the test secret)."
        }
        EventType::VerificationTest => {
            "Sent on demand for a workflow (operator command, portal button) to its live webhook URL, signed with the live \
             secret: the envelope of `verification.completed` with dummy identifiers."
        }
        EventType::BatchCompleted => {
            "A batch ended; its documents are read on `GET /api/v1/batches/{batchId}`. Sent to the batch's `webhookUrl` \
             (a test key's batch: signed with the test secret)."
        }
    }
}

fn header(name: &str, description: &str, pattern: &str) -> Value {
    json!({
        "name": name,
        "in": "header",
        "required": true,
        "description": description,
        "schema": { "type": "string", "pattern": pattern },
    })
}

/// The `webhooks` object: event name → the `POST` Sceau makes to the receiver.
pub fn webhooks() -> Value {
    let signature_headers = json!([
        header(
            "webhook-id",
            "The `eventId`, the same across retries: deduplicate on it.",
            "^evt_[A-Za-z0-9]{26}$"
        ),
        header("webhook-timestamp", "When this attempt was signed, in Unix seconds.", "^[0-9]+$"),
        header(
            "webhook-signature",
            "`v1,<base64(HMAC-SHA256(secret, \"<webhook-id>.<webhook-timestamp>.<raw body>\"))>`, the secret being the \
             company's `whsec_…` decoded, or for an event of test mode only the test secret `whsec_test_…` (the key is \
             the base64 after the whole prefix): a test event never verifies with the live secret. During a secret \
             rotation both signatures, space-separated. Any Standard Webhooks verifier accepts it (give it a test \
             secret as `whsec_` followed by its base64).",
            "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$",
        ),
    ]);
    let entries: Map<String, Value> = EventType::ALL
        .iter()
        .map(|&event| {
            let body = json!({
                "allOf": [
                    { "$ref": "#/components/schemas/EventBody" },
                    { "type": "object", "properties": { "event": { "const": event.as_str() } } },
                ],
            });
            let operation = json!({
                "operationId": format!("webhook.{event}"),
                "summary": event.as_str(),
                "description": meaning(event),
                "tags": ["Webhooks"],
                "parameters": signature_headers,
                "requestBody": { "required": true, "content": { "application/json": { "schema": body } } },
                "responses": {
                    "2XX": { "description": "Delivered. Any 2xx within 15 s; otherwise retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then dead-lettered. Redirects are not followed." },
                    "410": { "description": "The receiver wants no more of this event: its retries stop." },
                },
            });
            (event.as_str().to_owned(), json!({ "post": operation }))
        })
        .collect();
    Value::Object(entries)
}
