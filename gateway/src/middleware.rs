//! Layers around every route: request ids (`x-request-id` on every response), JSON access logs
//! with that id and the route template (never the raw path, which carries journey tokens), body cap, panic catching (→ 500 `internal_error`), refusal of CORS preflights,
//! request metrics, and HSTS when the service is reached over https.

use crate::error::ApiError;
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use common::telemetry::RequestId;
use domain::vocabulary::ErrorCode;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};

/// The hard cap on request bodies (`payload_too_large` beyond).
pub const BODY_LIMIT: usize = 30_000_000;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Two years, the preload lists' minimum; subdomains are left to the client's own policy.
const STRICT_TRANSPORT: HeaderValue = HeaderValue::from_static("max-age=63072000");

/// When the public URL is https: browsers that saw it once never reach the service in clear again
/// (a journey link typed or rewritten as http would carry its token in clear).
pub async fn strict_transport(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(axum::http::header::STRICT_TRANSPORT_SECURITY, STRICT_TRANSPORT);
    response
}

pub fn wrap(router: Router) -> Router {
    router
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::from_fn(refuse_preflight))
        .layer(middleware::from_fn(record_metrics))
        .layer(CatchPanicLayer::custom(|_| ApiError::internal("handler", "panic").into_response()))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    let id = req.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
                    // The route template only: a raw path carries journey tokens and ids, a query
                    // string client references; bodies are never logged. An error-level span stays
                    // enabled whatever the filter, so error logs keep the id.
                    tracing::error_span!("request", request_id = %id, method = %req.method(), route = %route_template(req))
                })
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(middleware::from_fn(drop_unusable_request_id))
}

/// A client may name its request, but only with an id [`RequestId::parse`] keeps: another one
/// is dropped here, so the request gets a fresh one and no log line or job carries it.
async fn drop_unusable_request_id(mut req: Request, next: Next) -> Response {
    let usable = req
        .headers()
        .get(&REQUEST_ID)
        .map(|value| value.to_str().ok().and_then(RequestId::parse).is_some());
    if usable == Some(false) {
        req.headers_mut().remove(&REQUEST_ID);
    }
    next.run(req).await
}

/// No CORS: a browser preflight is refused outright.
async fn refuse_preflight(req: Request, next: Next) -> Response {
    if req.method() == Method::OPTIONS {
        return ApiError::new(ErrorCode::BrowserRequestForbidden, "Cross-origin browser requests are not allowed.").into_response();
    }
    next.run(req).await
}

/// The route the request matched (`/v/{token}`), never its raw path; `unmatched` for the fallback.
fn route_template(req: &Request) -> String {
    req.extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into())
}

async fn record_metrics(req: Request, next: Next) -> Response {
    let route = route_template(&req);
    let method = crate::metrics_listener::method_label(req.method());
    let start = std::time::Instant::now();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!("sceau_http_requests_total", "route" => route.clone(), "method" => method, "status" => status).increment(1);
    metrics::histogram!("sceau_http_request_duration_seconds", "route" => route, "method" => method).record(start.elapsed().as_secs_f64());
    response
}
