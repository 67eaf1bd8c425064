//! The HTTP edge: the accept loop and each connection's limits. Every client connection is hostile
//! until it has sent a whole request: headers must arrive within [`HEADER_READ_TIMEOUT`], an idle
//! keep-alive connection is closed after the same time, a request (body included) gets
//! [`REQUEST_TIMEOUT`], and at most [`MAX_CONNECTIONS`] are served at once; beyond, new connections
//! are closed at once rather than queued.

use axum::extract::connect_info::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
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
/// Longest request, body included: a 30 MB deposit at 300 KB/s.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 1024;

/// Serves `app` on `listener` until `shutdown`, then lets in-flight requests finish.
pub async fn serve(listener: TcpListener, app: Router, shutdown: CancellationToken) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
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
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            metrics::counter!("sceau_http_connections_refused_total").increment(1);
            drop(stream);
            continue;
        };
        let app = app.clone();
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            serve_connection(stream, peer, app, shutdown).await;
            drop(slot);
        });
    }
    connections.close();
    connections.wait().await;
    Ok(())
}

async fn serve_connection(stream: TcpStream, peer: SocketAddr, app: Router, shutdown: CancellationToken) {
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let mut request = request.map(axum::body::Body::new);
        request.extensions_mut().insert(ConnectInfo(peer));
        app.clone().oneshot(request)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "connection ended with an error");
            }
        }
        _ = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}
