//! The OpenAPI 3.1 document of the API, derived from the code: each handler's `#[utoipa::path]`
//! (registered with its route in `routes`), the types it reads and writes (`ToSchema`), the
//! errors it declares beside itself (`errors!`), and the webhook events of `domain::webhook`.
//! Served at `GET /api/v1/openapi.json`; its tests hold it to a snapshot and to the API's rules.

pub mod errors;
mod webhooks;

use axum::extract::State;
use common::document::FileKind;
use serde_json::Value;
use std::sync::OnceLock;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi, RefOr, Required, Server};

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// What the handlers do not say: the document's header, its tags, the error body, the webhook
/// payloads (which no handler returns) and the types only path parameters name.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Sceau API",
        version = "1.0.0",
        description = "Identity and administrative document verification: verification sessions, results \
(consultations), deferred analysis batches, image and certificate download. Every call of `/api/v1` \
except this document needs `Authorization: Bearer <API key>`; a read-only key (`rk_live_…`) may only \
call GET operations. Errors answer `{\"error\": \"<code>\", \"message\": \"…\"}`, with `field` when one \
input field is at fault. Every response carries `x-request-id`. The events Sceau sends are under `webhooks`.",
    ),
    tags(
        (name = "Workflows", description = "The company's workflows (created by an operator)."),
        (name = "Verifications", description = "Verification sessions: a journey URL for one end customer."),
        (name = "Consultations", description = "Verification results, their images and certificate."),
        (name = "Batches", description = "Deferred analysis of documents the client already holds."),
        (name = "Journey", description = "Pages behind a verificationUrl, for the end customer, and the session endpoints \
their script calls. No API key: the session token in the path authorises, and every write also needs the page's `X-CSRF-Token`."),
        (name = "Operations", description = "Probes and this document."),
        (name = "Webhooks", description = "The events Sceau posts to the client's receivers, signed as Standard Webhooks."),
    ),
    components(schemas(crate::error::ErrorBody, domain::webhook::EventBody, domain::vocabulary::ImageSide)),
)]
pub struct ApiDoc;

// Built once: `public_base` never changes within a process.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    operation_id = "getOpenApi",
    tag = "Operations",
    responses(
        (status = 200, description = "This OpenAPI 3.1 document.", body = Object),
        ServeErrors,
    ),
)]
/// This OpenAPI 3.1 document.
pub async fn serve(State(state): State<AppState>) -> ApiResult<axum::Json<Value>> {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    if let Some(served) = DOCUMENT.get() {
        return Ok(axum::Json(served.clone()));
    }
    let built = serde_json::to_value(document(&state.public_base)).map_err(|e| ApiError::internal("openapi document", e))?;
    Ok(axum::Json(DOCUMENT.get_or_init(|| built).clone()))
}

errors::errors!(ServeErrors: Public);

/// The whole document, with `public_base` as its only server.
pub fn document(public_base: &str) -> OpenApi {
    let (_, mut api) = crate::routes::router().split_for_parts();
    api.servers = Some(vec![Server::new(public_base)]);
    let components = api.components.get_or_insert_with(Default::default);
    components.add_security_scheme("bearerAuth", bearer_auth());
    components.responses.extend(errors::catalogue());
    journey_upload_media_types(&mut api);
    deposit_back_only_for_identity(&mut api);
    anomaly_codes_described(&mut api);
    request_id_on_every_response(&mut api);
    idempotency_key_on_every_post(&mut api);
    webhook_event_variants_named(&mut api);
    one_retry_after(&mut api);
    api.extensions
        .get_or_insert_with(Default::default)
        .insert("webhooks".to_owned(), webhooks::webhooks());
    api
}

fn bearer_auth() -> SecurityScheme {
    let mut http = Http::new(HttpAuthScheme::Bearer);
    http.description = Some(format!(
        "`Authorization: Bearer sk_live_…` (full key) or `rk_live_…` (read-only key). After {} wrong keys in a minute \
         (by default; the operator's `SCEAU_KEY_FAILURES_PER_MINUTE`) from one client address, every request from it \
         answers 429 `rate_limited`, whatever its key, until `Retry-After` has passed.",
        crate::rate_limit::KEY_FAILURES_PER_MINUTE
    ));
    SecurityScheme::Http(http)
}

/// The journey's upload takes a file of any accepted kind: its media types come from the one list
/// of file kinds, which the `#[utoipa::path]` attribute cannot read.
fn journey_upload_media_types(api: &mut OpenApi) {
    let Some(operation) = api
        .paths
        .paths
        .get_mut(crate::journey::uploads::UPLOAD_PATH)
        .and_then(|item| item.post.as_mut())
    else {
        return;
    };
    let binary = || {
        ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::String).format(Some(
            utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::Binary),
        ))))
    };
    let media_types = FileKind::ALL
        .iter()
        .map(|kind| kind.content_type())
        .chain(["application/octet-stream"]);
    let body = media_types.fold(
        RequestBodyBuilder::new()
            .required(Some(utoipa::openapi::Required::True))
            .description(Some(
                "The file itself, 10 Mo (10,000,000 bytes) at most; the body cap of every request is 30 MB. Its type is read \
                 from its bytes, never from `Content-Type`.",
            )),
        |body, media_type| body.content(media_type, binary().build()),
    );
    operation.request_body = Some(body.build());
}

/// A back (`documentVerso`) is refused for an administrative document (`api::deposits`): a rule
/// between two fields, which JSON Schema states with `if`/`then` and `ToSchema` cannot.
fn deposit_back_only_for_identity(api: &mut OpenApi) {
    let Some(RefOr::T(utoipa::openapi::schema::Schema::Object(deposit))) =
        api.components.as_mut().and_then(|c| c.schemas.get_mut("DepositRequest"))
    else {
        return;
    };
    let administrative = domain::vocabulary::DocumentCategory::Administratif.as_str();
    let rule = deposit.extensions.get_or_insert_with(Default::default);
    rule.insert(
        "if".to_owned(),
        serde_json::json!({ "properties": { "documentCategory": { "const": administrative } }, "required": ["documentCategory"] }),
    );
    rule.insert(
        "then".to_owned(),
        serde_json::json!({ "properties": { "documentVerso": { "type": "null" } } }),
    );
}

/// Each anomaly code with its severity and meaning, from the one catalogue (`domain::catalogue`),
/// which the derived schema lists without a word.
fn anomaly_codes_described(api: &mut OpenApi) {
    let Some(RefOr::T(utoipa::openapi::schema::Schema::Object(codes))) =
        api.components.as_mut().and_then(|c| c.schemas.get_mut("AnomalyCode"))
    else {
        return;
    };
    let table: String = domain::vocabulary::AnomalyCode::ALL
        .iter()
        .map(|code| format!("\n- `{}` ({}): {}", code.as_str(), code.severity().as_str(), code.meaning()))
        .collect();
    codes.description = Some(format!(
        "An anomaly code of the catalogue: its severity weighs on the verdict (`reject` makes it `non_conforme`, \
         `warning` `suspect`), its meaning is the anomaly's `message`, which may add a detail in parentheses.{table}"
    ));
}

/// Every response carries `x-request-id` (set by `middleware`), whatever the operation.
fn request_id_on_every_response(api: &mut OpenApi) {
    let header = HeaderBuilder::new()
        .description(Some("Identifier of the request, also written in the service's logs."))
        .schema(ObjectBuilder::new().schema_type(Type::String))
        .build();
    let mut add = |response: &mut RefOr<utoipa::openapi::Response>| {
        if let RefOr::T(response) = response {
            response.headers.insert("x-request-id".to_owned(), header.clone());
        }
    };
    for item in api.paths.paths.values_mut() {
        for operation in operations(item) {
            operation.responses.responses.values_mut().for_each(&mut add);
        }
    }
    if let Some(components) = api.components.as_mut() {
        components.responses.values_mut().for_each(&mut add);
    }
}

/// Every POST of the API takes an `Idempotency-Key` (`crate::idempotency`), and its successful
/// responses say when they are a replay; the refusals are among `Access::Write`'s codes.
fn idempotency_key_on_every_post(api: &mut OpenApi) {
    let key = ParameterBuilder::new()
        .name("Idempotency-Key")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "Makes the request safe to retry: for 24 hours, the same key with the same method, path and body replays the              first response (with `Idempotent-Replayed: true`); with another request it answers 422              `idempotency_key_reused`, and while the first is still processed 409 `idempotency_key_in_use`. Keys are              scoped to the company. A fresh random value (a UUID) per operation is the usual choice.",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(crate::idempotency::MAX_KEY_LEN))
                .pattern(Some("^[ -~]+$")),
        ))
        .build();
    let replayed = HeaderBuilder::new()
        .description(Some(
            "`true` when this response is the replay of an earlier request with the same `Idempotency-Key`.",
        ))
        .schema(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["true"])))
        .build();
    for (path, item) in api.paths.paths.iter_mut() {
        let Some(operation) = item.post.as_mut().filter(|_| path.starts_with("/api/v1/")) else {
            continue;
        };
        operation.parameters.get_or_insert_with(Vec::new).push(key.clone());
        for (status, response) in operation.responses.responses.iter_mut() {
            if let (true, RefOr::T(response)) = (status.starts_with('2'), response) {
                response.headers.insert("Idempotent-Replayed".to_owned(), replayed.clone());
            }
        }
    }
}

/// Each variant of `WebhookEvent` as a schema of its own (`VerificationCompletedEvent`…), referenced
/// from the `oneOf`: client generators (openapi-python-client among them) give up on a union whose
/// members are inline `allOf`s, and a named type per event is what a receiver's code wants anyway.
fn webhook_event_variants_named(api: &mut OpenApi) {
    use utoipa::openapi::schema::Schema;
    let Some(components) = api.components.as_mut() else {
        return;
    };
    let Some(RefOr::T(Schema::OneOf(union))) = components.schemas.get_mut("WebhookEvent") else {
        return;
    };
    let mut named = Vec::new();
    for item in union.items.iter_mut() {
        let Some(event) = event_of(item) else {
            continue;
        };
        let name = format!("{}Event", pascal_case(event.as_str()));
        let schema = std::mem::replace(item, RefOr::Ref(utoipa::openapi::Ref::from_schema_name(&name)));
        named.push((name, schema));
    }
    let bodies = named.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>();
    components.schemas.extend(named);
    event_body_as_union(components, &bodies);
}

/// `EventBody` (an event with its id and time) as one named body per event, each the event and the
/// envelope: the derived `allOf` of the union and the envelope is what generators cannot take.
fn event_body_as_union(components: &mut utoipa::openapi::Components, events: &[String]) {
    use utoipa::openapi::schema::{AllOfBuilder, OneOfBuilder, Schema};
    let Some(RefOr::T(Schema::AllOf(derived))) = components.schemas.get("EventBody") else {
        return;
    };
    // The derived allOf: the union first, then the envelope's properties.
    let (Some(RefOr::Ref(_)), Some(envelope)) = (derived.items.first(), derived.items.get(1).cloned()) else {
        return;
    };
    let description = derived.description.clone();
    components.schemas.insert("EventEnvelope".to_owned(), envelope);
    let mut union = OneOfBuilder::new().description(description);
    for event in events {
        let body_name = format!("{event}Body");
        let body = AllOfBuilder::new()
            .item(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(event)))
            .item(RefOr::Ref(utoipa::openapi::Ref::from_schema_name("EventEnvelope")));
        components.schemas.insert(body_name.clone(), RefOr::T(Schema::AllOf(body.build())));
        union = union.item(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(&body_name)));
    }
    components
        .schemas
        .insert("EventBody".to_owned(), RefOr::T(Schema::OneOf(union.build())));
}

/// The event a variant of `WebhookEvent` is for: the one its `event` property names.
fn event_of(variant: &RefOr<utoipa::openapi::schema::Schema>) -> Option<domain::webhook::EventType> {
    let text = serde_json::to_string(variant).ok()?;
    let mut events = domain::webhook::EventType::ALL
        .iter()
        .filter(|event| text.contains(&format!("\"enum\":[\"{}\"]", event.as_str())));
    let event = events.next()?;
    events.next().is_none().then_some(*event)
}

/// `verification.completed` → `VerificationCompleted`.
fn pascal_case(dotted: &str) -> String {
    dotted
        .split(['.', '_'])
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Every `Retry-After` the same: at least one second (a path attribute can only name its type).
fn one_retry_after(api: &mut OpenApi) {
    for item in api.paths.paths.values_mut() {
        for operation in operations(item) {
            for response in operation.responses.responses.values_mut() {
                if let RefOr::T(response) = response {
                    if let Some(header) = response.headers.get_mut("Retry-After") {
                        *header = errors::retry_after();
                    }
                }
            }
        }
    }
}

fn operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.options.as_mut(),
        item.head.as_mut(),
        item.patch.as_mut(),
        item.trace.as_mut(),
    ]
    .into_iter()
    .flatten()
}

#[cfg(test)]
mod tests;
