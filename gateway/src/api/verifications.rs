//! Verification sessions: `POST /api/v1/verifications` (server-side only), the additive
//! `GET /api/v1/verifications/{id}`, and test mode's `POST /api/v1/verifications/{id}/simulate`.

use super::path_id;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::input::{external_ref, Json, RawJson};
use crate::request_id::CurrentRequest;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use common::store::verifications;
use domain::ids::{VerificationId, WorkflowId};
use domain::model::VerificationSession;
use domain::return_url::ReturnUrl;
use domain::vocabulary::{Decision, ErrorCode, Mode, Verdict, VerificationStatus};
use serde::Deserialize;

/// The body of `POST /api/v1/verifications`. Fields are read loosely, then checked one by one,
/// so each refusal names its field.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = CreateVerificationRequest)]
pub struct CreateRequest {
    /// From `GET /api/v1/workflows`.
    #[schema(value_type = WorkflowId, required = true)]
    workflow_id: Option<String>,
    /// The client's reference, returned as given.
    #[schema(max_length = 255)]
    external_ref: Option<String>,
    /// Where the journey's end pages send the customer back (a button to the client's site):
    /// https, or http for a host the operator allows (`SCEAU_WEBHOOK_ALLOW_HOSTS`), without
    /// credentials. Returned exactly as given.
    #[schema(format = "uri", max_length = 2048)]
    return_url: Option<String>,
    /// Validity of the link, in minutes.
    #[serde(default, deserialize_with = "crate::input::whole_number")]
    #[schema(minimum = 5, maximum = 10080, default = 1440)]
    expires_in_minutes: Option<i64>,
}

const DEFAULT_EXPIRY_MINUTES: i64 = 1440;

/// The client's `returnUrl`, checked; plain http only to a host the operator allows for webhooks.
fn return_url(state: &AppState, raw: &str) -> Result<ReturnUrl, ApiError> {
    ReturnUrl::parse(raw, |url| notifier::destination::is_allow_listed(url, &state.webhook_allow_hosts))
        .map_err(|e| ApiError::invalid_request("returnUrl", e.to_string()))
}

pub fn journey_url(base: &str, token: &str) -> String {
    format!("{base}/v/{token}")
}

crate::openapi::errors::errors!(
    CreateErrors: Write + InvalidRequest + BrowserRequestForbidden + NotFound + PayloadTooLarge + ServiceUnavailable
);

/// Create a verification session (server-side only).
///
/// Call from the client's server only: a request carrying an `Origin` header (a browser) is
/// refused. An unknown workflow answers 404 `not_found`. Counts against the company's real-time
/// rate limit.
#[utoipa::path(
    post,
    path = "/api/v1/verifications",
    operation_id = "createVerification",
    tag = "Verifications",
    security(("bearerAuth" = [])),
    request_body = CreateRequest,
    responses(
        (status = 201, description = "The session; hand `verificationUrl` to the end customer.", body = VerificationSession),
        CreateErrors,
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    caller: Caller,
    Json(req): Json<CreateRequest>,
) -> ApiResult<(StatusCode, axum::Json<VerificationSession>)> {
    if headers.contains_key(axum::http::header::ORIGIN) {
        return Err(ApiError::new(
            ErrorCode::BrowserRequestForbidden,
            "Sessions must be created from your server, never from a browser.",
        ));
    }
    if let Err(wait) = state.realtime_limiter.check(caller.company_id.as_str()) {
        return Err(ApiError::rate_limited(wait));
    }
    let workflow_raw = req
        .workflow_id
        .ok_or_else(|| ApiError::invalid_request("workflowId", "workflowId is required."))?;
    let workflow_id: WorkflowId = workflow_raw.parse().map_err(|_| ApiError::not_found())?;
    let external_ref = external_ref("externalRef", req.external_ref)?;
    let return_url = req.return_url.as_deref().map(|raw| return_url(&state, raw)).transpose()?;
    let minutes = req.expires_in_minutes.unwrap_or(DEFAULT_EXPIRY_MINUTES);
    if !(5..=10080).contains(&minutes) {
        return Err(ApiError::invalid_request(
            "expiresInMinutes",
            "expiresInMinutes must be between 5 and 10080.",
        ));
    }
    let token = domain::ids::random_base62(43);
    let now = chrono::Utc::now();
    let id = VerificationId::generate(now);
    let sealed = state.keys.seal(&verifications::token_context(&id), token.as_bytes());
    let url = journey_url(&state.public_base, &token);
    let company = caller.company_id;
    let session = state
        .store
        .write(move |tx| {
            let new = verifications::NewSession {
                company: &company,
                workflow_id: &workflow_id,
                external_ref: external_ref.as_deref(),
                return_url: return_url.as_ref(),
                expires_in_minutes: minutes,
                token: &token,
                token_sealed: sealed,
                url,
            };
            verifications::create(tx, &id, new, now)
        })
        .await?;
    Ok((StatusCode::CREATED, axum::Json(session)))
}

/// Whether a session's link may be handed to this caller. A read-only key reads results; the link
/// would let its holder upload documents in the customer's name. And once the customer opened the
/// link (any status past `created`), the journey is theirs: serving the link again would let a
/// leaked or replayed API response join it.
fn serves_link(caller: &Caller, status: VerificationStatus) -> bool {
    !caller.read_only && status == VerificationStatus::Created
}

crate::openapi::errors::errors!(GetErrors: Read + NotFound);

/// Read a verification session and its status.
///
/// `verificationUrl` is `null` for a read-only key, and for every key once the session has left
/// `created`: the link is never served again after the customer opened it.
#[utoipa::path(
    get,
    path = "/api/v1/verifications/{id}",
    operation_id = "getVerification",
    tag = "Verifications",
    security(("bearerAuth" = [])),
    params(("id" = VerificationId, Path, description = "Verification session id.")),
    responses((status = 200, description = "The session with its status.", body = VerificationSession), GetErrors),
)]
pub async fn get(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<axum::Json<VerificationSession>> {
    let id: VerificationId = path_id(&id)?;
    let company = caller.company_id.clone();
    let lookup = id.clone();
    let (mut session, sealed) = state
        .store
        .read(move |c| verifications::get(c, &company, &lookup, chrono::Utc::now()))
        .await?;
    if serves_link(&caller, session.status) {
        let token = state
            .keys
            .open(&verifications::token_context(&id), &sealed)
            .map_err(|e| ApiError::internal("journey token", e))?;
        session.verification_url = Some(journey_url(&state.public_base, &String::from_utf8_lossy(&token)));
    }
    Ok(axum::Json(session))
}

/// The body of `POST /api/v1/verifications/{id}/simulate`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = SimulateVerificationRequest)]
pub struct SimulateRequest {
    /// The verdict of the made-up analysis.
    #[schema(value_type = Verdict, required = true)]
    verdict: Option<String>,
    /// The decision to record; by default the workflow's rules decide, as for a real journey.
    #[schema(value_type = Option<Decision>)]
    decision: Option<String>,
}

crate::openapi::errors::errors!(
    SimulateErrors: Write + InvalidRequest + NotFound + InvalidState + PayloadTooLarge + ServiceUnavailable
);

/// Complete a test-mode session with a chosen outcome.
///
/// Test mode only (a `sk_test_` key; a live key's request answers 404 `not_found`). Records a
/// result with `verdict` (a French passport or an invoice, with the anomaly that explains the
/// verdict) and `decision`, or the workflow's decision, completes the session and sends
/// `verification.completed` as a real journey does. A session that has ended answers 409
/// `invalid_state`.
#[utoipa::path(
    post,
    path = "/api/v1/verifications/{id}/simulate",
    operation_id = "simulateVerification",
    tag = "Verifications",
    security(("bearerAuth" = [])),
    params(("id" = VerificationId, Path, description = "Verification session id.")),
    request_body = SimulateRequest,
    responses(
        (status = 200, description = "The session, completed, with its `consultationId`.", body = VerificationSession),
        SimulateErrors,
    ),
)]
pub async fn simulate(
    State(state): State<AppState>,
    caller: Caller,
    CurrentRequest(request_id): CurrentRequest,
    Path(id): Path<String>,
    body: RawJson,
) -> ApiResult<axum::Json<VerificationSession>> {
    // Test mode's alone: to a live key, whatever it sends, the operation does not exist.
    if caller.mode != Mode::Test {
        return Err(ApiError::not_found());
    }
    let id: VerificationId = path_id(&id)?;
    let req: SimulateRequest = body.parse()?;
    let verdict: Verdict = req
        .verdict
        .ok_or_else(|| ApiError::invalid_request("verdict", "verdict is required."))?
        .parse()
        .map_err(|_| ApiError::invalid_request("verdict", "verdict must be a verdict of API.md."))?;
    let decision: Option<Decision> = req
        .decision
        .map(|d| d.parse())
        .transpose()
        .map_err(|_| ApiError::invalid_request("decision", "decision must be conforme, a_verifier or refuse."))?;
    let (company, lookup, now) = (caller.company_id.clone(), id.clone(), chrono::Utc::now());
    state
        .store
        .write(move |tx| verifications::simulate(tx, &company, &lookup, verdict, decision, request_id.as_ref(), now))
        .await?;
    // Its `verification.completed` leaves now, not at the relay's next look.
    state.outbox_wake.notify_one();
    let company = caller.company_id;
    let (session, _) = state
        .store
        .read(move |c| verifications::get(c, &company, &id, chrono::Utc::now()))
        .await?;
    Ok(axum::Json(session))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(read_only: bool) -> Caller {
        Caller {
            company_id: domain::ids::CompanyId::generate(chrono::Utc::now()),
            key_prefix: "sk_live_abcdefgh".into(),
            read_only,
            mode: domain::vocabulary::Mode::Live,
            scopes: domain::key_scopes::KeyScopes::all(),
        }
    }

    #[test]
    fn only_a_full_key_gets_the_link_and_only_before_the_journey_starts() {
        for status in VerificationStatus::ALL {
            let untouched = *status == VerificationStatus::Created;
            assert_eq!(serves_link(&caller(false), *status), untouched, "{status:?}");
            assert!(!serves_link(&caller(true), *status), "{status:?}");
        }
    }
}
