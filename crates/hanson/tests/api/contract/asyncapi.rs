//! The event contract: every event the shared clients receive (each SSE frame that is not a
//! comment, each WebSocket text message) and every webhook body the test receiver gets is
//! validated against the message schemas of the AsyncAPI 3.0 document the server publishes at
//! `/v1/asyncapi.json`. A mismatch fails the test with the event and the schema's errors.
//!
//! Which messages a stream may carry is read from the document, not listed here: the
//! `receive` operations name their channel (`$ref` to `#/channels/...`) and their messages
//! (`$ref`s through the channel's messages to `#/components/messages/...`); the channel's
//! `address` tells which stream it is. An event is matched by the messages' `name`: the SSE
//! `event:` line (`snapshot`, `trade.created`, ...), or a WebSocket message's `type` (`ping`,
//! `error` and the acknowledgements included). It must validate against one of that stream's
//! messages of that name (the WebSocket has two `snapshot`s and two `trade.created`s); a name
//! the stream's operation does not list is a failure too. SSE comments (`: ping`) are not
//! events.
//!
//! Payload schemas are `$ref`s into `#/components/schemas`; each is compiled under a root that
//! holds the document's `components`, so they resolve within the document. The document's
//! schemas are AsyncAPI schemas (JSON Schema draft 07 and more); they are compiled as draft
//! 2020-12 as the OpenAPI ones are, for its `format` assertions (`uuid`, `date-time`): the
//! document uses no keyword whose meaning differs between the two (no `$ref` beside other
//! constraints, no `items` arrays, no `dependencies`).
//!
//! Webhooks are not a channel of the AsyncAPI document; the OpenAPI document's `webhooks`
//! describe them (envelope only), pointing to this one for the events. A webhook body is held
//! against both: its OpenAPI `webhooks` entry, and every stream message of its `type`
//! (market or user stream); it fails if it matches neither document's entry for the type, or
//! if neither document has one.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::OnceCell;

/// A stream of the AsyncAPI document, by its channel's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stream {
    /// `GET /v1/markets/{market_id}/events` (SSE).
    Market,
    /// `GET /v1/auth/events` (SSE).
    User,
    /// `GET /v1/ws`, what the server sends.
    WebSocket,
    /// `GET /v1/markets/{market_id}/ticker` (SSE).
    Ticker,
}

impl Stream {
    fn address(self) -> &'static str {
        match self {
            Stream::Market => "/v1/markets/{market_id}/events",
            Stream::User => "/v1/auth/events",
            Stream::WebSocket => "/v1/ws",
            Stream::Ticker => "/v1/markets/{market_id}/ticker",
        }
    }
}

/// One message of the document: its `#/components/messages` key and its compiled payload.
struct Message {
    key: String,
    validator: Arc<jsonschema::Validator>,
}

/// The compiled document: for each stream, its messages by name.
pub(crate) struct AsyncApi {
    streams: BTreeMap<Stream, BTreeMap<String, Vec<Message>>>,
}

static DOCUMENT: OnceCell<AsyncApi> = OnceCell::const_new();

/// Fetches and compiles the document from the server at `base`, the first time only.
pub(crate) async fn load(base: &str) -> &'static AsyncApi {
    DOCUMENT.get_or_init(|| async { AsyncApi::compile(&super::fetch(base, "/v1/asyncapi.json").await) }).await
}

/// The compiled document; the support code loads it whenever it starts a server.
pub(crate) fn get() -> &'static AsyncApi {
    DOCUMENT.get().expect("the AsyncAPI document is not loaded: start servers through the support code, or call contract::load")
}

/// The compiled document, if a server has been started.
pub(crate) fn try_get() -> Option<&'static AsyncApi> {
    DOCUMENT.get()
}

/// Follows `$ref`s (local JSON pointers) until a value that is none.
fn resolve<'a>(document: &'a Value, mut value: &'a Value) -> &'a Value {
    while let Some(reference) = value.get("$ref").and_then(Value::as_str) {
        let pointer = reference.strip_prefix('#').unwrap_or_else(|| panic!("non-local $ref {reference} in the AsyncAPI document"));
        value = document.pointer(pointer).unwrap_or_else(|| panic!("unresolved $ref {reference} in the AsyncAPI document"));
    }
    value
}

impl AsyncApi {
    fn compile(document: &Value) -> AsyncApi {
        assert!(document["asyncapi"].as_str().is_some_and(|v| v.starts_with("3.")), "not an AsyncAPI 3 document: {}", document["asyncapi"]);
        let operations = document["operations"].as_object().expect("the AsyncAPI document has operations");
        let mut compiled: BTreeMap<String, Arc<jsonschema::Validator>> = BTreeMap::new();
        let mut streams: BTreeMap<Stream, BTreeMap<String, Vec<Message>>> = BTreeMap::new();
        for (name, operation) in operations {
            if operation["action"] != "receive" {
                continue;
            }
            let channel = resolve(document, &operation["channel"]);
            let address = channel["address"].as_str().unwrap_or_else(|| panic!("operation {name}: its channel has no address"));
            let Some(stream) =
                [Stream::Market, Stream::User, Stream::WebSocket, Stream::Ticker].into_iter().find(|s| s.address() == address)
            else {
                panic!("operation {name} receives on {address}, a channel these tests do not know");
            };
            let references = operation["messages"].as_array().unwrap_or_else(|| panic!("operation {name} lists no messages"));
            for reference in references {
                // The last `$ref` of the chain names the component message.
                let mut key = None;
                let mut message = reference;
                while let Some(r) = message.get("$ref").and_then(Value::as_str) {
                    if let Some(k) = r.strip_prefix("#/components/messages/") {
                        key = Some(k.to_string());
                    }
                    message = document
                        .pointer(r.strip_prefix('#').unwrap_or(r))
                        .unwrap_or_else(|| panic!("unresolved $ref {r} in the AsyncAPI document"));
                }
                let key = key.unwrap_or_else(|| panic!("operation {name}: message {reference} is not a component message"));
                let message_name = message["name"].as_str().unwrap_or_else(|| panic!("message {key} has no name"));
                let payload = message.get("payload").unwrap_or_else(|| panic!("message {key} has no payload"));
                let validator = compiled
                    .entry(key.clone())
                    .or_insert_with(|| Arc::new(super::compile(document, payload, &format!("AsyncAPI message {key}"))))
                    .clone();
                streams.entry(stream).or_default().entry(message_name.to_string()).or_default().push(Message { key, validator });
            }
        }
        for stream in [Stream::Market, Stream::User, Stream::WebSocket, Stream::Ticker] {
            assert!(streams.contains_key(&stream), "the AsyncAPI document has no receive operation on {}", stream.address());
        }
        AsyncApi { streams }
    }

    /// The errors of `payload` as a `name` message of `stream`: empty when it matches one of
    /// the stream's messages of that name, else each candidate's errors (or that there is none).
    fn errors(&self, stream: Stream, name: &str, payload: &Value) -> Vec<String> {
        let Some(candidates) = self.streams[&stream].get(name) else {
            let known: Vec<&String> = self.streams[&stream].keys().collect();
            return vec![format!("    the document has no {name:?} message on {} (it has {known:?})", stream.address())];
        };
        let mut errors = Vec::new();
        for message in candidates {
            let found = super::errors(&message.validator, payload);
            if found.is_empty() {
                return Vec::new();
            }
            errors.push(format!("  against message {}:", message.key));
            errors.extend(found);
        }
        errors
    }

    /// Panics unless `payload` is a valid `name` message of `stream`.
    pub(crate) fn check(&self, stream: Stream, name: &str, payload: &Value) {
        let errors = self.errors(stream, name, payload);
        assert!(
            errors.is_empty(),
            "event does not match the AsyncAPI document: a {name:?} message on {}\n{}\n  event: {payload}",
            stream.address(),
            errors.join("\n")
        );
    }

    /// Why a webhook body does not match (see the module's documentation), or `Ok`.
    pub(crate) fn webhook_errors(&self, body: &Value) -> Result<(), String> {
        let Some(kind) = body["type"].as_str() else {
            return Err(format!("a webhook body without a type: {body}"));
        };
        let mut report = Vec::new();
        let streams = [Stream::Market, Stream::User];
        let in_asyncapi = streams.iter().any(|s| self.streams[s].contains_key(kind));
        if in_asyncapi {
            let mut stream_errors = Vec::new();
            let matched = streams.iter().filter(|s| self.streams[s].contains_key(kind)).any(|s| {
                let errors = self.errors(*s, kind, body);
                stream_errors.extend(errors.iter().cloned());
                errors.is_empty()
            });
            if !matched {
                report.push(format!("  against the AsyncAPI messages named {kind:?}:\n{}", stream_errors.join("\n")));
            }
        }
        match super::openapi::webhook_errors(kind, body) {
            Some(errors) if !errors.is_empty() => report.push(format!("  against the OpenAPI webhook {kind:?}:\n{}", errors.join("\n"))),
            Some(_) => {}
            None if in_asyncapi => {}
            None => report.push(format!("  neither the AsyncAPI nor the OpenAPI document has a {kind:?} event")),
        }
        if report.is_empty() {
            Ok(())
        } else {
            Err(format!("webhook body does not match the documents:\n{}\n  body: {body}", report.join("\n")))
        }
    }
}
