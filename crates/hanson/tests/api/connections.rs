//! Connection limits of `hanson serve` over raw TCP: slow and idle clients are timed out,
//! open connections are capped, and neither starves anyone else.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::time::{timeout, Instant};

use super::support::library::{self, ConnectionLimits, MAX_HEAD_BYTES};
use super::support::*;

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
const HALF_REQUEST: &[u8] = b"POST /v1/markets/search HTTP/1.1\r\nHost: x\r\n";

/// A server on a random port with these limits; it lives as long as the test's runtime.
async fn spawn(settings: Settings, limits: ConnectionLimits) -> (SocketAddr, TestDatabase) {
    let db = TestDatabase::create();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().unwrap();
    library::serve(listener, &db.url, settings, limits, std::future::pending());
    contract::load(&format!("http://{address}")).await;
    (address, db)
}

fn limits(header_secs: u64, body_secs: u64, idle_secs: u64, max_connections: usize) -> ConnectionLimits {
    ConnectionLimits {
        header_read_timeout: Duration::from_secs(header_secs),
        body_read_timeout: Duration::from_secs(body_secs),
        idle_timeout: Duration::from_secs(idle_secs),
        max_connections,
        ..ConnectionLimits::default()
    }
}

/// Raises this process's soft open-file limit towards `wanted` (both ends of every test
/// connection live in this process) and returns the limit in force.
fn raise_open_file_limit(wanted: libc::rlim_t) -> libc::rlim_t {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted.min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        }
    }
    limit.rlim_cur
}

/// Reads one response with a Content-Length body, leaving the connection open.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().expect("content-length"));
            if buffer.len() >= end + 4 + length {
                return String::from_utf8_lossy(&buffer[..end + 4 + length]).into_owned();
            }
        }
        let n = stream.read(&mut chunk).await.expect("read a response");
        assert!(n > 0, "connection closed mid-response after {:?}", String::from_utf8_lossy(&buffer));
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// Sends GET /healthz on `stream` and returns the whole response.
async fn healthz_on(stream: &mut TcpStream) -> String {
    stream.write_all(HEALTHZ).await.expect("send");
    read_response(stream).await
}

/// GET /healthz over a fresh connection, answered within a generous bound.
async fn healthz(address: SocketAddr) -> String {
    timeout(Duration::from_secs(5), async {
        let mut stream = TcpStream::connect(address).await.expect("connect");
        healthz_on(&mut stream).await
    })
    .await
    .expect("/healthz answers within 5 s")
}

/// Waits until the server closes `stream` (end of file or a reset), returning what it sent first.
async fn closed_by_server(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return received,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_do_not_starve_healthz_and_are_closed_after_the_header_timeout() {
    let header_timeout = Duration::from_secs(2);
    let (address, _db) = spawn(Settings::default(), limits(header_timeout.as_secs(), 30, 60, 10_000)).await;
    let available = raise_open_file_limit(4096);
    let count = 1000.min((available.saturating_sub(256) / 2) as usize);
    assert!(count >= 200, "open-file limit {available} is too low for this test");

    let mut half_sent = Vec::with_capacity(count);
    for _ in 0..count {
        let mut stream = TcpStream::connect(address).await.expect("connect");
        stream.write_all(HALF_REQUEST).await.expect("send half a request");
        half_sent.push((Instant::now(), stream));
    }

    let response = healthz(address).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");

    let mut closing = tokio::task::JoinSet::new();
    for (opened, mut stream) in half_sent {
        closing.spawn(async move {
            let sent = timeout(header_timeout + Duration::from_secs(5), closed_by_server(&mut stream))
                .await
                .expect("a half-sent request is closed within the header timeout and 5 s");
            (opened.elapsed(), sent)
        });
    }
    while let Some(closed) = closing.join_next().await {
        let (after, sent) = closed.unwrap();
        assert!(after >= header_timeout - Duration::from_millis(100), "closed after {after:?}, before the header timeout");
        assert!(sent.is_empty(), "answered a half-sent request: {}", String::from_utf8_lossy(&sent));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_connections_wait_for_the_idle_timeout_not_the_header_timeout() {
    let (address, _db) = spawn(Settings::default(), limits(1, 30, 3, 10_000)).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    let first = healthz_on(&mut stream).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");

    // Longer than the header timeout, shorter than the idle timeout: still open.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let second = timeout(Duration::from_secs(5), healthz_on(&mut stream)).await.expect("answered");
    assert!(second.starts_with("HTTP/1.1 200"), "{second}");

    let idle_since = Instant::now();
    let sent = timeout(Duration::from_secs(8), closed_by_server(&mut stream)).await.expect("closed when idle");
    assert!(sent.is_empty());
    let idle = idle_since.elapsed();
    assert!(idle >= Duration::from_millis(2900), "an idle connection closed after {idle:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_request_on_a_keep_alive_connection_has_the_header_timeout_from_its_first_byte() {
    let (address, _db) = spawn(Settings::default(), limits(1, 30, 30, 10_000)).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    assert!(healthz_on(&mut stream).await.starts_with("HTTP/1.1 200"));
    stream.write_all(HALF_REQUEST).await.unwrap();
    let started = Instant::now();
    let sent = timeout(Duration::from_secs(6), closed_by_server(&mut stream)).await.expect("closed");
    assert!(sent.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(900), "closed after {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_not_received_in_time_gets_408_and_the_connection_closes() {
    let (address, _db) = spawn(Settings::default(), limits(10, 1, 60, 10_000)).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            b"POST /v1/markets/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Content-Length: 100\r\n\r\n{\"filters\":",
        )
        .await
        .unwrap();
    let started = Instant::now();
    let response = timeout(Duration::from_secs(6), read_response(&mut stream)).await.expect("answered");
    assert!(started.elapsed() >= Duration::from_millis(900), "408 after {:?}", started.elapsed());
    let lower = response.to_ascii_lowercase();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(lower.contains("content-type: application/problem+json"), "{response}");
    assert!(lower.contains("connection: close"), "{response}");
    assert!(lower.contains("x-request-id:"), "{response}");
    let body: serde_json::Value = serde_json::from_str(response.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["code"], "request_timeout");
    assert_eq!(body["status"], 408);
    timeout(Duration::from_secs(5), closed_by_server(&mut stream)).await.expect("closed after the 408");
}

/// The status, content type and JSON body of a whole response.
fn parsed(response: &[u8]) -> (u16, String, serde_json::Value) {
    let text = String::from_utf8_lossy(response);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head in {text:?}"));
    let status = head[9..12].parse().unwrap_or_else(|_| panic!("no status in {head}"));
    let lower = head.to_ascii_lowercase();
    let content_type = lower.lines().find_map(|l| l.strip_prefix("content-type:")).map(|v| v.trim().to_string());
    assert!(lower.contains("\r\nx-request-id: "), "{head}");
    let length: usize = lower.lines().find_map(|l| l.strip_prefix("content-length:")).map_or(0, |v| v.trim().parse().unwrap());
    assert_eq!(length, body.len(), "{text}");
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, content_type.unwrap_or_default(), body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_hyper_cannot_parse_get_problem_json_and_the_connection_closes() {
    let (address, _db) = spawn(Settings::default(), limits(10, 30, 60, 10_000)).await;
    let many_headers: String = (0..101).map(|i| format!("X-{i}: a\r\n")).collect();
    let huge_header = format!("X: {}\r\n", "a".repeat(MAX_HEAD_BYTES));
    let long_target = format!("/{}", "a".repeat(65_535));
    let cases = [
        (format!("GET {long_target} HTTP/1.1\r\nHost: x\r\n\r\n"), 414, "uri_too_long"),
        (format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{many_headers}\r\n"), 431, "headers_too_large"),
        (format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{huge_header}\r\n"), 431, "headers_too_large"),
        ("GET /healthz HTTP/1.1\r\nHo st: x\r\n\r\n".to_string(), 400, "malformed_request"),
    ];
    for (request, status, code) in cases {
        for keep_alive_first in [false, true] {
            let mut stream = TcpStream::connect(address).await.unwrap();
            if keep_alive_first {
                assert!(healthz_on(&mut stream).await.starts_with("HTTP/1.1 200"));
            }
            // The server may answer and close before it has read all of a huge request.
            let _ = stream.write_all(request.as_bytes()).await;
            let sent = timeout(Duration::from_secs(5), closed_by_server(&mut stream)).await.expect("answered and closed");
            let (got, content_type, body) = parsed(&sent);
            assert_eq!((got, body["code"].as_str()), (status, Some(code)), "{body}");
            assert_eq!(content_type, "application/problem+json");
            assert_eq!(body["status"], status);
            // As documented for every operation (`/healthz` stands for any of them).
            let status = reqwest::StatusCode::from_u16(status).unwrap();
            contract::openapi::check(&reqwest::Method::GET, "/healthz", status, Some(&content_type), &body).expect("documented");
        }
    }
    // At the limits, nothing changes: 100 headers, a head of MAX_HEAD_BYTES.
    let hundred = (0..98).map(|i| format!("X-{i}: a\r\n")).collect::<String>();
    let at_limit = format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{hundred}X: \r\n\r\n");
    let at_limit = at_limit.replace("X: \r\n", &format!("X: {}\r\n", "a".repeat(MAX_HEAD_BYTES - at_limit.len())));
    assert_eq!(at_limit.len(), MAX_HEAD_BYTES);
    let response = timeout(Duration::from_secs(5), async {
        let mut stream = TcpStream::connect(address).await.unwrap();
        stream.write_all(at_limit.as_bytes()).await.unwrap();
        read_response(&mut stream).await
    })
    .await
    .expect("answered");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_connections_is_enforced_and_waiting_clients_are_served_when_others_close() {
    let (address, _db) = spawn(Settings::default(), limits(30, 30, 30, 50)).await;

    let mut served = Vec::new();
    for _ in 0..50 {
        let mut stream = TcpStream::connect(address).await.unwrap();
        let response = timeout(Duration::from_secs(5), healthz_on(&mut stream)).await.expect("answered");
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        served.push(stream);
    }

    // Ten more, each with a whole request sent: none is answered while 50 are open.
    let mut waiting = Vec::new();
    for _ in 0..10 {
        let mut stream = TcpStream::connect(address).await.unwrap();
        stream.write_all(HEALTHZ).await.unwrap();
        waiting.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    for stream in &mut waiting {
        let mut byte = [0u8; 1];
        assert!(
            timeout(Duration::from_millis(10), stream.read(&mut byte)).await.is_err(),
            "a connection beyond --max-connections got an answer"
        );
    }

    // Once ten of the first close, the waiting ten are served.
    served.truncate(40);
    for stream in &mut waiting {
        let response = timeout(Duration::from_secs(5), read_response(stream)).await.expect("served once a slot frees");
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    // The first forty are still served too.
    let response = timeout(Duration::from_secs(5), healthz_on(&mut served[0])).await.expect("answered");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limiter_still_sees_each_peer_address() {
    let one_request = Rule { per_second: 0.001, burst: 1.0 };
    let settings = Settings::from(Limits { general_per_ip: one_request, ..Limits::default() });
    let (address, _db) = spawn(settings, ConnectionLimits::default()).await;
    let from = |ip: &str| {
        let ip = ip.parse().unwrap();
        async move {
            let socket = TcpSocket::new_v4().unwrap();
            socket.bind(SocketAddr::new(ip, 0)).unwrap();
            let mut stream = socket.connect(address).await.unwrap();
            healthz_on(&mut stream).await
        }
    };
    assert!(from("127.0.0.1").await.starts_with("HTTP/1.1 200"));
    assert!(from("127.0.0.1").await.starts_with("HTTP/1.1 429"));
    assert!(from("127.0.0.2").await.starts_with("HTTP/1.1 200"), "another address has its own bucket");
}

/// A server with these limits that shuts down when the sender is used or dropped, and a
/// connection holding a request in flight (its headers are in, its body never completes).
struct Stoppable {
    address: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), String>>,
    busy: TcpStream,
    _db: TestDatabase,
}

async fn stoppable_with_a_request_in_flight(limits: ConnectionLimits) -> Stoppable {
    let db = TestDatabase::create();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async {
        let _ = stopped.await;
    };
    let server = library::serve(listener, &db.url, Settings::default(), limits, shutdown);
    let mut busy = TcpStream::connect(address).await.unwrap();
    busy.write_all(b"POST /v1/markets/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        .await
        .unwrap();
    Stoppable { address, stop, server, busy, _db: db }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_accepting_closes_idle_connections_and_finishes_requests_in_flight() {
    let Stoppable { address, stop, server, mut busy, _db } = stoppable_with_a_request_in_flight(limits(10, 2, 60, 100)).await;
    let mut idle = TcpStream::connect(address).await.unwrap();
    assert!(healthz_on(&mut idle).await.starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.send(()).unwrap();

    timeout(Duration::from_secs(2), closed_by_server(&mut idle)).await.expect("the idle connection is closed at once");
    let refused = timeout(Duration::from_secs(2), async {
        while TcpStream::connect(address).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    refused.await.expect("no new connections once shutting down");
    let response = timeout(Duration::from_secs(5), read_response(&mut busy)).await.expect("the request in flight is answered");
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    timeout(Duration::from_secs(5), server).await.expect("the server stops").unwrap().expect("stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_waits_for_a_request_in_flight_no_longer_than_its_grace() {
    // The body timeout (60 s) would hold the request far longer than the grace (1 s).
    let limits = ConnectionLimits { shutdown_grace: Duration::from_secs(1), ..limits(10, 60, 60, 100) };
    // `_busy` keeps the connection, and so its request, open.
    let Stoppable { stop, server, busy: _busy, _db, .. } = stoppable_with_a_request_in_flight(limits).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    stop.send(()).unwrap();
    timeout(Duration::from_secs(10), server).await.expect("the server stops after its grace").unwrap().expect("stops cleanly");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(950), "it waited for the request in flight: {waited:?}");
}
