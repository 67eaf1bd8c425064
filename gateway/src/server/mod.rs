//! The HTTP edge: the accept loop and each connection's limits. Every client connection is hostile
//! until it has sent a whole request: headers must arrive within [`HEADER_READ_TIMEOUT`], an idle
//! keep-alive connection is closed after the same time, a request (body included) gets
//! `SCEAU_REQUEST_TIMEOUT_SECONDS`, and at most [`MAX_CONNECTIONS`] are open at once, at most
//! [`MAX_CONNECTIONS_PER_ADDRESS`] of them from one client address ([`admission`]). When all are
//! taken, the one idle the longest makes room for the newcomer; a newcomer that finds every
//! connection at work, or its address at its share, is closed at once rather than queued.

pub mod admission;

use crate::client_addr::{self, TrustedProxies};
use crate::error::ApiError;
use admission::{Admission, Limits, Ticket};
use axum::extract::connect_info::ConnectInfo;
use axum::response::IntoResponse;
use axum::Router;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;

/// Longest wait for a request's headers, and longest idle time of a kept-alive connection.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client of ours (the CLI, the tests) may keep an idle connection for reuse: well under
/// [`HEADER_READ_TIMEOUT`], or a request sent on a connection the gateway is closing at that very
/// moment fails with an incomplete message.
pub const CLIENT_POOL_IDLE: Duration = Duration::from_secs(5);
const _: () = assert!(CLIENT_POOL_IDLE.as_millis() < HEADER_READ_TIMEOUT.as_millis());
/// Longest time between two pieces of a request body.
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(20);
/// Most connections open at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// Most connections one client address (an IPv6 /64) holds at once: an eighth of the whole, room
/// for a company's office behind one NAT, not for one host to take every connection.
pub const MAX_CONNECTIONS_PER_ADDRESS: usize = 128;

/// Serves `app` on `listener` until `shutdown`, then lets in-flight requests finish. A client's
/// address is its TCP peer, or, from one of `trusted` proxies, the one `X-Forwarded-For` names.
pub async fn serve(listener: TcpListener, app: Router, trusted: Arc<TrustedProxies>, shutdown: CancellationToken) -> std::io::Result<()> {
    let admission = Admission::new(Limits {
        total: MAX_CONNECTIONS,
        per_address: MAX_CONNECTIONS_PER_ADDRESS,
    });
    let connections = TaskTracker::new();
    loop {
        let (stream, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before it was accepted: the
                    // listener itself is fine, so wait a moment rather than spin.
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let peer_ip = peer.ip().to_canonical();
        // A trusted proxy carries many clients: its requests are counted by the client they name.
        let key = (!trusted.contains(peer_ip)).then(|| client_addr::limit_key(peer_ip));
        let ticket = match admission.admit(key) {
            Ok(ticket) => ticket,
            Err(refusal) => {
                metrics::counter!("sceau_http_connections_refused_total", "reason" => refusal.as_str()).increment(1);
                drop(stream);
                continue;
            }
        };
        let connection = Connection {
            peer,
            app: app.clone(),
            trusted: trusted.clone(),
            admission: admission.clone(),
        };
        let shutdown = shutdown.clone();
        connections.spawn(connection.serve(stream, ticket, shutdown));
    }
    connections.close();
    connections.wait().await;
    Ok(())
}

/// What one connection's task needs.
struct Connection {
    peer: SocketAddr,
    app: Router,
    trusted: Arc<TrustedProxies>,
    admission: Arc<Admission>,
}

impl Connection {
    async fn serve(self, stream: TcpStream, ticket: Ticket, shutdown: CancellationToken) {
        let Connection {
            peer,
            app,
            trusted,
            admission,
        } = self;
        let requests = ticket.requests();
        let proxied = trusted.contains(peer.ip().to_canonical());
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            // Until its answer's body is sent, the connection is at work and is not evicted.
            let in_flight = requests.start();
            let hold = if proxied {
                let client = client_addr::client_addr(peer.ip(), request.headers(), &trusted);
                admission.hold(client_addr::limit_key(client)).map(Some)
            } else {
                Ok(None)
            };
            let app = app.clone();
            async move {
                let Ok(hold) = hold else {
                    metrics::counter!("sceau_http_requests_refused_total", "reason" => "per_address").increment(1);
                    return Ok(ApiError::rate_limited(1).into_response());
                };
                let mut request = request.map(axum::body::Body::new);
                request.extensions_mut().insert(ConnectInfo(peer));
                let response = app.oneshot(request).await?;
                // The guards live as long as the answer's body: dropped once it is sent or abandoned.
                Ok::<_, std::convert::Infallible>(response.map(move |body| {
                    axum::body::Body::new(body.map_frame(move |frame| {
                        let _held = (&in_flight, &hold);
                        frame
                    }))
                }))
            }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .keep_alive(true);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        let evicted = ticket.evicted();
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
            }
            // Chosen because it had no request in flight: closing it loses nothing.
            _ = evicted.cancelled() => {
                metrics::counter!("sceau_http_connections_evicted_total").increment(1);
            }
            _ = shutdown.cancelled() => {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        }
        drop(ticket);
    }
}
