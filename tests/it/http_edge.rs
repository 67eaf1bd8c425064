//! The HTTP edge against clients that hold connections open or send more than they may: the server
//! closes what stays silent, refuses an upload it will not take before reading its body, gives one
//! address its share of connections and no more, makes room for a newcomer when half-open
//! connections fill it, and lets go of a trickled request at its deadline.

use crate::support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use support::{journey, Service};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

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

/// Opens `count` connections from `local` (any 127.0.0.0/8 address reaches the service) that
/// never send a byte.
async fn half_open(svc: &Service, local: &str, count: usize) -> Vec<TcpStream> {
    let target: SocketAddr = address(svc).parse().expect("the service's address");
    let from = SocketAddr::new(local.parse().expect("a local address"), 0);
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        let socket = TcpSocket::new_v4().expect("a socket");
        socket.bind(from).expect("bound to the local address");
        streams.push(socket.connect(target).await.expect("connected"));
    }
    streams
}

/// How many of `streams` the server closes within `within` (the others stay open that long).
async fn closed_by_the_server(streams: Vec<TcpStream>, within: Duration) -> usize {
    let reads = streams.into_iter().map(|mut stream| {
        tokio::spawn(async move {
            let mut byte = [0u8; 1];
            matches!(tokio::time::timeout(within, stream.read(&mut byte)).await, Ok(Ok(0) | Err(_)))
        })
    });
    let mut closed = 0;
    for read in reads.collect::<Vec<_>>() {
        closed += usize::from(read.await.expect("a read"));
    }
    closed
}

/// `GET /healthz` from `local`, timed; panics when it is not answered 200 within 2 s.
async fn healthz_from(svc: &Service, local: &str) -> Duration {
    let client = reqwest::Client::builder()
        .local_address(local.parse::<std::net::IpAddr>().expect("an address"))
        .timeout(Duration::from_secs(2))
        .build()
        .expect("a client");
    let start = Instant::now();
    let answer = client.get(svc.url("/healthz")).send().await;
    let waited = start.elapsed();
    match answer {
        Ok(r) => assert_eq!(r.status(), 200),
        Err(error) => panic!("a request from {local} was not answered: {error}"),
    }
    waited
}

/// A host opening connections by the thousand keeps 128 of them; the rest are closed at once, and
/// another address is answered as if nothing happened. Without a cap per address, 1,100 silent
/// connections from one host took every one of the 1,024 (until their header timeout, 10 s).
#[tokio::test]
async fn one_address_cannot_hold_every_connection() {
    let svc = Service::start(&[]).await;
    let flood = half_open(&svc, "127.0.0.5", 1_100).await;
    let waited = healthz_from(&svc, "127.0.0.6").await;
    let closed = closed_by_the_server(flood, Duration::from_secs(2)).await;
    eprintln!("1,100 silent connections from one address: {closed} closed at once; another address answered in {waited:?}");
    assert!(
        closed >= 1_100 - 128,
        "only {closed} of 1,100 connections from one address were refused"
    );
    assert!(closed < 1_100, "the address kept none of its connections");
}

/// Silent connections from many addresses fill every place: the oldest of them makes room for a
/// newcomer, who is answered at once. Without eviction, the newcomer was closed unanswered.
#[tokio::test]
async fn half_open_connections_from_many_addresses_make_room_for_a_newcomer() {
    let svc = Service::start(&[]).await;
    let mut flood = Vec::new();
    for host in 10..19 {
        flood.extend(half_open(&svc, &format!("127.0.1.{host}"), 128).await);
    }
    let waited = healthz_from(&svc, "127.0.0.7").await;
    eprintln!(
        "{} silent connections from 9 addresses; a newcomer answered in {waited:?}",
        flood.len()
    );
    let closed = closed_by_the_server(flood, Duration::from_secs(2)).await;
    assert!(closed >= 1_152 - 1_024, "only {closed} silent connections made room");
}

/// A deposit with an `Idempotency-Key` runs on after its client leaves, so that its answer is
/// remembered; trickled a byte a second, it is answered `408` at the request's deadline and its
/// connection closed soon after, not held while the trickle goes on.
#[tokio::test]
async fn a_trickled_idempotent_deposit_lets_go_of_its_connection_at_its_deadline() {
    let svc = Service::start(&[("SCEAU_REQUEST_TIMEOUT_SECONDS", "2")]).await;
    let co = svc.company();
    let batch = svc.open_batch(&co.key, None).await;
    let mut stream = TcpStream::connect(address(&svc)).await.unwrap();
    let head = format!(
        "POST /api/v1/batches/{batch}/documents HTTP/1.1\r\nHost: sceau\r\nAuthorization: Bearer {}\r\n\
         Idempotency-Key: trickle-1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{",
        co.key
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let start = Instant::now();
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    let closed_after = loop {
        assert!(
            start.elapsed() < Duration::from_secs(12),
            "the connection was still held after 12 s of trickling; received {:?}",
            String::from_utf8_lossy(&received)
        );
        match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break start.elapsed(),
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
            // Nothing to read: one more byte of the body.
            Err(_) => {
                if stream.write_all(b" ").await.is_err() {
                    break start.elapsed();
                }
            }
        }
    };
    let answer = String::from_utf8_lossy(&received);
    eprintln!("trickled idempotent deposit: closed after {closed_after:?}");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    // The key was let go: the same key with a whole request is served.
    let r = svc
        .http
        .post(svc.url(&format!("/api/v1/batches/{batch}/documents")))
        .bearer_auth(&co.key)
        .header("Idempotency-Key", "trickle-1")
        .json(&serde_json::json!({"documentCategory": "identite", "document": support::b64(&support::png(64, 1))}))
        .send()
        .await
        .unwrap();
    let status = r.status();
    assert!(status.is_success(), "{status}: {}", r.text().await.unwrap_or_default());
}

/// Behind an https public URL every answer tells browsers to come back over https only; a service
/// reached over plain http (a laptop, a test) says nothing a browser would remember wrongly.
#[tokio::test]
async fn strict_transport_security_is_sent_when_the_public_url_is_https() {
    let plain = Service::start(&[]).await;
    let r = plain.http.get(plain.url("/healthz")).send().await.unwrap();
    assert!(r.headers().get("strict-transport-security").is_none());
    drop(plain);

    let tls = Service::start(&[("SCEAU_PUBLIC_URL", "https://sceau.example.com")]).await;
    for path in ["/healthz", "/portal/login", "/api/v1/batches"] {
        let r = tls.http.get(tls.url(path)).send().await.unwrap();
        assert_eq!(
            r.headers().get("strict-transport-security").and_then(|v| v.to_str().ok()),
            Some("max-age=63072000"),
            "{path}"
        );
    }
}
