//! What every request carries besides its body: its id, the client it comes from, and the
//! limits on its size.

use std::net::IpAddr;

use axum::http::{HeaderName, HeaderValue};

/// Bodies up to 65,536 bytes are accepted; one more byte is a 413.
pub const MAX_BODY_BYTES: usize = 65_536;
/// Largest request head (request line and headers) `hanson serve` reads; a larger one is 431
/// (or 414 when the request target alone is over hyper's 65,534 bytes).
pub const MAX_HEAD_BYTES: usize = 131_072;

pub(crate) static REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The request id `middleware::request_id` settled on: echoed from the client or made.
#[derive(Clone)]
pub(crate) struct RequestId(pub(crate) HeaderValue);

/// The client a request comes from (see `middleware::client_ip`), for handlers that count
/// per client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientIp(pub(crate) IpAddr);
