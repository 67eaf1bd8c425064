//! The OpenAPI 3.1 document of the API: the machine-readable contract clients generate code from.
//! Its `paths` are generated from the route table (`routes::table`) and its enums from the wire
//! enums of `common::domain`, so the document cannot drift from what the router serves; the tests
//! below fail when an operation lacks its details here.

use crate::routes::{self, Route};
use crate::state::AppState;
use axum::extract::State;
use axum::http::Method;
use common::domain::{
    AnomalyCode, BatchStatus, Decision, DocumentCategory, DocumentType, ImageSide, ItemError, ItemStatus, JourneySide, ReadStatus,
    ReviewStatus, Severity, SignatureStatus, Verdict, VerificationStatus,
};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `GET /api/v1/openapi.json`. Built once: `public_base` never changes within a process.
pub async fn serve(State(state): State<AppState>) -> axum::Json<Value> {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    axum::Json(DOCUMENT.get_or_init(|| document(&state.public_base)).clone())
}

/// The whole OpenAPI 3.1.0 document, with `public_base` as its only server.
pub fn document(public_base: &str) -> Value {
    let mut paths = Map::new();
    for route in routes::table() {
        let operation = operation(&route);
        let item = paths.entry(route.path).or_insert_with(|| json!({}));
        item[route.method.as_str().to_ascii_lowercase()] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "Sceau API",
            "version": "1.0.0",
            "description": "Identity and administrative document verification: verification sessions, results \
    (consultations), deferred analysis batches, image and certificate download. Every call of `/api/v1` \
    except this document needs `Authorization: Bearer <API key>`; a read-only key (`rk_live_…`) may only \
    call GET operations. Errors answer `{\"error\": \"<code>\", \"message\": \"…\"}`, with `field` when one \
    input field is at fault. Every response carries `x-request-id`.",
        },
        "servers": [{ "url": public_base }],
        "tags": [
            { "name": "Workflows", "description": "The company's workflows (created by an operator)." },
            { "name": "Verifications", "description": "Verification sessions: a journey URL for one end customer." },
            { "name": "Consultations", "description": "Verification results, their images and certificate." },
            { "name": "Batches", "description": "Deferred analysis of documents the client already holds." },
            {
                "name": "Journey",
                "description": "Pages behind a verificationUrl, for the end customer, and the session endpoints their script calls. \
    No API key: the session token in the path authorises, and every write also needs the page's `X-CSRF-Token`.",
            },
            { "name": "Operations", "description": "Probes and this document." },
        ],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "`Authorization: Bearer sk_live_…` (full key) or `rk_live_…` (read-only key). After 20 wrong \
    keys in a minute from one client address, every request from it answers 429 `rate_limited`, whatever its key, until \
    `Retry-After` has passed.",
                },
            },
            "schemas": schemas(),
            "responses": error_responses(),
            "examples": error_examples(),
            "headers": {
                "XRequestId": {
                    "description": "Identifier of the request, also written in the service's logs.",
                    "schema": { "type": "string" },
                },
                "RetryAfter": {
                    "description": "Seconds to wait before retrying.",
                    "schema": { "type": "integer", "minimum": 1 },
                },
            },
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Errors

/// The documentation of one error code of `API.md`.
struct ErrorDoc {
    code: &'static str,
    status: u16,
    /// When it is returned.
    when: &'static str,
    /// The example body.
    message: &'static str,
    field: Option<&'static str>,
}

const fn err(code: &'static str, status: u16, when: &'static str, message: &'static str, field: Option<&'static str>) -> ErrorDoc {
    ErrorDoc {
        code,
        status,
        when,
        message,
        field,
    }
}

/// Every error code of `API.md`, in its order.
const ERRORS: &[ErrorDoc] = &[
    err(
        "invalid_request",
        400,
        "Malformed JSON, a missing or invalid field or query parameter, or an unknown postal code; `field` names it when one field is at fault.",
        "limit must be an integer from 1 to 100.",
        Some("limit"),
    ),
    err(
        "invalid_document",
        400,
        "The document is not base64, its file type is not allowed for the category, a PDF or TIFF has more than one page, or `documentVerso` \
was sent for an administrative document; a journey file that is empty, of a type not accepted, or of more than one page.",
        "document has 3 pages; one page only.",
        Some("document"),
    ),
    err("invalid_api_key", 401, "The API key is absent, malformed, unknown or revoked.", "The API key is absent, malformed, unknown or revoked.", None),
    err("read_only_key", 403, "A read-only key called a non-GET operation.", "A read-only key can only call GET operations.", None),
    err(
        "ia_desactivee",
        403,
        "New administrative deposit while AI use is disabled for the company.",
        "AI use is disabled for this company: administrative documents cannot be deposited",
        None,
    ),
    err(
        "browser_request_forbidden",
        403,
        "`POST /api/v1/verifications` carrying an `Origin` header (sessions are created from the client's server, never from a browser); \
on a journey's session endpoints, a cross-site request or a missing or wrong `X-CSRF-Token`.",
        "Sessions must be created from your server, never from a browser.",
        None,
    ),
    err(
        "not_found",
        404,
        "Unknown id, an id of another company, or an unknown journey token.",
        "No such resource.",
        None,
    ),
    err("image_purged", 404, "The image was removed by the company's retention policy.", "This image was removed by the retention policy.", None),
    err(
        "invalid_state",
        409,
        "Deposit or submit on a batch that is not `open`; cancel of an `ended`, `canceled` or `expired` batch; upload or submit on a \
journey already submitted, completed or expired.",
        "batch BAT-3f9a1c07-88d2e4b1 is in_progress: documents can only be added to an open batch",
        None,
    ),
    err("batch_empty", 409, "Submit of a batch holding no document.", "The batch holds no document; deposit at least one before submitting.", None),
    err(
        "document_too_large",
        413,
        "A decoded document (front or back), or a journey file, is over 10 Mo (10,000,000 bytes).",
        "document exceeds 10 Mo (10,000,000 bytes) once decoded.",
        Some("document"),
    ),
    err("payload_too_large", 413, "The request body is over the hard cap (30 MB).", "The request body exceeds the 30 MB limit.", None),
    err(
        "too_many_open_batches",
        429,
        "Three batches of the company are already open.",
        "three batches are already open; submit or cancel one before opening another",
        None,
    ),
    err("batch_full", 429, "The batch already holds 200 documents.", "the batch already holds 200 documents; submit it and open another", None),
    err(
        "document_quota_exceeded",
        429,
        "The company already holds 400 documents whose images are not purged.",
        "the company holds 400 documents not yet purged; close, cancel or wait for the purge of a batch before depositing more",
        None,
    ),
    err(
        "volume_quota_exceeded",
        429,
        "The company's pending file volume would exceed 5 GiB.",
        "the company's pending file volume would exceed its limit; wait for batches to be processed before depositing more",
        None,
    ),
    err(
        "rate_limited",
        429,
        "A rate limit was reached: the company's real-time limit; too many wrong API keys from the client's address (any \
authenticated operation, whatever the key); on a journey's session endpoints, the per-session or per-address limit. \
`Retry-After` gives the seconds to wait.",
        "Too many requests; retry after the delay given in Retry-After.",
        None,
    ),
    err(
        "service_unavailable",
        503,
        "The service cannot store the request now (its disk is full); nothing was kept, and the same request succeeds \
once space is back. `Retry-After` gives the seconds to wait.",
        "The service cannot store anything right now; nothing was kept. Retry after the delay given in Retry-After.",
        None,
    ),
    err(
        "internal_error",
        500,
        "A bug; logged with the request id, nothing leaked.",
        "An internal error occurred; it has been logged with the request id.",
        None,
    ),
];

fn error_code(code: &str) -> &'static ErrorDoc {
    ERRORS
        .iter()
        .find(|e| e.code == code)
        .unwrap_or_else(|| panic!("error code {code} is not in the catalogue"))
}

fn example_body(e: &ErrorDoc) -> Value {
    let mut body = json!({ "error": e.code, "message": e.message });
    if let Some(field) = e.field {
        body["field"] = json!(field);
    }
    body
}

fn response_headers(codes: &[&str]) -> Value {
    let mut headers = json!({ "x-request-id": { "$ref": "#/components/headers/XRequestId" } });
    if codes.contains(&"rate_limited") || codes.contains(&"service_unavailable") {
        headers["Retry-After"] = json!({ "$ref": "#/components/headers/RetryAfter" });
    }
    headers
}

/// `components.responses`: one reusable response per error code.
fn error_responses() -> Value {
    let responses: Map<String, Value> = ERRORS
        .iter()
        .map(|e| {
            let response = json!({
                "description": format!("`{}`: {}", e.code, e.when),
                "headers": response_headers(&[e.code]),
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                { "$ref": "#/components/schemas/Error" },
                                { "properties": { "error": { "const": e.code } } },
                            ],
                        },
                        "example": example_body(e),
                    },
                },
            });
            (e.code.to_owned(), response)
        })
        .collect();
    Value::Object(responses)
}

/// `components.examples`: the example body of each error code, for responses sharing a status.
fn error_examples() -> Value {
    let examples: Map<String, Value> = ERRORS
        .iter()
        .map(|e| (e.code.to_owned(), json!({ "summary": e.when, "value": example_body(e) })))
        .collect();
    Value::Object(examples)
}

/// The response of one status that can carry several codes: a `$ref` when there is one code,
/// else one response listing them all, with an example of each.
fn status_response(codes: &[&'static str]) -> Value {
    if let [code] = codes {
        return json!({ "$ref": format!("#/components/responses/{code}") });
    }
    let description = codes
        .iter()
        .map(|c| format!("`{c}`: {}", error_code(c).when))
        .collect::<Vec<_>>()
        .join(" ");
    let examples: Map<String, Value> = codes
        .iter()
        .map(|c| (c.to_string(), json!({ "$ref": format!("#/components/examples/{c}") })))
        .collect();
    json!({
        "description": description,
        "headers": response_headers(codes),
        "content": {
            "application/json": {
                "schema": {
                    "allOf": [
                        { "$ref": "#/components/schemas/Error" },
                        { "properties": { "error": { "enum": codes } } },
                    ],
                },
                "examples": examples,
            },
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Operations

/// What the route table does not say about an operation.
struct Details {
    tag: &'static str,
    description: Option<&'static str>,
    query: Vec<Value>,
    /// Header parameters.
    headers: Vec<Value>,
    /// The request body object.
    body: Option<Value>,
    /// Success status and response object (headers are added).
    success: (&'static str, Value),
    /// Other non-error responses (pages, probes).
    other: Vec<(&'static str, Value)>,
    /// Error codes besides those derived from the route: `invalid_api_key` (authenticated),
    /// `read_only_key` (authenticated, not GET) and `internal_error` (every operation).
    errors: &'static [&'static str],
}

impl Details {
    fn new(tag: &'static str, success: (&'static str, Value), errors: &'static [&'static str]) -> Self {
        Self {
            tag,
            description: None,
            query: Vec::new(),
            headers: Vec::new(),
            body: None,
            success,
            other: Vec::new(),
            errors,
        }
    }

    fn description(self, description: &'static str) -> Self {
        Self {
            description: Some(description),
            ..self
        }
    }

    fn query(self, query: Vec<Value>) -> Self {
        Self { query, ..self }
    }

    fn headers(self, headers: Vec<Value>) -> Self {
        Self { headers, ..self }
    }

    /// A JSON request body of that schema.
    fn body(self, schema: &'static str) -> Self {
        Self {
            body: Some(json!({ "required": true, "content": { "application/json": { "schema": schema_ref(schema) } } })),
            ..self
        }
    }

    /// A raw (binary) request body in one of these media types.
    fn raw_body(self, description: &'static str, media: &[&str]) -> Self {
        let content: Map<String, Value> = media
            .iter()
            .map(|m| (m.to_string(), json!({ "schema": { "type": "string", "format": "binary" } })))
            .collect();
        Self {
            body: Some(json!({ "required": true, "description": description, "content": content })),
            ..self
        }
    }

    fn other(self, other: Vec<(&'static str, Value)>) -> Self {
        Self { other, ..self }
    }
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn json_response(description: &str, schema: Value) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": schema } } })
}

fn media_response(description: &str, media: &[&str], schema: Value) -> Value {
    let content: Map<String, Value> = media.iter().map(|m| (m.to_string(), json!({ "schema": schema }))).collect();
    json!({ "description": description, "content": content })
}

fn binary_response(description: &str, media: &[&str]) -> Value {
    media_response(description, media, json!({ "type": "string", "format": "binary" }))
}

/// A file to save, never to render: the headers of `api::download::attachment`.
/// Every accepted file's media type, from `common::document`'s one list.
fn all_content_types() -> Vec<&'static str> {
    common::document::FileKind::ALL.iter().map(|kind| kind.content_type()).collect()
}

fn download_response(description: &str, media: &[&str], name: &str) -> Value {
    let mut response = binary_response(description, media);
    let header = |description: String, value: Value| json!({ "description": description, "schema": value });
    response["headers"] = json!({
        "Content-Disposition": header(
            format!("`attachment; filename=\"{name}\"`: saved, not opened."),
            json!({ "type": "string" }),
        ),
        "X-Content-Type-Options": header("`nosniff`.".into(), json!({ "const": "nosniff" })),
        "Content-Security-Policy": header(
            "`sandbox`: if opened anyway, no script and no same-origin rights.".into(),
            json!({ "const": "sandbox" }),
        ),
    });
    response
}

fn html_response(description: &str) -> Value {
    media_response(description, &["text/html"], json!({ "type": "string" }))
}

/// A page that a rate limit refused, with its `Retry-After`.
fn with_retry_after(mut response: Value) -> Value {
    response["headers"] = json!({ "Retry-After": { "$ref": "#/components/headers/RetryAfter" } });
    response
}

fn text_response(description: &str) -> Value {
    media_response(description, &["text/plain"], json!({ "type": "string" }))
}

fn query_param(name: &str, description: &str, schema: Value) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": description, "schema": schema })
}

/// `X-CSRF-Token`: what every journey write needs besides the session token.
fn csrf_header() -> Value {
    json!({
        "name": "X-CSRF-Token",
        "in": "header",
        "required": true,
        "description": "The token of the journey page's `<meta name=\"csrf-token\">`, given when the link is opened. Missing or wrong: \
    403 `browser_request_forbidden`.",
        "schema": { "type": "string", "minLength": 1 },
    })
}

/// The files a journey takes, by side name, across both categories (`front`, `back`, `selfie`, `document`).
fn journey_sides() -> Vec<&'static str> {
    wire_values(JourneySide::ALL, JourneySide::as_str)
}

fn limit_param() -> Value {
    query_param(
        "limit",
        "Page size.",
        json!({ "type": "integer", "minimum": 1, "maximum": 100, "default": 20 }),
    )
}

fn wire_values<T: Copy>(all: &[T], as_str: fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().map(|v| as_str(*v)).collect()
}

/// Details of each operation of the route table; `None` for an unknown operation (a test checks
/// that every route has its details).
fn operation_details(operation_id: &str) -> Option<Details> {
    let details = match operation_id {
        "listWorkflows" => Details::new(
            "Workflows",
            (
                "200",
                json_response("The workflows, most recent first.", schema_ref("WorkflowList")),
            ),
            &[],
        ),
        "createVerification" => Details::new(
            "Verifications",
            (
                "201",
                json_response(
                    "The session; hand `verificationUrl` to the end customer.",
                    schema_ref("VerificationSession"),
                ),
            ),
            &[
                "invalid_request",
                "browser_request_forbidden",
                "not_found",
                "payload_too_large",
                "rate_limited",
                "service_unavailable",
            ],
        )
        .description(
            "Call from the client's server only: a request carrying an `Origin` header (a browser) is refused. \
An unknown workflow answers 404 `not_found`. Counts against the company's real-time rate limit.",
        )
        .body("CreateVerificationRequest"),
        "getVerification" => Details::new(
            "Verifications",
            (
                "200",
                json_response("The session with its status.", schema_ref("VerificationSession")),
            ),
            &["not_found"],
        )
        .description(
            "`verificationUrl` is `null` for a read-only key, and for every key once the session has left `created`: \
the link is never served again after the customer opened it.",
        ),
        "listConsultations" => Details::new(
            "Consultations",
            (
                "200",
                json_response(
                    "One page of results; `nextCursor` is null on the last page.",
                    schema_ref("ConsultationPage"),
                ),
            ),
            &["invalid_request"],
        )
        .description("Keyset pagination, stable under inserts. Images and data extracted from documents are never exposed.")
        .query(vec![
            limit_param(),
            query_param(
                "cursor",
                "The `nextCursor` of the previous page (opaque).",
                json!({ "type": "string" }),
            ),
            query_param(
                "workflowId",
                "Only results of this workflow.",
                json!({ "type": "string", "pattern": id_pattern("WFL") }),
            ),
            query_param(
                "verdict",
                "Only results with this verdict.",
                json!({ "type": "string", "enum": wire_values(Verdict::ALL, Verdict::as_str) }),
            ),
            query_param(
                "decision",
                "Only results with this decision (journey verifications).",
                json!({ "type": "string", "enum": wire_values(Decision::ALL, Decision::as_str) }),
            ),
            query_param(
                "externalRef",
                "Only results with exactly this client reference.",
                json!({ "type": "string", "maxLength": 255 }),
            ),
            query_param(
                "createdAfter",
                "Only results recorded after this instant (RFC 3339).",
                json!({ "type": "string", "format": "date-time" }),
            ),
        ]),
        "getConsultation" => Details::new(
            "Consultations",
            ("200", json_response("The result.", schema_ref("Consultation"))),
            &["not_found"],
        ),
        "getConsultationImage" => Details::new(
            "Consultations",
            (
                "200",
                download_response(
                    "The image, as stored (administrative documents may be a PDF or TIFF).",
                    &all_content_types(),
                    "<consultation id>-<side>.<jpg|png|webp|tif|pdf>",
                ),
            ),
            &["invalid_request", "not_found", "image_purged", "service_unavailable"],
        )
        .description(
            "Every download is audited (key, IP address, time). An image removed by the retention policy answers 404 `image_purged`.",
        ),
        "getConsultationCertificate" => Details::new(
            "Consultations",
            (
                "200",
                download_response(
                    "The PDF certificate, regenerated on demand.",
                    &["application/pdf"],
                    "<consultation id>-certificate.pdf",
                ),
            ),
            &["not_found"],
        ),
        "createBatch" => Details::new(
            "Batches",
            ("201", json_response("The batch, `open` for 24 hours.", schema_ref("Batch"))),
            &[
                "invalid_request",
                "payload_too_large",
                "too_many_open_batches",
                "service_unavailable",
            ],
        )
        .body("CreateBatchRequest"),
        "listBatches" => Details::new(
            "Batches",
            ("200", json_response("The batches, most recent first.", schema_ref("BatchList"))),
            &["invalid_request"],
        )
        .query(vec![limit_param()]),
        "getBatch" => Details::new(
            "Batches",
            (
                "200",
                json_response(
                    "The batch with its documents.",
                    json!({ "allOf": [schema_ref("Batch"), { "required": ["items"] }] }),
                ),
            ),
            &["not_found"],
        ),
        "depositDocument" => Details::new(
            "Batches",
            (
                "201",
                json_response(
                    "The document is recorded; nothing is analysed before the batch is submitted.",
                    schema_ref("Deposited"),
                ),
            ),
            &[
                "invalid_request",
                "invalid_document",
                "ia_desactivee",
                "not_found",
                "invalid_state",
                "document_too_large",
                "payload_too_large",
                "batch_full",
                "document_quota_exceeded",
                "volume_quota_exceeded",
                "service_unavailable",
            ],
        )
        .description(
            "The file waits encrypted until processing, then is deleted. A 429 invites submitting, canceling or \
waiting for the purge of a batch before depositing more. A 503 `service_unavailable` (the disk is full) kept nothing: \
send the same deposit again after `Retry-After`.",
        )
        .body("DepositRequest"),
        "submitBatch" => Details::new(
            "Batches",
            ("200", json_response("The batch, `in_progress`.", schema_ref("Batch"))),
            &["not_found", "invalid_state", "batch_empty", "service_unavailable"],
        )
        .description("Closes the batch to deposits; every result is returned before the new `expiresAt` (24 h)."),
        "cancelBatch" => Details::new(
            "Batches",
            ("200", json_response("The batch, `canceled`.", schema_ref("Batch"))),
            &["not_found", "invalid_state", "service_unavailable"],
        )
        .description(
            "Allowed from `open` and `in_progress`. Pending documents become `canceled`; a document already being \
processed finishes and its result stays valid.",
        ),
        "getOpenApi" => Details::new(
            "Operations",
            ("200", json_response("The OpenAPI 3.1 document.", json!({ "type": "object" }))),
            &[],
        ),
        "healthz" => Details::new("Operations", ("200", text_response("The process is alive (`ok`).")), &[]),
        "readyz" => Details::new("Operations", ("200", text_response("Ready (`ready`).")), &[])
            .other(vec![("503", text_response("The database is unreachable."))]),
        "journeyPage" => Details::new(
            "Journey",
            (
                "200",
                html_response("The journey page, or a page saying the link was already used."),
            ),
            &[],
        )
        .description(
            "Opening the link starts the session. Limited per session (30 openings a minute), then per client address \
(300 journey requests a minute); an unknown link counts against the address.",
        )
        .other(vec![
            ("404", html_response("Unknown link.")),
            ("410", html_response("Expired link.")),
            (
                "429",
                with_retry_after(html_response(
                    "Too many pages from this session or address; `Retry-After` gives the seconds to wait.",
                )),
            ),
            ("500", html_response("The service is unavailable; try again shortly.")),
            (
                "503",
                with_retry_after(html_response(
                    "The session cannot be started now (the disk is full); `Retry-After` gives the seconds to wait.",
                )),
            ),
        ]),
        "uploadJourneyFile" => Details::new(
            "Journey",
            (
                "201",
                json_response(
                    "The file is stored, encrypted, until the journey is submitted; `kind` is the type read from its bytes.",
                    schema_ref("JourneyFile"),
                ),
            ),
            &[
                "invalid_request",
                "invalid_document",
                "browser_request_forbidden",
                "not_found",
                "invalid_state",
                "document_too_large",
                "payload_too_large",
                "rate_limited",
                "service_unavailable",
            ],
        )
        .description(
            "Called by the journey page's script. The file type is read from the bytes, never from `Content-Type`: identity \
journeys take JPEG, PNG or WebP, administrative ones also a one-page PDF or TIFF. A side the journey does not take answers \
400 `invalid_request`; a journey already submitted, completed or expired 409 `invalid_state`. A browser's request must \
come from the journey page itself (`Sec-Fetch-Site: same-origin`, `Origin` the public base URL). Limited per session \
(60 writes a minute), then per client address (300 journey requests a minute).",
        )
        .headers(vec![csrf_header()])
        .raw_body(
            "The file itself, 10 Mo (10,000,000 bytes) at most; the body cap of every request is 30 MB.",
            &[all_content_types().as_slice(), &["application/octet-stream"]].concat(),
        ),
        "submitJourney" => Details::new(
            "Journey",
            (
                "202",
                json_response(
                    "The journey is `submitted`: its analysis is queued; poll the status.",
                    schema_ref("JourneyStatus"),
                ),
            ),
            &[
                "invalid_request",
                "browser_request_forbidden",
                "not_found",
                "invalid_state",
                "rate_limited",
                "service_unavailable",
            ],
        )
        .description(
            "Single use: the link then takes no more uploads nor a second submit (409 `invalid_state`). A required file not \
uploaded yet answers 400 `invalid_request` with `field` naming its side. Same origin rules and limits as the upload.",
        )
        .headers(vec![csrf_header()]),
        "getJourneyStatus" => Details::new(
            "Journey",
            (
                "200",
                json_response(
                    "The status of the session (`completed` once its result is recorded); never the verdict.",
                    schema_ref("JourneyStatus"),
                ),
            ),
            &["not_found", "rate_limited"],
        )
        .description(
            "Polled by the page while the analysis runs; limited per session (60 polls a minute), then per client address \
(300 journey requests a minute). An unknown token counts against the address.",
        ),
        "authenticityPage" => Details::new(
            "Journey",
            (
                "200",
                html_response(
                    "The certificate is genuine: every non-personal fact it prints (type, country, verdict, decision, review, checks, \
                     points of attention) and the fingerprint of those facts printed in its footer, no personal data.",
                ),
            ),
            &[],
        )
        .other(vec![
            (
                "404",
                html_response("The link is not a valid certificate link (forged or altered)."),
            ),
            ("500", html_response("The service is unavailable; try again shortly.")),
        ]),
        _ => return None,
    };
    Some(details)
}

/// The JSON Schema pattern of an id with that prefix (`API.md`, Identifiers).
fn id_pattern(prefix: &str) -> String {
    match prefix {
        "BAT" | "BTI" => format!("^{prefix}-[0-9a-f]{{8}}-[0-9a-f]{{8}}$"),
        _ => format!("^{prefix}-[0-9]{{8}}-[0-9a-f]{{12}}$"),
    }
}

/// The `{name}` segments of an axum path, in order.
fn path_parameter_names(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

/// The parameter object of one `{name}` segment; `id` takes its shape from the collection before it.
fn path_parameter(path: &str, name: &str) -> Value {
    let segments: Vec<&str> = path.split('/').collect();
    let collection = segments
        .iter()
        .position(|s| *s == format!("{{{name}}}"))
        .and_then(|i| i.checked_sub(1))
        .map(|i| segments[i]);
    let (description, schema) = match (name, collection) {
        ("id", Some("batches")) => ("Batch id.", json!({ "type": "string", "pattern": id_pattern("BAT") })),
        ("id", Some("consultations")) => (
            "Consultation id (`consultationId` of a webhook or a list).",
            json!({ "type": "string", "pattern": id_pattern("CSL") }),
        ),
        ("id", Some("verifications")) => (
            "Verification session id.",
            json!({ "type": "string", "pattern": id_pattern("VRF") }),
        ),
        ("side", Some("files")) => (
            "Which file of the journey: `front`, `back` (optional) and `selfie` for identity, `document` for administrative.",
            json!({ "type": "string", "enum": journey_sides() }),
        ),
        ("side", _) => (
            "Which image.",
            json!({ "type": "string", "enum": wire_values(ImageSide::ALL, ImageSide::as_str) }),
        ),
        ("token", _) => (
            "The token of a verificationUrl.",
            json!({ "type": "string", "pattern": "^[A-Za-z0-9]{1,128}$" }),
        ),
        _ => ("Path parameter.", json!({ "type": "string" })),
    };
    json!({ "name": name, "in": "path", "required": true, "description": description, "schema": schema })
}

fn with_request_id(mut response: Value) -> Value {
    if let Some(object) = response.as_object_mut() {
        let mut headers = response_headers(&[]);
        if let (Some(all), Some(Value::Object(own))) = (headers.as_object_mut(), object.remove("headers")) {
            all.extend(own);
        }
        object.insert("headers".into(), headers);
    }
    response
}

/// The operation object of one route.
fn operation(route: &Route) -> Value {
    let details =
        operation_details(route.operation_id).unwrap_or_else(|| panic!("operation {} has no details in openapi.rs", route.operation_id));
    let security = if route.authenticated {
        json!([{ "bearerAuth": [] }])
    } else {
        json!([])
    };
    let mut op = json!({
        "operationId": route.operation_id,
        "summary": route.summary,
        "tags": [details.tag],
        "security": security,
    });
    if let Some(description) = details.description {
        op["description"] = json!(description);
    }
    let parameters: Vec<Value> = path_parameter_names(route.path)
        .into_iter()
        .map(|name| path_parameter(route.path, name))
        .chain(details.query)
        .chain(details.headers)
        .collect();
    if !parameters.is_empty() {
        op["parameters"] = Value::Array(parameters);
    }
    if let Some(body) = details.body {
        op["requestBody"] = body;
    }

    let mut responses = Map::new();
    let (status, success) = details.success;
    responses.insert(status.into(), with_request_id(success));
    for (status, response) in details.other {
        responses.insert(status.into(), with_request_id(response));
    }
    let mut codes: Vec<&'static str> = Vec::new();
    if route.authenticated {
        codes.push("invalid_api_key");
        if route.method != Method::GET {
            codes.push("read_only_key");
        }
        // The throttle of wrong API keys, per client address.
        codes.push("rate_limited");
    }
    codes.extend(details.errors);
    if !responses.contains_key("500") {
        codes.push("internal_error");
    }
    let mut by_status: BTreeMap<u16, Vec<&'static str>> = BTreeMap::new();
    for code in codes {
        let by = by_status.entry(error_code(code).status).or_default();
        if !by.contains(&code) {
            by.push(code);
        }
    }
    for (status, codes) in by_status {
        assert!(
            !responses.contains_key(&status.to_string()),
            "{}: status {status} is both a page and an error",
            route.operation_id
        );
        responses.insert(status.to_string(), status_response(&codes));
    }
    op["responses"] = Value::Object(responses);
    op
}

// ---------------------------------------------------------------------------------------------
// Schemas

/// `components.schemas`: the resources as clients read them (`common::model`), the request bodies
/// and the error body.
fn schemas() -> Value {
    let category = json!({ "type": "string", "enum": wire_values(DocumentCategory::ALL, DocumentCategory::as_str) });
    let date_time = json!({ "type": "string", "format": "date-time" });
    let nullable_date_time = json!({ "type": ["string", "null"], "format": "date-time" });
    let external_ref = json!({ "type": ["string", "null"], "maxLength": 255, "description": "The client's reference, returned as given." });
    let mut decision = wire_values(Decision::ALL, Decision::as_str)
        .into_iter()
        .map(Value::from)
        .collect::<Vec<_>>();
    decision.push(Value::Null);
    let mut review = wire_values(ReviewStatus::ALL, ReviewStatus::as_str)
        .into_iter()
        .map(Value::from)
        .collect::<Vec<_>>();
    review.push(Value::Null);
    let mut item_error = wire_values(ItemError::ALL, ItemError::as_str)
        .into_iter()
        .map(Value::from)
        .collect::<Vec<_>>();
    item_error.push(Value::Null);

    json!({
        "Workflow": {
            "type": "object",
            "required": ["id", "name", "documentCategory", "createdAt"],
            "properties": {
                "id": { "type": "string", "pattern": id_pattern("WFL"), "description": "The value to pass as `workflowId`." },
                "name": { "type": "string" },
                "documentCategory": category,
                "createdAt": date_time,
            },
        },
        "WorkflowList": {
            "type": "object",
            "required": ["data"],
            "properties": { "data": { "type": "array", "items": schema_ref("Workflow") } },
        },
        "CreateVerificationRequest": {
            "type": "object",
            "required": ["workflowId"],
            "additionalProperties": false,
            "properties": {
                "workflowId": { "type": "string", "pattern": id_pattern("WFL"), "description": "From `GET /api/v1/workflows`." },
                "externalRef": external_ref,
                "expiresInMinutes": { "type": ["integer", "null"], "minimum": 5, "maximum": 10080, "default": 1440, "description": "Validity of the link." },
            },
        },
        "VerificationSession": {
            "type": "object",
            "required": ["id", "verificationUrl", "externalRef", "workflowId", "expiresAt", "status", "consultationId", "createdAt"],
            "properties": {
                "id": { "type": "string", "pattern": id_pattern("VRF") },
                "verificationUrl": {
                    "type": ["string", "null"],
                    "format": "uri",
                    "description": "Unique, single-use URL to hand to the end customer. `null` when the key is read-only, and for every key \
    once the session has left `created` (the customer opened the link): a link is served only until its journey starts.",
                },
                "externalRef": external_ref,
                "workflowId": { "type": "string", "pattern": id_pattern("WFL") },
                "expiresAt": date_time,
                "status": {
                    "type": "string",
                    "enum": wire_values(VerificationStatus::ALL, VerificationStatus::as_str),
                    "description": "Additive: where the journey stands.",
                },
                "consultationId": { "type": ["string", "null"], "pattern": id_pattern("CSL"), "description": "Additive: the result, once `completed`." },
                "createdAt": date_time,
            },
        },
        "Anomaly": {
            "type": "object",
            "required": ["code", "severity", "message"],
            "properties": {
                "code": { "type": "string", "enum": wire_values(AnomalyCode::ALL, AnomalyCode::as_str) },
                "severity": { "type": "string", "enum": wire_values(Severity::ALL, Severity::as_str) },
                "message": { "type": "string" },
            },
        },
        "TwoDDoc": {
            "type": "object",
            "required": ["present", "trusted", "signatureVerified", "signatureStatus", "dataMatches", "readStatus", "readStatusMessage"],
            "properties": {
                "present": { "type": "boolean" },
                "trusted": { "type": "boolean", "description": "The certificate belongs to an authority of the ANTS trust list." },
                "signatureVerified": { "type": "boolean" },
                "signatureStatus": {
                    "type": "string",
                    "enum": wire_values(SignatureStatus::ALL, SignatureStatus::as_str),
                },
                "dataMatches": { "type": "boolean" },
                "readStatus": { "type": "string", "enum": wire_values(ReadStatus::ALL, ReadStatus::as_str) },
                "readStatusMessage": { "type": ["string", "null"], "description": "Why the 2D-Doc could not be read, in words." },
            },
        },
        "Consultation": {
            "type": "object",
            "required": [
                "id", "externalRef", "workflowId", "documentCategory", "documentType", "documentCountry", "verdict", "decision",
                "reviewStatus", "anomalyCount", "hasRejectAnomaly", "anomalies", "twoDDoc", "analyzedAt", "createdAt",
            ],
            "properties": {
                "id": { "type": "string", "pattern": id_pattern("CSL") },
                "externalRef": external_ref,
                "workflowId": { "type": "string", "pattern": id_pattern("WFL") },
                "documentCategory": category,
                "documentType": {
                    "type": "string",
                    "enum": wire_values(DocumentType::ALL, DocumentType::as_str),
                },
                "documentCountry": { "type": ["string", "null"], "pattern": "^[A-Z]{3}$", "description": "ISO 3166-1 alpha-3; null when unknown." },
                "verdict": {
                    "type": "string",
                    "enum": wire_values(Verdict::ALL, Verdict::as_str),
                    "description": "The analysis's technical finding; never changed after it is recorded.",
                },
                "decision": { "type": ["string", "null"], "enum": decision, "description": "The workflow's decision; null for batch results." },
                "reviewStatus": { "type": ["string", "null"], "enum": review },
                "anomalyCount": { "type": "integer", "minimum": 0 },
                "hasRejectAnomaly": { "type": "boolean" },
                "anomalies": { "type": "array", "items": schema_ref("Anomaly") },
                "twoDDoc": { "anyOf": [schema_ref("TwoDDoc"), { "type": "null" }], "description": "Null when there is no 2D-Doc and nothing to report." },
                "analyzedAt": date_time,
                "createdAt": date_time,
            },
        },
        "ConsultationPage": {
            "type": "object",
            "required": ["data", "nextCursor"],
            "properties": {
                "data": { "type": "array", "items": schema_ref("Consultation") },
                "nextCursor": { "type": ["string", "null"], "description": "Pass as `cursor` for the next page; null on the last page." },
            },
        },
        "BatchCounts": {
            "type": "object",
            "required": ["total", "pending", "succeeded", "errored", "canceled", "expired"],
            "properties": {
                "total": { "type": "integer", "minimum": 0 },
                "pending": { "type": "integer", "minimum": 0 },
                "succeeded": { "type": "integer", "minimum": 0 },
                "errored": { "type": "integer", "minimum": 0 },
                "canceled": { "type": "integer", "minimum": 0 },
                "expired": { "type": "integer", "minimum": 0 },
            },
        },
        "BatchItem": {
            "type": "object",
            "required": ["id", "position", "documentCategory", "externalRef", "status", "consultationId", "error"],
            "properties": {
                "id": { "type": "string", "pattern": id_pattern("BTI") },
                "position": { "type": "integer", "minimum": 1 },
                "documentCategory": category,
                "externalRef": external_ref,
                "status": { "type": "string", "enum": wire_values(ItemStatus::ALL, ItemStatus::as_str) },
                "consultationId": { "type": ["string", "null"], "pattern": id_pattern("CSL"), "description": "Set for `succeeded` documents." },
                "error": { "type": ["string", "null"], "enum": item_error, "description": "Set for `errored` documents." },
            },
        },
        "Batch": {
            "type": "object",
            "required": ["id", "status", "externalRef", "counts", "submittedAt", "expiresAt", "endedAt", "createdAt"],
            "properties": {
                "id": { "type": "string", "pattern": id_pattern("BAT") },
                "status": { "type": "string", "enum": wire_values(BatchStatus::ALL, BatchStatus::as_str) },
                "externalRef": external_ref,
                "counts": schema_ref("BatchCounts"),
                "submittedAt": nullable_date_time,
                "expiresAt": { "type": "string", "format": "date-time", "description": "24 h after creation while open, then 24 h after submission." },
                "endedAt": nullable_date_time,
                "createdAt": date_time,
                "items": { "type": "array", "items": schema_ref("BatchItem"), "description": "Only in the detail read of a batch." },
            },
        },
        "BatchList": {
            "type": "object",
            "required": ["data"],
            "properties": { "data": { "type": "array", "items": schema_ref("Batch") } },
        },
        "CreateBatchRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "externalRef": external_ref,
                "webhookUrl": {
                    "type": ["string", "null"],
                    "format": "uri",
                    "maxLength": notifier::destination::MAX_URL_CHARS,
                    "description": "Absolute `https` URL notified with `batch.completed` when the batch ends. \
    Longer than 2,048 characters, or leading to a private, reserved or tunnelled address: `invalid_request`.",
                },
            },
        },
        "DepositRequest": {
            "type": "object",
            "required": ["documentCategory", "document"],
            "additionalProperties": false,
            "properties": {
                "documentCategory": category,
                "document": {
                    "type": "string",
                    "description": "The document in base64 (a data URL prefix and line breaks are tolerated), 10 Mo at most once decoded. \
    Identity: JPEG, PNG or WebP (the front). Administrative: one single-page PDF, JPEG, PNG, WebP or TIFF.",
                },
                "documentVerso": { "type": ["string", "null"], "description": "Back of an identity document, base64; refused for an administrative document." },
                "externalRef": external_ref,
                "agencyPostalCode": {
                    "type": ["string", "null"],
                    "pattern": "^\\d{5}$",
                    "description": "French postal code of the controlling agency's commune; one matching no commune is refused.",
                },
            },
        },
        "Deposited": {
            "type": "object",
            "required": ["id", "position"],
            "properties": {
                "id": { "type": "string", "pattern": id_pattern("BTI") },
                "position": { "type": "integer", "minimum": 1, "description": "Rank in the batch, from 1." },
            },
        },
        "JourneyFile": {
            "type": "object",
            "required": ["side", "kind", "bytes"],
            "properties": {
                "side": { "type": "string", "enum": journey_sides() },
                "kind": { "type": "string", "enum": wire_values(common::document::FileKind::ALL, common::document::FileKind::as_str), "description": "The type read from the file's bytes." },
                "bytes": { "type": "integer", "minimum": 1 },
            },
        },
        "JourneyStatus": {
            "type": "object",
            "required": ["status"],
            "properties": {
                "status": { "type": "string", "enum": wire_values(VerificationStatus::ALL, VerificationStatus::as_str) },
            },
        },
        "Error": {
            "type": "object",
            "required": ["error", "message"],
            "properties": {
                "error": { "type": "string", "description": "Machine-readable code." },
                "message": { "type": "string", "description": "One human sentence." },
                "field": { "type": "string", "description": "The input field at fault, when there is one." },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;
    use common::domain::ErrorCode;
    use common::store::RepoError;
    use std::collections::BTreeSet;

    const API_MD_CODES: &[&str] = &[
        "invalid_request",
        "invalid_document",
        "invalid_api_key",
        "read_only_key",
        "ia_desactivee",
        "browser_request_forbidden",
        "not_found",
        "image_purged",
        "invalid_state",
        "batch_empty",
        "document_too_large",
        "payload_too_large",
        "too_many_open_batches",
        "batch_full",
        "document_quota_exceeded",
        "volume_quota_exceeded",
        "rate_limited",
        "service_unavailable",
        "internal_error",
    ];

    const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

    fn doc() -> Value {
        document("https://sceau.example")
    }

    fn op<'a>(doc: &'a Value, route: &Route) -> &'a Value {
        &doc["paths"][route.path][route.method.as_str().to_ascii_lowercase()]
    }

    /// The error codes a response stands for: its `$ref` name, or the codes of a shared status.
    fn codes(doc: &Value, response: &Value) -> BTreeSet<String> {
        if let Some(r) = response["$ref"].as_str() {
            let name = r.strip_prefix("#/components/responses/").expect("an error response ref");
            assert!(doc["components"]["responses"][name].is_object());
            return BTreeSet::from([name.to_owned()]);
        }
        response["content"]["application/json"]["examples"]
            .as_object()
            .map(|e| e.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn codes_at(doc: &Value, route: &Route, status: &str) -> BTreeSet<String> {
        let response = &op(doc, route)["responses"][status];
        if response.is_null() {
            BTreeSet::new()
        } else {
            codes(doc, response)
        }
    }

    #[test]
    fn every_route_has_details() {
        for route in routes::table() {
            assert!(
                operation_details(route.operation_id).is_some(),
                "{} has no entry in operation_details",
                route.operation_id
            );
        }
    }

    #[test]
    fn header_and_servers() {
        let doc = doc();
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(doc["info"]["title"], "Sceau API");
        assert_eq!(doc["info"]["version"], "1.0.0");
        assert_eq!(doc["servers"], json!([{ "url": "https://sceau.example" }]));
        assert_eq!(doc["components"]["securitySchemes"]["bearerAuth"]["type"], "http");
        assert_eq!(doc["components"]["securitySchemes"]["bearerAuth"]["scheme"], "bearer");
        for name in [
            "Workflow",
            "VerificationSession",
            "CreateVerificationRequest",
            "Consultation",
            "Anomaly",
            "TwoDDoc",
            "Batch",
            "BatchCounts",
            "BatchItem",
            "CreateBatchRequest",
            "DepositRequest",
            "Deposited",
            "ConsultationPage",
            "WorkflowList",
            "BatchList",
            "JourneyFile",
            "JourneyStatus",
            "Error",
        ] {
            assert!(doc["components"]["schemas"][name].is_object(), "schema {name} missing");
        }
    }

    #[test]
    fn paths_are_exactly_the_route_table() {
        let doc = doc();
        let table = routes::table();
        let mut expected = BTreeSet::new();
        for route in &table {
            let method = route.method.as_str().to_ascii_lowercase();
            assert_eq!(op(&doc, route)["operationId"], route.operation_id, "{method} {}", route.path);
            assert_eq!(op(&doc, route)["summary"], route.summary);
            let security = &op(&doc, route)["security"];
            if route.authenticated {
                assert_eq!(*security, json!([{ "bearerAuth": [] }]), "{}", route.operation_id);
            } else {
                assert_eq!(*security, json!([]), "{}", route.operation_id);
            }
            assert!(
                expected.insert((route.path.to_owned(), method)),
                "{} {} twice in the table",
                route.method,
                route.path
            );
        }
        let mut found = BTreeSet::new();
        let mut operation_ids = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                assert!(METHODS.contains(&method.as_str()), "{path}: unexpected key {method}");
                found.insert((path.clone(), method.clone()));
                assert!(
                    operation_ids.insert(operation["operationId"].as_str().unwrap().to_owned()),
                    "duplicate operationId"
                );
            }
        }
        assert_eq!(found, expected);
    }

    #[test]
    fn every_ref_resolves() {
        fn walk(doc: &Value, v: &Value, seen: &mut usize) {
            match v {
                Value::Object(map) => {
                    if let Some(r) = map.get("$ref") {
                        let r = r.as_str().expect("$ref is a string");
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
        assert!(seen > 50, "only {seen} refs");
    }

    #[test]
    fn every_error_code_of_api_md_is_a_component() {
        let doc = doc();
        let responses = doc["components"]["responses"].as_object().unwrap();
        for code in API_MD_CODES {
            let response = &responses[*code];
            assert!(response.is_object(), "{code} missing");
            let example = &response["content"]["application/json"]["example"];
            assert_eq!(example["error"], *code);
            assert!(example["message"].as_str().is_some_and(|m| !m.is_empty()));
            assert_eq!(doc["components"]["examples"][*code]["value"], *example);
        }
        assert_eq!(responses.len(), API_MD_CODES.len(), "a code outside API.md");
        assert!(responses["rate_limited"]["headers"]["Retry-After"].is_object());
        assert!(responses["service_unavailable"]["headers"]["Retry-After"].is_object());
    }

    #[test]
    fn catalogue_statuses_match_the_error_mapping() {
        let mapped = [
            ApiError::from(RepoError::NotFound),
            ApiError::from(RepoError::InvalidState("x".into())),
            ApiError::from(RepoError::BatchEmpty),
            ApiError::from(RepoError::TooManyOpenBatches),
            ApiError::from(RepoError::BatchFull),
            ApiError::from(RepoError::DocumentQuota),
            ApiError::from(RepoError::VolumeQuota),
            ApiError::from(RepoError::IaDesactivee),
            ApiError::from(RepoError::Invalid {
                field: "x",
                message: "x".into(),
            }),
            ApiError::invalid_document("document", "x"),
            ApiError::invalid_api_key(),
            ApiError::rate_limited(1),
            ApiError::out_of_space("test"),
            crate::input::payload_too_large(),
            ApiError::new(ErrorCode::InternalError, "x"),
        ];
        for e in mapped {
            assert_eq!(error_code(e.code.as_str()).status, e.status.as_u16(), "{}", e.code);
        }
        for e in ERRORS {
            let code: ErrorCode = e.code.parse().unwrap();
            assert_eq!(code.status(), e.status, "{}", e.code);
        }
        for code in ErrorCode::ALL {
            assert!(ERRORS.iter().any(|e| e.code == code.as_str()), "{code} is not documented");
        }
    }

    #[test]
    fn path_parameters_match_the_segments() {
        let doc = doc();
        for route in routes::table() {
            let segments: Vec<&str> = path_parameter_names(route.path);
            let params: Vec<&Value> = op(&doc, &route)["parameters"]
                .as_array()
                .map(|p| p.iter().collect())
                .unwrap_or_default();
            let in_path: Vec<&str> = params
                .iter()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            assert_eq!(in_path, segments, "{}", route.path);
            for p in params.iter().filter(|p| p["in"] == "path") {
                assert_eq!(p["required"], true);
                assert!(p["schema"].is_object());
            }
            let mut names = BTreeSet::new();
            for p in &params {
                assert!(
                    names.insert((p["in"].as_str().unwrap(), p["name"].as_str().unwrap())),
                    "{}: duplicate parameter",
                    route.operation_id
                );
            }
        }
        assert_eq!(path_parameter_names("/api/v1/consultations/{id}/images/{side}"), ["id", "side"]);
    }

    #[test]
    fn query_parameters_of_the_lists() {
        let doc = doc();
        let names = |path: &str| -> Vec<String> {
            doc["paths"][path]["get"]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["in"] == "query")
                .map(|p| p["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            names("/api/v1/consultations"),
            [
                "limit",
                "cursor",
                "workflowId",
                "verdict",
                "decision",
                "externalRef",
                "createdAfter"
            ]
        );
        assert_eq!(names("/api/v1/batches"), ["limit"]);
        let verdict = &doc["paths"]["/api/v1/consultations"]["get"]["parameters"][3]["schema"]["enum"];
        assert_eq!(
            *verdict,
            json!(["conforme", "sans_anomalie", "non_conforme", "suspect", "analyse_impossible"])
        );
    }

    #[test]
    fn success_statuses() {
        let doc = doc();
        for route in routes::table() {
            let expected = match route.operation_id {
                "createVerification" | "createBatch" | "depositDocument" | "uploadJourneyFile" => "201",
                "submitJourney" => "202",
                _ => "200",
            };
            let responses = op(&doc, &route)["responses"].as_object().unwrap();
            let successes: Vec<&String> = responses.keys().filter(|s| s.starts_with('2')).collect();
            assert_eq!(successes, [expected], "{}", route.operation_id);
            for (status, response) in responses {
                assert!(status.len() == 3 && status.parse::<u16>().is_ok(), "{status}");
                assert!(response["$ref"].is_string() || response["description"].is_string());
            }
        }
        let content = |path: &str, status: &str| {
            doc["paths"][path]["get"]["responses"][status]["content"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(content("/api/v1/consultations/{id}/certificate", "200"), ["application/pdf"]);
        assert_eq!(content("/api/v1/consultations/{id}/images/{side}", "200").len(), 5);
        assert_eq!(content("/v/{token}", "200"), ["text/html"]);
        assert_eq!(content("/healthz", "200"), ["text/plain"]);
    }

    #[test]
    fn downloads_document_their_safety_headers() {
        let doc = doc();
        for path in ["/api/v1/consultations/{id}/certificate", "/api/v1/consultations/{id}/images/{side}"] {
            let headers = &doc["paths"][path]["get"]["responses"]["200"]["headers"];
            for name in [
                "Content-Disposition",
                "X-Content-Type-Options",
                "Content-Security-Policy",
                "x-request-id",
            ] {
                assert!(headers[name].is_object(), "{path}: {name} in {headers}");
            }
        }
    }

    #[test]
    fn error_responses_follow_the_rules() {
        let doc = doc();
        for route in routes::table() {
            let id = route.operation_id;
            let all: BTreeSet<String> = op(&doc, &route)["responses"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(s, _)| s.starts_with(['4', '5']))
                .flat_map(|(_, r)| codes(&doc, r))
                .collect();
            for code in &all {
                let status = error_code(code).status.to_string();
                assert!(
                    codes_at(&doc, &route, &status).contains(code),
                    "{id}: {code} under the wrong status"
                );
            }
            assert_eq!(route.authenticated, all.contains("invalid_api_key"), "{id}");
            if route.authenticated {
                assert!(all.contains("rate_limited"), "{id}: the throttle of wrong keys");
            }
            assert_eq!(
                route.authenticated && route.method != Method::GET,
                all.contains("read_only_key"),
                "{id}"
            );
            // The HTML pages answer their own 500 page instead of the JSON error.
            if !["/v/{token}", "/authenticite/{link}"].contains(&route.path) {
                assert!(all.contains("internal_error"), "{id}");
            }
            if route.authenticated && route.path.contains("{id}") {
                assert!(all.contains("not_found"), "{id}");
            }
            if op(&doc, &route)["requestBody"].is_object() {
                assert!(all.contains("invalid_request") && all.contains("payload_too_large"), "{id}");
            }
        }
        let table = routes::table();
        let route = |id: &str| table.iter().find(|r| r.operation_id == id).unwrap();
        let set = |codes: &[&str]| codes.iter().map(|c| c.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(
            codes_at(&doc, route("getConsultationImage"), "404"),
            set(&["not_found", "image_purged"])
        );
        assert_eq!(
            codes_at(&doc, route("createVerification"), "403"),
            set(&["read_only_key", "browser_request_forbidden"])
        );
        assert_eq!(codes_at(&doc, route("createVerification"), "429"), set(&["rate_limited"]));
        assert_eq!(codes_at(&doc, route("getBatch"), "429"), set(&["rate_limited"]));
        assert_eq!(
            codes_at(&doc, route("depositDocument"), "403"),
            set(&["read_only_key", "ia_desactivee"])
        );
        assert_eq!(
            codes_at(&doc, route("depositDocument"), "413"),
            set(&["document_too_large", "payload_too_large"])
        );
        assert_eq!(
            codes_at(&doc, route("depositDocument"), "429"),
            set(&["rate_limited", "batch_full", "document_quota_exceeded", "volume_quota_exceeded"])
        );
        assert_eq!(
            codes_at(&doc, route("createBatch"), "429"),
            set(&["rate_limited", "too_many_open_batches"])
        );
        assert_eq!(codes_at(&doc, route("submitBatch"), "409"), set(&["invalid_state", "batch_empty"]));
        assert_eq!(codes_at(&doc, route("cancelBatch"), "409"), set(&["invalid_state"]));
        assert_eq!(
            codes_at(&doc, route("uploadJourneyFile"), "400"),
            set(&["invalid_request", "invalid_document"])
        );
        assert_eq!(
            codes_at(&doc, route("uploadJourneyFile"), "413"),
            set(&["document_too_large", "payload_too_large"])
        );
        for id in ["uploadJourneyFile", "submitJourney"] {
            assert_eq!(codes_at(&doc, route(id), "403"), set(&["browser_request_forbidden"]), "{id}");
            assert_eq!(codes_at(&doc, route(id), "409"), set(&["invalid_state"]), "{id}");
        }
        assert_eq!(codes_at(&doc, route("submitJourney"), "400"), set(&["invalid_request"]));
        for id in ["uploadJourneyFile", "submitJourney", "getJourneyStatus"] {
            assert_eq!(codes_at(&doc, route(id), "404"), set(&["not_found"]), "{id}");
            assert_eq!(codes_at(&doc, route(id), "429"), set(&["rate_limited"]), "{id}");
        }
        for id in ["depositDocument", "uploadJourneyFile"] {
            assert_eq!(codes_at(&doc, route(id), "503"), set(&["service_unavailable"]), "{id}");
        }
        let page_limited = &op(&doc, route("journeyPage"))["responses"]["429"];
        assert!(page_limited["content"]["text/html"].is_object(), "{page_limited}");
        assert!(page_limited["headers"]["Retry-After"].is_object(), "{page_limited}");
        let shared = &op(&doc, route("depositDocument"))["responses"]["429"];
        assert_eq!(
            shared["content"]["application/json"]["schema"]["allOf"][1]["properties"]["error"]["enum"],
            json!(["rate_limited", "batch_full", "document_quota_exceeded", "volume_quota_exceeded"])
        );
    }

    /// The schemas describe what the models really serialise: same keys, required ones present.
    #[test]
    fn schemas_match_the_serialised_models() {
        use common::domain::{Anomaly, TwoDDoc};
        use common::ids::*;
        use common::model::*;

        let doc = doc();
        let check = |name: &str, value: Value| {
            let schema = &doc["components"]["schemas"][name];
            let properties: BTreeSet<&String> = schema["properties"].as_object().unwrap().keys().collect();
            let keys: BTreeSet<&String> = value.as_object().unwrap().keys().collect();
            assert_eq!(keys, properties, "{name}: serialised keys differ from the schema");
            for required in schema["required"].as_array().unwrap() {
                assert!(
                    value.get(required.as_str().unwrap()).is_some(),
                    "{name}: {required} required but absent"
                );
            }
        };
        let now = chrono::Utc::now();
        let date = now;
        let workflow = Workflow {
            id: WorkflowId::generate(now),
            name: "KYC".into(),
            document_category: DocumentCategory::Identite,
            created_at: date,
        };
        check("Workflow", serde_json::to_value(&workflow).unwrap());
        check(
            "WorkflowList",
            serde_json::to_value(crate::api::workflows::WorkflowList {
                data: vec![workflow.clone()],
            })
            .unwrap(),
        );
        let session = VerificationSession {
            id: VerificationId::generate(now),
            verification_url: Some("https://sceau.example/v/abc".into()),
            external_ref: None,
            workflow_id: workflow.id.clone(),
            expires_at: date,
            status: VerificationStatus::Created,
            consultation_id: None,
            created_at: date,
        };
        check("VerificationSession", serde_json::to_value(&session).unwrap());
        let withheld = VerificationSession {
            verification_url: None,
            status: VerificationStatus::Started,
            ..session
        };
        check("VerificationSession", serde_json::to_value(&withheld).unwrap());
        let anomaly = Anomaly::new(AnomalyCode::SelfieMismatch);
        check("Anomaly", serde_json::to_value(&anomaly).unwrap());
        let two_d_doc = TwoDDoc {
            present: true,
            trusted: true,
            signature_verified: true,
            signature_status: common::domain::SignatureStatus::Valid,
            data_matches: true,
            read_status: common::domain::ReadStatus::Read,
            read_status_message: None,
        };
        check("TwoDDoc", serde_json::to_value(&two_d_doc).unwrap());
        let consultation = Consultation {
            id: ConsultationId::generate(now),
            external_ref: Some("R".into()),
            workflow_id: workflow.id.clone(),
            document_category: DocumentCategory::Identite,
            document_type: common::domain::DocumentType::Passeport,
            document_country: Some("FRA".into()),
            verdict: Verdict::Conforme,
            decision: Some(Decision::Conforme),
            review_status: None,
            anomaly_count: 1,
            has_reject_anomaly: true,
            anomalies: vec![anomaly],
            two_d_doc: Some(two_d_doc),
            analyzed_at: date,
            created_at: date,
        };
        check("Consultation", serde_json::to_value(&consultation).unwrap());
        check(
            "ConsultationPage",
            serde_json::to_value(crate::api::consultations::Page {
                data: vec![consultation],
                next_cursor: None,
            })
            .unwrap(),
        );
        check("BatchCounts", serde_json::to_value(Counts::default()).unwrap());
        let item = BatchItem {
            id: BatchItemId::generate(now),
            position: 1,
            document_category: DocumentCategory::Administratif,
            external_ref: None,
            status: ItemStatus::Errored,
            consultation_id: None,
            error: Some(ItemError::IaDesactivee),
        };
        check("BatchItem", serde_json::to_value(&item).unwrap());
        check(
            "Deposited",
            serde_json::to_value(crate::api::deposits::Deposited {
                id: item.id.clone(),
                position: 1,
            })
            .unwrap(),
        );
        let batch = Batch {
            id: BatchId::generate(now),
            status: BatchStatus::Open,
            external_ref: None,
            counts: Counts::default(),
            submitted_at: None,
            expires_at: date,
            ended_at: None,
            created_at: date,
            items: Some(vec![item]),
        };
        check("Batch", serde_json::to_value(&batch).unwrap());
        let without_items = serde_json::to_value(Batch {
            items: None,
            ..batch.clone()
        })
        .unwrap();
        assert!(without_items.get("items").is_none());
        assert!(!doc["components"]["schemas"]["Batch"]["required"]
            .as_array()
            .unwrap()
            .contains(&json!("items")));
        check(
            "BatchList",
            serde_json::to_value(crate::api::batches::BatchList { data: vec![batch] }).unwrap(),
        );
        check(
            "JourneyFile",
            serde_json::to_value(crate::journey::uploads::Uploaded {
                side: JourneySide::Front,
                kind: "jpeg",
                bytes: 1,
            })
            .unwrap(),
        );
        check(
            "JourneyStatus",
            serde_json::to_value(crate::journey::uploads::Status {
                status: VerificationStatus::Submitted,
            })
            .unwrap(),
        );
        for kind in doc["components"]["schemas"]["JourneyFile"]["properties"]["kind"]["enum"]
            .as_array()
            .unwrap()
        {
            let kind = kind.as_str().unwrap();
            assert_eq!(kind.parse::<common::document::FileKind>().map(|k| k.as_str()).ok(), Some(kind));
        }
    }

    /// The journey's session endpoints: no API key, the CSRF header on writes, a raw upload body.
    #[test]
    fn journey_session_endpoints() {
        let doc = doc();
        let table = routes::table();
        let route = |id: &str| table.iter().find(|r| r.operation_id == id).unwrap();
        let header = |id: &str| -> Vec<Value> {
            op(&doc, route(id))["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["in"] == "header")
                .cloned()
                .collect()
        };
        for (id, method, path) in [
            ("uploadJourneyFile", Method::POST, "/v/{token}/files/{side}"),
            ("submitJourney", Method::POST, "/v/{token}/submit"),
            ("getJourneyStatus", Method::GET, "/v/{token}/status"),
        ] {
            let r = route(id);
            assert_eq!((&r.method, r.path, r.authenticated), (&method, path, false), "{id}");
            assert_eq!(op(&doc, r)["tags"], json!(["Journey"]), "{id}");
            let csrf = header(id);
            if method == Method::POST {
                assert_eq!(csrf.len(), 1, "{id}");
                assert_eq!(
                    (&csrf[0]["name"], &csrf[0]["required"]),
                    (&json!("X-CSRF-Token"), &json!(true)),
                    "{id}"
                );
            } else {
                assert!(csrf.is_empty(), "{id}: a read needs no CSRF token");
            }
        }
        let upload = op(&doc, route("uploadJourneyFile"));
        let media: BTreeSet<&str> = upload["requestBody"]["content"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(
            ["image/jpeg", "image/png", "image/webp", "application/pdf"]
                .iter()
                .all(|m| media.contains(m)),
            "{media:?}"
        );
        assert_eq!(upload["requestBody"]["content"]["application/pdf"]["schema"]["format"], "binary");
        assert!(op(&doc, route("submitJourney"))["requestBody"].is_null());
        let side = upload["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "side")
            .unwrap();
        assert_eq!(side["schema"]["enum"], json!(["front", "back", "selfie", "document"]));
        assert_eq!(
            op(&doc, route("getConsultationImage"))["parameters"][1]["schema"]["enum"],
            json!(["recto", "verso", "selfie"]),
            "the image side keeps its own names"
        );
    }

    #[test]
    fn enums_list_every_wire_value() {
        let doc = doc();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["Consultation"]["properties"]["decision"]["enum"],
            json!(["conforme", "a_verifier", "refuse", null])
        );
        assert_eq!(
            schemas["BatchItem"]["properties"]["status"]["enum"],
            json!(["uploading", "pending", "processing", "succeeded", "errored", "canceled", "expired"])
        );
        assert_eq!(
            schemas["Batch"]["properties"]["status"]["enum"],
            json!(["open", "in_progress", "ended", "canceled", "expired"])
        );
        assert_eq!(
            schemas["VerificationSession"]["properties"]["status"]["enum"],
            json!(["created", "started", "submitted", "completed", "expired"])
        );
        assert_eq!(
            schemas["Anomaly"]["properties"]["severity"]["enum"],
            json!(["info", "warning", "reject"])
        );
    }

    #[test]
    fn document_is_stable() {
        assert_eq!(document("https://a.example"), document("https://a.example"));
        assert!(serde_json::to_string(&doc()).unwrap().len() > 10_000);
    }
}
