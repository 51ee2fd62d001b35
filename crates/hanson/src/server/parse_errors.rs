//! hyper's own answers, as problem+json. A request hyper cannot parse never reaches the
//! router: hyper answers it itself, with an empty body, and closes the connection: 400 for a
//! malformed request line or header, 414 for a request target over 65,534 bytes, 431 for more
//! than 100 headers or a head over [`crate::api::MAX_HEAD_BYTES`]. hyper has no hook for that
//! answer, and its URI limit is a constant, so no check of ours in front of it could catch
//! every case; instead the connection's socket ([`super::Watched`]) recognises that answer as
//! hyper writes it and sends our problem+json in its place.
//!
//! The answer is recognised by its exact shape: a status line with one of those three
//! statuses, then only the headers hyper gives it (`connection: close`, `content-length: 0`,
//! `date`) and nothing after the blank line, all in one write. Every response of ours carries
//! `content-type` and `x-request-id`, so none can be taken for it.

use crate::error::Error;

/// hyper's answer is about 110 bytes; a longer write is never one (and costs no more to rule out).
const LONGEST_ANSWER: usize = 256;

/// The problem+json response to send in place of hyper's answer `head`, if it is one.
pub(crate) fn replacement(head: &[u8]) -> Option<Vec<u8>> {
    if head.len() > LONGEST_ANSWER || !head.starts_with(b"HTTP/1.") {
        return None;
    }
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.strip_prefix("HTTP/1.1 ").or_else(|| text.strip_prefix("HTTP/1.0 "))?;
    let (status_line, headers) = rest.split_once("\r\n")?;
    let error = match status_line.get(..4)? {
        "400 " => Error::MalformedRequest,
        "414 " => Error::UriTooLong,
        "431 " => Error::HeadersTooLarge,
        _ => return None,
    };
    let mut date = None;
    for line in headers.strip_suffix("\r\n\r\n")?.split("\r\n") {
        match line {
            "connection: close" | "content-length: 0" => {}
            _ if line.starts_with("date: ") && date.is_none() => date = Some(line),
            _ => return None,
        }
    }
    let body = serde_json::to_vec(&error.problem()).ok()?;
    let mut response = format!(
        "HTTP/1.1 {status_line}\r\ncontent-type: {}\r\ncontent-length: {}\r\nx-request-id: {}\r\nconnection: close\r\n",
        crate::api::problem::PROBLEM_JSON,
        body.len(),
        uuid::Uuid::new_v4(),
    );
    if let Some(date) = date {
        response.push_str(date);
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    tracing::debug!(status = %&status_line[..3], "answered a request hyper could not parse");
    let mut response = response.into_bytes();
    response.extend_from_slice(&body);
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(response: &[u8]) -> (String, serde_json::Value) {
        let at = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        (String::from_utf8(response[..at].to_vec()).unwrap(), serde_json::from_slice(&response[at..]).unwrap())
    }

    #[test]
    fn hypers_answers_become_problems() {
        for (status, code) in [
            ("400 Bad Request", "malformed_request"),
            ("414 URI Too Long", "uri_too_long"),
            ("431 Request Header Fields Too Large", "headers_too_large"),
        ] {
            let hyper =
                format!("HTTP/1.1 {status}\r\nconnection: close\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 15:58:34 GMT\r\n\r\n");
            let (head, body) = split(&replacement(hyper.as_bytes()).unwrap());
            assert!(head.starts_with(&format!("HTTP/1.1 {status}\r\n")), "{head}");
            assert!(head.contains("content-type: application/problem+json\r\n"), "{head}");
            assert!(head.contains("x-request-id: "), "{head}");
            assert!(head.contains("date: Mon, 23 Nov 2026 15:58:34 GMT\r\n"), "{head}");
            assert_eq!(body["code"], code);
            assert_eq!(body["status"].as_u64(), status[..3].parse().ok());
            let length: usize = head.split("content-length: ").nth(1).unwrap().split("\r\n").next().unwrap().parse().unwrap();
            assert_eq!(length, serde_json::to_vec(&body).unwrap().len());
        }
    }

    #[test]
    fn other_writes_are_left_alone() {
        for write in [
            // Our own responses carry more headers, or a body.
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\nx-request-id: 1\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n{}",
            "HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\n",
            "{\"status\":\"ok\"}",
            "",
        ] {
            assert!(replacement(write.as_bytes()).is_none(), "{write:?}");
        }
    }
}
