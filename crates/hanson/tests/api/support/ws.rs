//! A WebSocket client for `GET /v1/ws`: tokio-tungstenite over a plain `TcpStream`. Every text
//! message it receives is checked against the AsyncAPI document (`contract::asyncapi`) as the
//! message named by its `type` (pings included), whatever the test then does with it.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::time::{timeout, timeout_at, Instant};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::sse::EVENT_WAIT;
use crate::contract::asyncapi::{self, Stream};

/// An open WebSocket to a server.
pub(crate) struct Ws {
    stream: WebSocketStream<TcpStream>,
}

/// What came off the socket: a text message (checked, as JSON), or anything else.
enum Received {
    Text(Value),
    Other(Option<Result<Message, tokio_tungstenite::tungstenite::Error>>),
}

impl Ws {
    /// The next frame within `deadline` (`None`: none came), skipping WebSocket pings and pongs.
    async fn receive(&mut self, deadline: Instant) -> Option<Received> {
        loop {
            match timeout_at(deadline, self.stream.next()).await {
                Err(_) => return None,
                Ok(Some(Ok(Message::Text(text)))) => {
                    let message: Value = serde_json::from_str(text.as_str()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text.as_str()));
                    let name = message["type"].as_str().unwrap_or_else(|| panic!("a WebSocket message without a type: {message}"));
                    asyncapi::get().check(Stream::WebSocket, name, &message);
                    return Some(Received::Text(message));
                }
                Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
                Ok(other) => return Some(Received::Other(other)),
            }
        }
    }
}

fn is_ping(message: &Value) -> bool {
    *message == json!({ "type": "ping" })
}

/// Opens `GET /v1/ws` on `base` (`http://host:port`).
pub(crate) async fn ws_connect(base: &str) -> Ws {
    asyncapi::load(base).await;
    let address = base.strip_prefix("http://").expect("an http:// base");
    let tcp = TcpStream::connect(address).await.expect("connect");
    let (stream, response) = timeout(EVENT_WAIT, tokio_tungstenite::client_async(format!("ws://{address}/v1/ws"), tcp))
        .await
        .expect("handshake within 10 s")
        .unwrap_or_else(|e| panic!("WebSocket handshake with {base}: {e:?}"));
    assert_eq!(response.status().as_u16(), 101);
    Ws { stream }
}

/// The status with which `base` refuses a WebSocket handshake (it must refuse it).
pub(crate) async fn ws_refused(base: &str) -> u16 {
    let address = base.strip_prefix("http://").expect("an http:// base");
    let tcp = TcpStream::connect(address).await.unwrap();
    match tokio_tungstenite::client_async(format!("ws://{address}/v1/ws"), tcp).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        other => panic!("a WebSocket handshake that should be refused: {:?}", other.map(|(_, r)| r.status())),
    }
}

pub(crate) async fn ws_send(ws: &mut Ws, message: impl ToString) {
    ws.stream.send(Message::text(message.to_string())).await.expect("send");
}

pub(crate) async fn ws_send_binary(ws: &mut Ws, bytes: Vec<u8>) {
    ws.stream.send(Message::binary(bytes)).await.expect("send");
}

/// Closes the connection from this end.
pub(crate) async fn ws_close(ws: &mut Ws) {
    ws.stream.close(None).await.unwrap();
}

/// The next text message, pings included.
pub(crate) async fn ws_next_raw(ws: &mut Ws, within: Duration) -> Value {
    match ws.receive(Instant::now() + within).await {
        None => panic!("no WebSocket message within {within:?}"),
        Some(Received::Text(message)) => message,
        Some(Received::Other(other)) => panic!("expected a text message, got {other:?}"),
    }
}

/// The next text message that is not `{"type":"ping"}`.
pub(crate) async fn ws_next(ws: &mut Ws) -> Value {
    loop {
        let message = ws_next_raw(ws, EVENT_WAIT).await;
        if !is_ping(&message) {
            return message;
        }
    }
}

/// No message but pings for `quiet`.
pub(crate) async fn ws_quiet(ws: &mut Ws, quiet: Duration) {
    let deadline = Instant::now() + quiet;
    loop {
        match ws.receive(deadline).await {
            None => return,
            Some(Received::Text(message)) if is_ping(&message) => continue,
            Some(Received::Text(message)) => panic!("expected silence, got {message}"),
            Some(Received::Other(other)) => panic!("expected silence, got {other:?}"),
        }
    }
}

/// The server's close frame within `within`, pings aside.
pub(crate) async fn ws_expect_close(ws: &mut Ws, within: Duration) -> Option<CloseFrame> {
    let deadline = Instant::now() + within;
    loop {
        match ws.receive(deadline).await {
            None => panic!("the WebSocket is not closed within {within:?}"),
            Some(Received::Text(message)) if is_ping(&message) => continue,
            Some(Received::Other(Some(Ok(Message::Close(frame))))) => return frame,
            Some(Received::Text(message)) => panic!("expected a close frame, got {message}"),
            Some(Received::Other(other)) => panic!("expected a close frame, got {other:?}"),
        }
    }
}

/// Subscribes to a market: the ack, then exactly `then` (its snapshot, or its replay).
pub(crate) async fn ws_subscribe(ws: &mut Ws, request: Value, then: &[Value]) {
    ws_send(ws, &request).await;
    assert_eq!(ws_next(ws).await, json!({ "type": "subscribed", "market_id": request["market_id"] }), "{request}");
    for expected in then {
        assert_eq!(&ws_next(ws).await, expected, "{request}");
    }
}

/// A bad message is answered `{"type":"error","code":code,"detail":...}`.
pub(crate) async fn ws_expect_error(ws: &mut Ws, message: impl ToString, code: &str) {
    let message = message.to_string();
    ws_send(ws, &message).await;
    let answer = ws_next(ws).await;
    assert_eq!(answer["type"], "error", "{message} -> {answer}");
    assert_eq!(answer["code"], code, "{message} -> {answer}");
    assert!(answer["detail"].as_str().is_some_and(|d| !d.is_empty()), "{message} -> {answer}");
}
