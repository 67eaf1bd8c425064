//! The OpenAPI document held to its snapshot and to the rules of `API.md`: the operations of the
//! contract, the errors each answers, schemas that describe what the models really serialise.

use super::*;
use domain::vocabulary::ErrorCode;
use serde_json::json;
use std::collections::BTreeSet;

fn doc() -> Value {
    serde_json::to_value(document("https://sceau.example")).expect("the document serialises")
}

const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// The operations of the contract: (operation id, method, path, authenticated).
const OPERATIONS: &[(&str, &str, &str, bool)] = &[
    ("listWorkflows", "get", "/api/v1/workflows", true),
    ("createVerification", "post", "/api/v1/verifications", true),
    ("getVerification", "get", "/api/v1/verifications/{id}", true),
    ("simulateVerification", "post", "/api/v1/verifications/{id}/simulate", true),
    ("listConsultations", "get", "/api/v1/consultations", true),
    ("getConsultation", "get", "/api/v1/consultations/{id}", true),
    ("getConsultationImage", "get", "/api/v1/consultations/{id}/images/{side}", true),
    ("getConsultationCertificate", "get", "/api/v1/consultations/{id}/certificate", true),
    ("createBatch", "post", "/api/v1/batches", true),
    ("listBatches", "get", "/api/v1/batches", true),
    ("getBatch", "get", "/api/v1/batches/{id}", true),
    ("depositDocument", "post", "/api/v1/batches/{id}/documents", true),
    ("submitBatch", "post", "/api/v1/batches/{id}/submit", true),
    ("cancelBatch", "post", "/api/v1/batches/{id}/cancel", true),
    ("getOpenApi", "get", "/api/v1/openapi.json", false),
    ("healthz", "get", "/healthz", false),
    ("readyz", "get", "/readyz", false),
    ("journeyPage", "get", "/v/{token}", false),
    ("postJourneyForm", "post", "/v/{token}", false),
    ("uploadJourneyFile", "post", "/v/{token}/files/{side}", false),
    ("submitJourney", "post", "/v/{token}/submit", false),
    ("getJourneyStatus", "get", "/v/{token}/status", false),
    ("getJourneyLogo", "get", "/v/{token}/logo", false),
    ("authenticityPage", "get", "/authenticite/{link}", false),
];

fn op<'a>(doc: &'a Value, id: &str) -> &'a Value {
    let (_, method, path, _) = OPERATIONS.iter().find(|o| o.0 == id).expect("a known operation");
    &doc["paths"][path][method]
}

/// The error codes a response stands for: its `$ref` name, or the examples of a shared status.
fn codes(doc: &Value, response: &Value) -> BTreeSet<String> {
    if let Some(r) = response["$ref"].as_str() {
        let name = r.strip_prefix("#/components/responses/").expect("an error response ref");
        assert!(doc["components"]["responses"][name].is_object(), "{name}");
        return BTreeSet::from([name.to_owned()]);
    }
    response["content"]["application/json"]["examples"]
        .as_object()
        .map(|e| e.keys().cloned().collect())
        .unwrap_or_default()
}

fn codes_at(doc: &Value, id: &str, status: &str) -> BTreeSet<String> {
    let response = &op(doc, id)["responses"][status];
    if response.is_null() {
        BTreeSet::new()
    } else {
        codes(doc, response)
    }
}

fn set(codes: &[&str]) -> BTreeSet<String> {
    codes.iter().map(|c| c.to_string()).collect()
}

/// The whole document, reviewed as a diff whenever a handler or a type changes what it says.
#[test]
fn snapshot() {
    insta::assert_json_snapshot!("openapi", doc());
}

#[test]
fn header_servers_and_security() {
    let doc = doc();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["title"], "Sceau API");
    assert_eq!(doc["servers"], json!([{ "url": "https://sceau.example" }]));
    assert_eq!(doc["components"]["securitySchemes"]["bearerAuth"]["type"], "http");
    assert_eq!(doc["components"]["securitySchemes"]["bearerAuth"]["scheme"], "bearer");
}

/// The router's operations are exactly those of the contract, each with its id, summary and tag.
#[test]
fn paths_are_exactly_the_contract() {
    let doc = doc();
    let mut found = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            assert!(METHODS.contains(&method.as_str()), "{path}: unexpected key {method}");
            let id = operation["operationId"].as_str().expect("an operation id").to_owned();
            assert!(operation["summary"].as_str().is_some_and(|s| !s.is_empty()), "{id}: no summary");
            assert_eq!(operation["tags"].as_array().map(Vec::len), Some(1), "{id}: one tag");
            assert!(found.insert((id, method.clone(), path.clone())), "{path} {method} twice");
        }
    }
    let expected: BTreeSet<_> = OPERATIONS
        .iter()
        .map(|(id, method, path, _)| (id.to_string(), method.to_string(), path.to_string()))
        .collect();
    assert_eq!(found, expected);
    for (id, _, _, authenticated) in OPERATIONS {
        let security = &op(&doc, id)["security"];
        if *authenticated {
            assert_eq!(*security, json!([{ "bearerAuth": [] }]), "{id}");
        } else {
            assert!(security.is_null(), "{id}: a public operation needs no key");
        }
    }
}

#[test]
fn every_ref_resolves() {
    fn walk(doc: &Value, v: &Value, seen: &mut usize) {
        match v {
            Value::Object(map) => {
                if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                    let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("non-local $ref {r}"));
                    assert!(doc.pointer(pointer).is_some(), "unresolved $ref {r}");
                    *seen += 1;
                }
                map.values().for_each(|v| walk(doc, v, seen));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(doc, v, seen)),
            _ => {}
        }
    }
    let doc = doc();
    let mut seen = 0;
    walk(&doc, &doc, &mut seen);
    assert!(seen > 100, "{seen} refs");
}

/// Every response says its request id; the refusals that say when to come back carry Retry-After.
#[test]
fn response_headers() {
    let doc = doc();
    for (id, ..) in OPERATIONS {
        for (status, response) in op(&doc, id)["responses"].as_object().expect("responses") {
            let response = match response["$ref"].as_str() {
                Some(r) => doc.pointer(r.trim_start_matches('#')).expect("a resolved response"),
                None => response,
            };
            assert!(response["headers"]["x-request-id"].is_object(), "{id} {status}");
        }
    }
    for code in ErrorCode::ALL {
        let response = &doc["components"]["responses"][code.as_str()];
        assert_eq!(response["headers"]["Retry-After"].is_object(), code.has_retry_after(), "{code}");
        assert_eq!(response["content"]["application/json"]["example"]["error"], code.as_str(), "{code}");
    }
    let limited = &op(&doc, "journeyPage")["responses"]["429"];
    assert!(limited["content"]["text/html"].is_object(), "{limited}");
    assert!(limited["headers"]["Retry-After"].is_object(), "{limited}");
}

#[test]
fn error_responses_follow_the_rules() {
    let doc = doc();
    for (id, method, path, authenticated) in OPERATIONS {
        let all: BTreeSet<String> = op(&doc, id)["responses"]
            .as_object()
            .expect("responses")
            .iter()
            .filter(|(status, _)| status.starts_with(['4', '5']))
            .flat_map(|(_, response)| codes(&doc, response))
            .collect();
        for code in &all {
            let status = code.parse::<ErrorCode>().expect("a code of API.md").status().to_string();
            assert!(codes_at(&doc, id, &status).contains(code), "{id}: {code} under the wrong status");
        }
        assert_eq!(*authenticated, all.contains("invalid_api_key"), "{id}");
        if *authenticated {
            assert!(all.contains("rate_limited"), "{id}: the throttle of wrong keys");
        }
        assert_eq!(*authenticated && *method != "get", all.contains("read_only_key"), "{id}");
        // Only what serves images (a result's images, its certificate) needs the `images` scope.
        let images = ["getConsultationImage", "getConsultationCertificate"].contains(id);
        assert_eq!(images, all.contains("forbidden"), "{id}");
        // The HTML pages answer their own 500 page instead of the JSON error.
        if !["/v/{token}", "/authenticite/{link}"].contains(path) {
            assert!(all.contains("internal_error"), "{id}");
        }
        if *authenticated && path.contains("{id}") {
            assert!(all.contains("not_found"), "{id}");
        }
        if op(&doc, id)["requestBody"]["content"]["application/json"].is_object() {
            assert!(all.contains("invalid_request") && all.contains("payload_too_large"), "{id}");
        }
    }
    assert_eq!(codes_at(&doc, "getConsultationImage", "404"), set(&["not_found", "image_purged"]));
    assert_eq!(
        codes_at(&doc, "createVerification", "403"),
        set(&["read_only_key", "browser_request_forbidden"])
    );
    assert_eq!(codes_at(&doc, "createVerification", "429"), set(&["rate_limited"]));
    assert_eq!(codes_at(&doc, "depositDocument", "403"), set(&["read_only_key", "ia_desactivee"]));
    assert_eq!(
        codes_at(&doc, "depositDocument", "413"),
        set(&["document_too_large", "payload_too_large"])
    );
    assert_eq!(
        codes_at(&doc, "depositDocument", "429"),
        set(&["rate_limited", "batch_full", "document_quota_exceeded", "volume_quota_exceeded"])
    );
    assert_eq!(
        codes_at(&doc, "createBatch", "429"),
        set(&["rate_limited", "too_many_open_batches"])
    );
    assert_eq!(
        codes_at(&doc, "submitBatch", "409"),
        set(&["invalid_state", "batch_empty", "idempotency_key_in_use"])
    );
    assert_eq!(
        codes_at(&doc, "cancelBatch", "409"),
        set(&["invalid_state", "idempotency_key_in_use"])
    );
    // Every POST of the API takes an Idempotency-Key, and says how it refuses one.
    for id in ["createVerification", "createBatch", "depositDocument", "submitBatch", "cancelBatch"] {
        assert_eq!(codes_at(&doc, id, "422"), set(&["idempotency_key_reused"]), "{id}");
        assert!(codes_at(&doc, id, "409").contains("idempotency_key_in_use"), "{id}");
        assert!(codes_at(&doc, id, "400").contains("invalid_request"), "{id}");
        let parameters = op(&doc, id)["parameters"].as_array().cloned().unwrap_or_default();
        assert!(
            parameters.iter().any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"),
            "{id}"
        );
    }
    assert!(op(&doc, "uploadJourneyFile")["parameters"]
        .as_array()
        .is_none_or(|p| p.iter().all(|p| p["name"] != "Idempotency-Key")));
    assert_eq!(
        codes_at(&doc, "uploadJourneyFile", "413"),
        set(&["document_too_large", "payload_too_large"])
    );
    assert_eq!(codes_at(&doc, "submitJourney", "400"), set(&["invalid_request"]));
    for id in ["depositDocument", "uploadJourneyFile", "createBatch", "submitBatch"] {
        assert_eq!(codes_at(&doc, id, "503"), set(&["service_unavailable"]), "{id}");
    }
    assert_eq!(
        codes_at(&doc, "uploadJourneyFile", "400"),
        set(&["invalid_request", "invalid_document"])
    );
    for id in ["uploadJourneyFile", "submitJourney"] {
        assert_eq!(codes_at(&doc, id, "403"), set(&["browser_request_forbidden"]), "{id}");
        assert_eq!(codes_at(&doc, id, "409"), set(&["invalid_state"]), "{id}");
    }
    for id in ["uploadJourneyFile", "submitJourney", "getJourneyStatus"] {
        assert_eq!(codes_at(&doc, id, "404"), set(&["not_found"]), "{id}");
        assert_eq!(codes_at(&doc, id, "429"), set(&["rate_limited"]), "{id}");
    }
    let shared = &op(&doc, "depositDocument")["responses"]["429"];
    assert_eq!(
        shared["content"]["application/json"]["schema"]["allOf"][1]["properties"]["error"]["enum"],
        json!(["rate_limited", "batch_full", "document_quota_exceeded", "volume_quota_exceeded"])
    );
}

/// The schemas describe what the models really serialise: the same keys, every key that is
/// always there required, every required one there.
#[test]
fn schemas_match_the_serialised_models() {
    use domain::ids::*;
    use domain::model::*;
    use domain::vocabulary::*;

    let doc = doc();
    let check = |name: &str, value: Value, optional: &[&str]| {
        let schema = &doc["components"]["schemas"][name];
        let properties: BTreeSet<&String> = schema["properties"].as_object().expect(name).keys().collect();
        let keys: BTreeSet<&String> = value.as_object().expect(name).keys().collect();
        assert_eq!(keys, properties, "{name}: serialised keys differ from the schema");
        let required: BTreeSet<&str> = schema["required"]
            .as_array()
            .expect(name)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for key in keys {
            assert_eq!(required.contains(key.as_str()), !optional.contains(&key.as_str()), "{name}: {key}");
        }
    };
    let now = chrono::Utc::now();
    let workflow = Workflow {
        id: WorkflowId::generate(now),
        name: "KYC".into(),
        document_category: DocumentCategory::Identite,
        created_at: now,
    };
    check("Workflow", serde_json::to_value(&workflow).unwrap(), &[]);
    let list = crate::api::workflows::WorkflowList {
        data: vec![workflow.clone()],
    };
    check("WorkflowList", serde_json::to_value(list).unwrap(), &[]);
    let session = VerificationSession {
        id: VerificationId::generate(now),
        verification_url: Some("https://sceau.example/v/abc".into()),
        external_ref: None,
        return_url: Some(domain::return_url::ReturnUrl::parse("https://banque.example/retour", |_| false).unwrap()),
        workflow_id: workflow.id.clone(),
        expires_at: now,
        status: VerificationStatus::Created,
        consultation_id: None,
        created_at: now,
    };
    check("VerificationSession", serde_json::to_value(&session).unwrap(), &[]);
    let anomaly = Anomaly::new(AnomalyCode::SelfieMismatch);
    check("Anomaly", serde_json::to_value(&anomaly).unwrap(), &[]);
    let two_d_doc = TwoDDoc {
        present: true,
        trusted: true,
        signature_verified: true,
        signature_status: SignatureStatus::Valid,
        data_matches: true,
        read_status: ReadStatus::Read,
        read_status_message: None,
    };
    check("TwoDDoc", serde_json::to_value(&two_d_doc).unwrap(), &[]);
    let consultation = Consultation {
        id: ConsultationId::generate(now),
        external_ref: Some("R".into()),
        workflow_id: workflow.id.clone(),
        document_category: DocumentCategory::Identite,
        document_type: DocumentType::Passeport,
        document_country: Some("FRA".into()),
        verdict: Verdict::Conforme,
        decision: Some(Decision::Conforme),
        review_status: None,
        anomaly_count: 1,
        has_reject_anomaly: true,
        anomalies: vec![anomaly],
        two_d_doc: Some(two_d_doc),
        analyzed_at: now,
        created_at: now,
    };
    check("Consultation", serde_json::to_value(&consultation).unwrap(), &[]);
    let page = crate::api::consultations::Page {
        data: vec![consultation],
        next_cursor: None,
    };
    check("ConsultationPage", serde_json::to_value(page).unwrap(), &[]);
    check("BatchCounts", serde_json::to_value(Counts::default()).unwrap(), &[]);
    let item = BatchItem {
        id: BatchItemId::generate(now),
        position: 1,
        document_category: DocumentCategory::Administratif,
        external_ref: None,
        status: ItemStatus::Errored,
        consultation_id: None,
        error: Some(ItemError::IaDesactivee),
    };
    check("BatchItem", serde_json::to_value(&item).unwrap(), &[]);
    let deposited = crate::api::deposits::Deposited {
        id: item.id.clone(),
        position: 1,
    };
    check("Deposited", serde_json::to_value(deposited).unwrap(), &[]);
    let batch = Batch {
        id: BatchId::generate(now),
        status: BatchStatus::Open,
        external_ref: None,
        counts: Counts::default(),
        submitted_at: None,
        expires_at: now,
        ended_at: None,
        created_at: now,
        items: Some(vec![item]),
    };
    check("Batch", serde_json::to_value(&batch).unwrap(), &["items"]);
    let detail = &op(&doc, "getBatch")["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(
        detail["allOf"][1]["required"],
        json!(["items"]),
        "the detail read always has its items"
    );
    let without_items = serde_json::to_value(Batch {
        items: None,
        ..batch.clone()
    })
    .unwrap();
    assert!(without_items.get("items").is_none());
    let list = crate::api::batches::BatchList { data: vec![batch] };
    check("BatchList", serde_json::to_value(list).unwrap(), &[]);
    let uploaded = crate::journey::uploads::Uploaded {
        side: JourneySide::Front,
        kind: common::document::FileKind::Jpeg,
        bytes: 1,
        warnings: vec![crate::journey::uploads::Warning {
            code: domain::journey::UploadWarning::Blurry,
            message: "La photo semble floue.",
        }],
    };
    check("JourneyFile", serde_json::to_value(uploaded).unwrap(), &[]);
    let status = crate::journey::uploads::Status {
        status: VerificationStatus::Submitted,
    };
    check("JourneyStatus", serde_json::to_value(status).unwrap(), &[]);
    let refusal = crate::error::ApiError::invalid_request("limit", "limit must be an integer from 1 to 100.");
    let body = serde_json::json!({ "error": refusal.code, "message": refusal.message, "field": refusal.field });
    check("Error", body, &["field"]);
}

/// Enums list every wire value, under the names clients see.
#[test]
fn enums_list_every_wire_value() {
    let doc = doc();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["Decision"]["enum"], json!(["conforme", "a_verifier", "refuse"]));
    assert_eq!(
        schemas["ItemStatus"]["enum"],
        json!(["uploading", "pending", "processing", "succeeded", "errored", "canceled", "expired"])
    );
    assert_eq!(
        schemas["BatchStatus"]["enum"],
        json!(["open", "in_progress", "ended", "canceled", "expired"])
    );
    assert_eq!(
        schemas["VerificationStatus"]["enum"],
        json!(["created", "started", "submitted", "completed", "expired"])
    );
    assert_eq!(schemas["Severity"]["enum"], json!(["info", "warning", "reject"]));
    assert_eq!(schemas["JourneySide"]["enum"], json!(["front", "back", "selfie", "document"]));
    assert_eq!(schemas["ImageSide"]["enum"], json!(["recto", "verso", "selfie"]));
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(schemas["ErrorCode"]["enum"], json!(codes));
    assert_eq!(
        schemas["AnomalyCode"]["enum"].as_array().map(Vec::len),
        Some(domain::vocabulary::AnomalyCode::ALL.len())
    );
}

/// The rules the path attributes cannot state are in the document: a deposit's back only for an
/// identity document, the limit of a webhook URL, one second at least before a retry.
#[test]
fn rules_added_after_derivation() {
    let doc = doc();
    let deposit = &doc["components"]["schemas"]["DepositRequest"];
    assert_eq!(deposit["if"]["properties"]["documentCategory"]["const"], "administratif");
    assert_eq!(deposit["then"]["properties"]["documentVerso"]["type"], "null");
    let url = &doc["components"]["schemas"]["CreateBatchRequest"]["properties"]["webhookUrl"];
    assert_eq!(url["maxLength"], json!(notifier::destination::MAX_URL_CHARS));
    let limited = &op(&doc, "journeyPage")["responses"]["429"]["headers"]["Retry-After"];
    assert_eq!(limited["schema"]["minimum"], 1, "{limited}");
}

/// Each id's published pattern accepts the ids the service generates and refuses a malformed one.
#[test]
fn id_patterns_accept_generated_ids() {
    use domain::ids::*;
    let doc = doc();
    let now = chrono::Utc::now();
    let generated = [
        ("WorkflowId", WorkflowId::generate(now).to_string()),
        ("ConsultationId", ConsultationId::generate(now).to_string()),
        ("VerificationId", VerificationId::generate(now).to_string()),
        ("BatchId", BatchId::generate(now).to_string()),
        ("BatchItemId", BatchItemId::generate(now).to_string()),
        ("EventId", EventId::generate(now).to_string()),
    ];
    for (name, id) in generated {
        let schema = &doc["components"]["schemas"][name];
        let validator = jsonschema::validator_for(schema).expect("a valid JSON Schema");
        assert!(validator.is_valid(&json!(id)), "{name}: {id}");
        assert!(!validator.is_valid(&json!(format!("{id}0"))), "{name}: one character too many");
    }
}

/// The journey's session endpoints: no API key, the CSRF header on writes, a raw upload body in
/// every accepted media type.
#[test]
fn journey_session_endpoints() {
    let doc = doc();
    let headers = |id: &str| -> Vec<Value> {
        op(&doc, id)["parameters"]
            .as_array()
            .expect("parameters")
            .iter()
            .filter(|p| p["in"] == "header")
            .cloned()
            .collect()
    };
    for id in ["uploadJourneyFile", "submitJourney"] {
        let csrf = headers(id);
        assert_eq!(csrf.len(), 1, "{id}");
        assert_eq!(
            (&csrf[0]["name"], &csrf[0]["required"]),
            (&json!("X-CSRF-Token"), &json!(true)),
            "{id}"
        );
    }
    assert!(headers("getJourneyStatus").is_empty(), "a read needs no CSRF token");
    let upload = op(&doc, "uploadJourneyFile");
    let media: BTreeSet<&str> = upload["requestBody"]["content"]
        .as_object()
        .expect("an upload body")
        .keys()
        .map(String::as_str)
        .collect();
    for kind in common::document::FileKind::ALL {
        assert!(media.contains(kind.content_type()), "{kind}: {media:?}");
    }
    assert_eq!(upload["requestBody"]["content"]["application/pdf"]["schema"]["format"], "binary");
    assert!(op(&doc, "submitJourney")["requestBody"].is_null());
    let image = &op(&doc, "getConsultationImage")["responses"]["200"]["content"];
    for kind in common::document::FileKind::ALL {
        assert!(image[kind.content_type()].is_object(), "{kind}");
    }
}

/// The four events Sceau sends, each body the envelope narrowed to its event, signed as Standard
/// Webhooks.
#[test]
fn webhooks_describe_the_four_events() {
    use domain::webhook::EventType;
    let doc = doc();
    let names: BTreeSet<&str> = doc["webhooks"].as_object().expect("webhooks").keys().map(String::as_str).collect();
    assert_eq!(names, EventType::ALL.iter().map(|e| e.as_str()).collect());
    for event in EventType::ALL {
        let post = &doc["webhooks"][event.as_str()]["post"];
        let schema = &post["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(schema["allOf"][0]["$ref"], "#/components/schemas/EventBody");
        assert_eq!(schema["allOf"][1]["properties"]["event"]["const"], event.as_str());
        let headers: BTreeSet<&str> = post["parameters"]
            .as_array()
            .expect("headers")
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert_eq!(headers, BTreeSet::from(["webhook-id", "webhook-timestamp", "webhook-signature"]));
    }
    let variants: BTreeSet<&str> = doc["components"]["schemas"]["WebhookEvent"]["oneOf"]
        .as_array()
        .expect("one schema per event")
        .iter()
        .map(|variant| {
            // Each event a named schema, for client generators.
            let name = variant["$ref"].as_str().expect("a reference").rsplit('/').next().expect("a name");
            &doc["components"]["schemas"][name]
        })
        .filter_map(|variant| {
            let parts = variant["allOf"]
                .as_array()
                .map(|a| a.iter().collect())
                .unwrap_or_else(|| vec![variant]);
            parts.iter().find_map(|p| p["properties"]["event"]["enum"][0].as_str())
        })
        .collect();
    assert_eq!(variants, EventType::ALL.iter().map(|e| e.as_str()).collect());
}

/// The document served is the one described here, with the server's own base.
#[tokio::test]
async fn the_served_document_is_the_derived_one() {
    let app = crate::test_support::spawn_app().await;
    let (status, served) = app.call("GET", "/api/v1/openapi.json", None).await;
    assert_eq!(status, 200);
    let expected = serde_json::to_value(document(&format!("http://{}", app.addr))).expect("the document serialises");
    assert_eq!(served, expected);
}

/// What Sceau really posts validates against the schema the document gives each webhook, and a
/// body of one event does not pass for another.
#[test]
fn webhook_payloads_validate_against_their_schemas() {
    use domain::ids::{BatchId, ConsultationId, EventId, WorkflowId};
    use domain::model::Counts;
    use domain::vocabulary::{Decision, ReviewStatus, Verdict};
    use domain::webhook::{ConsultationOutcome, EventBody, Review, WebhookEvent};

    let doc = doc();
    let now = chrono::Utc::now();
    let outcome = ConsultationOutcome {
        consultation_id: ConsultationId::generate(now),
        workflow_id: WorkflowId::generate(now),
        external_ref: Some("dossier-42".into()),
        verdict: Verdict::Suspect,
        decision: Some(Decision::AVerifier),
    };
    let events = [
        WebhookEvent::VerificationCompleted(outcome.clone()),
        WebhookEvent::VerificationReviewed {
            consultation: outcome.clone(),
            review: Review {
                status: ReviewStatus::Accepted,
                reviewed_at: now,
            },
        },
        WebhookEvent::VerificationTest(outcome),
        WebhookEvent::BatchCompleted {
            batch_id: BatchId::generate(now),
            external_ref: None,
            counts: Counts::default(),
        },
    ];
    // The body schema of one webhook, with the document's components beside it for its refs.
    let validator = |event: &str| {
        let mut schema = doc["webhooks"][event]["post"]["requestBody"]["content"]["application/json"]["schema"].clone();
        schema["components"] = doc["components"].clone();
        jsonschema::validator_for(&schema).expect("a valid JSON Schema")
    };
    for event in events {
        let name = event.event_type().as_str();
        let body = serde_json::to_value(EventBody {
            event_id: EventId::generate(now),
            occurred_at: now,
            livemode: false,
            event,
        })
        .expect("an event serialises");
        let errors: Vec<String> = validator(name).iter_errors(&body).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?} in {body}");
        let mut forged = body.clone();
        forged["eventId"] = json!("evt_short");
        assert!(!validator(name).is_valid(&forged), "{name}: the eventId's pattern is enforced");
        for other in domain::webhook::EventType::ALL.iter().filter(|e| e.as_str() != name) {
            assert!(!validator(other.as_str()).is_valid(&body), "{name} passes for {other}");
        }
    }
}
