//! The HTTP edge against clients that hold connections open or send more than they may: the server
//! closes what stays silent, and refuses an upload it will not take before reading its body.

mod support;

use std::time::{Duration, Instant};
use support::{journey, Service};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn address(svc: &Service) -> String {
    svc.base.trim_start_matches("http://").trim_end_matches('/').to_owned()
}

/// Reads until the server closes the connection; returns what it sent and how long that took.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let start = Instant::now();
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit, stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            Err(_) => panic!("the server kept a silent connection open for {limit:?}"),
        }
    }
    (String::from_utf8_lossy(&received).into_owned(), start.elapsed())
}

#[tokio::test]
async fn silent_and_half_sent_connections_are_closed_by_the_server() {
    let svc = Service::start(&[]).await;

    // Twice the header timeout at most: a server without one would keep them open for good.
    let limit = Duration::from_secs(20);
    let silent = async {
        let mut stream = TcpStream::connect(address(&svc)).await.unwrap();
        until_closed(&mut stream, limit).await
    };
    let half = async {
        let mut stream = TcpStream::connect(address(&svc)).await.unwrap();
        stream.write_all(b"POST /api/v1/batches HTTP/1.1\r\nHost: sceau\r\n").await.unwrap();
        until_closed(&mut stream, limit).await
    };
    let idle = async {
        let mut stream = TcpStream::connect(address(&svc)).await.unwrap();
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: sceau\r\n\r\n").await.unwrap();
        until_closed(&mut stream, limit).await
    };
    let ((_, silent), (_, half), (answer, idle)) = tokio::join!(silent, half, idle);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    eprintln!("closed by the server after: silent {silent:?}, half-sent headers {half:?}, idle keep-alive {idle:?}");
}

/// Sends the head of an upload of `length` bytes and no body; returns the server's answer.
async fn answer_to_head(svc: &Service, path: &str, length: u64, csrf: &str) -> String {
    let mut stream = TcpStream::connect(address(svc)).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: sceau\r\nContent-Type: application/pdf\r\nContent-Length: {length}\r\nX-CSRF-Token: {csrf}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    // The answer comes while the body is still unsent; the connection may then be closed.
    while !String::from_utf8_lossy(&received).contains("\r\n\r\n{") || !received.ends_with(b"}") {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            Err(_) => panic!("no answer before the body; got {:?}", String::from_utf8_lossy(&received)),
        }
    }
    String::from_utf8_lossy(&received).into_owned()
}

#[tokio::test]
async fn an_upload_is_refused_before_its_body_is_read() {
    let svc = Service::start(&[]).await;
    let unknown = answer_to_head(&svc, "/v/NoSuchToken0123456789/files/document", 29_000_000, "x").await;
    assert!(unknown.starts_with("HTTP/1.1 404"), "{unknown}");
    assert!(unknown.contains("\"not_found\""), "{unknown}");

    let co = svc.company();
    let workflow = journey::workflow(&svc, &co, "administratif", None);
    let session = journey::session(&svc, &co, &workflow, "edge").await;
    let path = session
        .url
        .split_once("/v/")
        .map(|(_, rest)| format!("/v/{rest}/files/document"))
        .unwrap();
    let no_csrf = answer_to_head(&svc, &path, 29_000_000, "wrong").await;
    assert!(no_csrf.starts_with("HTTP/1.1 403"), "{no_csrf}");

    let (_, _, csrf) = journey::open(&svc, &session.url, None).await;
    let too_big = answer_to_head(&svc, &path, 10_000_001, csrf.as_deref().unwrap()).await;
    assert!(too_big.starts_with("HTTP/1.1 413"), "{too_big}");
    assert!(too_big.contains("\"payload_too_large\""), "{too_big}");
    assert_eq!(journey::uploads_stored(&svc, &session.id), 0);
}
