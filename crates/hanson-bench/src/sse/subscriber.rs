//! One subscriber: its connection, the chunked transfer encoding and the SSE frames read
//! off it, and what it counts.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{watch, OwnedSemaphorePermit};

use super::{Config, LagHistogram, Shared, SubStats};

/// The kinds of frame the bench tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    None,
    Snapshot,
    Trade,
    Other,
}

/// Chunked transfer decoding state.
pub(super) enum Chunked {
    /// Reading the hex size (and skipping any extension) up to the line end.
    Size {
        value: u64,
        in_extension: bool,
    },
    Data(u64),
    /// The CRLF after a chunk's data.
    DataEnd,
    /// The terminating zero-size chunk was seen.
    Done,
}

pub(super) struct Subscriber<'a> {
    pub(super) index: usize,
    pub(super) config: &'a Config,
    pub(super) shared: &'a Shared,
    pub(super) verify: bool,
    /// Held from the start until the snapshot arrives (limits parallel connects).
    pub(super) permit: Option<OwnedSemaphorePermit>,
    pub(super) chunked: Option<Chunked>,
    /// The unfinished line carried between reads.
    pub(super) line: Vec<u8>,
    pub(super) kind: Kind,
    pub(super) event_name: Vec<u8>,
    pub(super) id: Option<u64>,
    pub(super) bad_id: bool,
    pub(super) timestamp: Option<i64>,
    pub(super) data: Option<String>,
    pub(super) stats: SubStats,
}

impl<'a> Subscriber<'a> {
    pub(super) fn new(index: usize, config: &'a Config, shared: &'a Shared, verify: bool, permit: Option<OwnedSemaphorePermit>) -> Self {
        Subscriber {
            index,
            config,
            shared,
            verify,
            permit,
            chunked: None,
            line: Vec::new(),
            kind: Kind::None,
            event_name: Vec::new(),
            id: None,
            bad_id: false,
            timestamp: None,
            data: None,
            stats: SubStats::default(),
        }
    }

    pub(super) fn finish(self) -> SubStats {
        self.stats
    }

    /// Ok(()) when stopped by the bench; Err(reason) when the stream ended or failed.
    pub(super) async fn run(&mut self, mut stop: watch::Receiver<bool>) -> Result<(), String> {
        if *stop.borrow() {
            return Ok(());
        }
        let mut stream = tokio::select! {
            biased;
            _ = stop.changed() => return Ok(()),
            r = TcpStream::connect(&self.config.addr) => r.map_err(|e| format!("connect: {:?}", e.kind()))?,
        };
        let _ = stream.set_nodelay(true);
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n",
            self.config.path, self.config.host
        );
        stream.write_all(request.as_bytes()).await.map_err(|e| format!("write: {:?}", e.kind()))?;
        let mut buf = vec![0u8; self.config.read_buffer.max(512)];

        // The response head.
        let mut head: Vec<u8> = Vec::new();
        let body_start = loop {
            let n = tokio::select! {
                biased;
                _ = stop.changed() => return Ok(()),
                r = stream.read(&mut buf) => r.map_err(|e| format!("read: {:?}", e.kind()))?,
            };
            if n == 0 {
                return Err("closed before the response head".into());
            }
            head.extend_from_slice(&buf[..n]);
            if let Some(pos) = memchr::memmem::find(&head, b"\r\n\r\n") {
                break pos + 4;
            }
            if head.len() > 64 * 1024 {
                return Err("response head over 64 KiB".into());
            }
        };
        let head_text = String::from_utf8_lossy(&head[..body_start]).to_string();
        let mut lines = head_text.split("\r\n");
        let status: u16 =
            lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).ok_or_else(|| "bad status line".to_string())?;
        let mut chunked = false;
        let mut content_length: Option<usize> = None;
        for l in lines {
            if let Some((name, value)) = l.split_once(':') {
                let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_ascii_lowercase());
                if name == "transfer-encoding" && value.contains("chunked") {
                    chunked = true;
                } else if name == "content-length" {
                    content_length = value.parse().ok();
                }
            }
        }
        let mut rest = head.split_off(body_start);
        drop(head);
        if status != 200 {
            // Read a small problem+json body for its code (best effort, briefly).
            let want = content_length.unwrap_or(0).min(16 * 1024);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
            while rest.len() < want {
                match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => rest.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            let code = serde_json::from_slice::<Value>(&rest).ok().and_then(|v| v["code"].as_str().map(str::to_string));
            return Err(match code {
                Some(code) => format!("HTTP {status} {code}"),
                None => format!("HTTP {status}"),
            });
        }
        if chunked {
            self.chunked = Some(Chunked::Size { value: 0, in_extension: false });
        }
        if !rest.is_empty() {
            let now = hanson::domain::time::now_micros();
            if self.feed(&rest, now)? {
                return Err("stream ended by the server".into());
            }
        }
        drop(rest);
        loop {
            let n = tokio::select! {
                biased;
                _ = stop.changed() => return Ok(()),
                r = stream.read(&mut buf) => r.map_err(|e| format!("read: {:?}", e.kind()))?,
            };
            if n == 0 {
                return Err("stream closed by the server".into());
            }
            // One clock reading per read: every event in it arrived by now.
            let now = hanson::domain::time::now_micros();
            self.stats.bytes += n as u64;
            if self.feed(&buf[..n], now)? {
                return Err("stream ended by the server".into());
            }
        }
    }

    /// Feeds body bytes through the chunked decoder (if any) into the SSE parser. Ok(true)
    /// when the body ended (the last chunk).
    pub(super) fn feed(&mut self, mut input: &[u8], now: i64) -> Result<bool, String> {
        let Some(mut state) = self.chunked.take() else {
            self.sse(input, now);
            return Ok(false);
        };
        let result = loop {
            if input.is_empty() {
                break Ok(false);
            }
            match &mut state {
                Chunked::Size { value, in_extension } => {
                    let b = input[0];
                    input = &input[1..];
                    match b {
                        b'\n' => {
                            state = if *value == 0 { Chunked::Done } else { Chunked::Data(*value) };
                            if matches!(state, Chunked::Done) {
                                break Ok(true);
                            }
                        }
                        b'\r' => {}
                        _ if *in_extension => {}
                        b';' => *in_extension = true,
                        _ => {
                            let digit = (b as char).to_digit(16).ok_or_else(|| format!("bad chunk size byte {b:#x}"))?;
                            *value = value.checked_mul(16).and_then(|v| v.checked_add(u64::from(digit))).ok_or("chunk size overflow")?;
                        }
                    }
                }
                Chunked::Data(remaining) => {
                    let take = (*remaining).min(input.len() as u64) as usize;
                    let (data, tail) = input.split_at(take);
                    *remaining -= take as u64;
                    if *remaining == 0 {
                        state = Chunked::DataEnd;
                    }
                    input = tail;
                    self.sse(data, now);
                }
                Chunked::DataEnd => {
                    let b = input[0];
                    input = &input[1..];
                    match b {
                        b'\r' => {}
                        b'\n' => state = Chunked::Size { value: 0, in_extension: false },
                        _ => break Err(format!("bad byte {b:#x} after a chunk")),
                    }
                }
                Chunked::Done => break Ok(true),
            }
        };
        self.chunked = Some(state);
        result
    }

    /// Splits SSE bytes into lines (a line may span reads).
    pub(super) fn sse(&mut self, mut data: &[u8], now: i64) {
        while let Some(pos) = memchr::memchr(b'\n', data) {
            if self.line.is_empty() {
                self.on_line(&data[..pos], now);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&data[..pos]);
                self.on_line(&line, now);
                line.clear();
                self.line = line;
            }
            data = &data[pos + 1..];
        }
        if !data.is_empty() {
            self.line.extend_from_slice(data);
        }
        if self.line.is_empty() && self.line.capacity() > 64 * 1024 {
            self.line = Vec::new();
        }
    }

    pub(super) fn on_line(&mut self, line: &[u8], now: i64) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            self.dispatch(now);
            return;
        }
        if line[0] == b':' {
            self.stats.pings += 1;
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => {
                self.kind = match value {
                    b"snapshot" => Kind::Snapshot,
                    b"trade.created" => Kind::Trade,
                    _ => Kind::Other,
                };
                self.event_name.clear();
                self.event_name.extend_from_slice(value);
            }
            b"id" => match std::str::from_utf8(value).ok().and_then(|s| s.parse::<u64>().ok()) {
                Some(id) => self.id = Some(id),
                None => self.bad_id = true,
            },
            b"data" => {
                if self.kind != Kind::Snapshot {
                    self.timestamp = envelope_timestamp(value);
                }
                if self.verify {
                    let text = String::from_utf8_lossy(value);
                    match &mut self.data {
                        Some(d) => {
                            d.push('\n');
                            d.push_str(&text);
                        }
                        None => self.data = Some(text.into_owned()),
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn dispatch(&mut self, now: i64) {
        let kind = std::mem::replace(&mut self.kind, Kind::None);
        let id = self.id.take();
        let bad_id = std::mem::take(&mut self.bad_id);
        let timestamp = self.timestamp.take();
        let data = self.data.take();
        if kind == Kind::None {
            return; // an empty frame
        }
        if bad_id {
            self.stats.protocol_errors += 1;
            self.stats.problem(format!("subscriber {}: unreadable id line", self.index));
        }
        if kind == Kind::Snapshot {
            if self.stats.snapshot_seq.is_some() {
                self.stats.protocol_errors += 1;
                self.stats.problem(format!("subscriber {}: a second snapshot (id {id:?})", self.index));
                return;
            }
            let Some(seq) = id else {
                self.stats.protocol_errors += 1;
                self.stats.problem(format!("subscriber {}: snapshot without id", self.index));
                return;
            };
            if let Some(data) = &data {
                let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                if v["seq"].as_u64() != Some(seq) || v["market"]["id"].as_str() != Some(self.config.market_id.as_str()) {
                    self.stats.envelope_mismatches += 1;
                    self.stats.problem(format!("snapshot id {seq} but data seq {} / market {}", v["seq"], v["market"]["id"]));
                }
            }
            self.stats.snapshot_seq = Some(seq);
            self.permit = None;
            self.shared.snapshots.fetch_add(1, Ordering::SeqCst);
            return;
        }
        let Some(last) = self.stats.last_seq.or(self.stats.snapshot_seq) else {
            self.stats.protocol_errors += 1;
            self.stats.problem(format!("subscriber {}: an event before the snapshot", self.index));
            return;
        };
        match id {
            Some(seq) if seq == last + 1 => self.stats.last_seq = Some(seq),
            Some(seq) if seq > last + 1 => {
                self.stats.gaps += 1;
                self.stats.missing_seqs += seq - last - 1;
                self.stats.problem(format!("subscriber {}: seq {seq} after {last}", self.index));
                self.stats.last_seq = Some(seq);
            }
            Some(seq) => {
                self.stats.repeats += 1;
                self.stats.problem(format!("subscriber {}: seq {seq} after {last}", self.index));
            }
            None => {
                self.stats.protocol_errors += 1;
                self.stats.problem(format!("subscriber {}: market event without id", self.index));
            }
        }
        if let Some(data) = &data {
            self.verify_envelope(data, id, timestamp);
        }
        if kind == Kind::Trade {
            self.stats.trades += 1;
            self.shared.trades[self.index].store(self.stats.trades, Ordering::SeqCst);
            if self.config.lags {
                match timestamp {
                    // Commit to client, as an upper bound: the envelope's `timestamp` is the
                    // trade's time, taken inside the trade's transaction slightly before its
                    // commit becomes durable and the event is published; `now` is when the
                    // read holding the frame returned (same machine clock).
                    Some(ts) => {
                        let lag = now - ts;
                        if lag < 0 {
                            self.stats.negative_lags += 1;
                        }
                        self.stats.lags.get_or_insert_with(|| Box::new(LagHistogram::new())).record(lag.max(0) as u64);
                    }
                    None => self.stats.bad_timestamps += 1,
                }
            }
        } else {
            let name = String::from_utf8_lossy(&self.event_name).into_owned();
            *self.stats.other_events.entry(name).or_default() += 1;
        }
    }

    /// Verify mode: the full envelope must agree with what the fast path read.
    pub(super) fn verify_envelope(&mut self, data: &str, id: Option<u64>, timestamp: Option<i64>) {
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                self.stats.envelope_mismatches += 1;
                self.stats.problem(format!("envelope is not JSON: {e}"));
                return;
            }
        };
        let name = String::from_utf8_lossy(&self.event_name).into_owned();
        let full_ts = v["timestamp"].as_str().and_then(hanson::domain::time::parse_timestamp);
        let mut wrong = Vec::new();
        if v["type"].as_str() != Some(name.as_str()) {
            wrong.push(format!("type {} vs event {name}", v["type"]));
        }
        if v["seq"].as_u64() != id {
            wrong.push(format!("seq {} vs id {id:?}", v["seq"]));
        }
        if v["market_id"].as_str() != Some(self.config.market_id.as_str()) {
            wrong.push(format!("market_id {}", v["market_id"]));
        }
        if full_ts.is_none() || full_ts != timestamp {
            wrong.push(format!("timestamp {} vs fast path {timestamp:?}", v["timestamp"]));
        }
        if v["id"].as_str().is_none() {
            wrong.push("no id".into());
        }
        if name == "trade.created" && !v["data"]["trade"].is_object() {
            wrong.push("trade.created without data.trade".into());
        }
        if !wrong.is_empty() {
            self.stats.envelope_mismatches += 1;
            self.stats.problem(format!("envelope seq {id:?}: {}", wrong.join("; ")));
        }
    }
}

/// The envelope's `timestamp` in microseconds: the first `"timestamp":"..."` of the data line
/// when no `"data":` comes before it (the service writes the envelope's keys in the order id,
/// type, timestamp, market_id, seq, data); otherwise the envelope is parsed in full.
pub(super) fn envelope_timestamp(data: &[u8]) -> Option<i64> {
    const KEY: &[u8] = b"\"timestamp\":\"";
    let found = memchr::memmem::find(data, KEY);
    let fast = found.filter(|&at| memchr::memmem::find(&data[..at], b"\"data\":").is_none());
    let Some(at) = fast else {
        let v: Value = serde_json::from_slice(data).ok()?;
        return v["timestamp"].as_str().and_then(hanson::domain::time::parse_timestamp);
    };
    let start = at + KEY.len();
    let len = memchr::memchr(b'"', &data[start..])?;
    let text = &data[start..start + len];
    fixed_iso_micros(text).or_else(|| std::str::from_utf8(text).ok().and_then(hanson::domain::time::parse_timestamp))
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` (the service's fixed format) without a general parser.
pub(super) fn fixed_iso_micros(t: &[u8]) -> Option<i64> {
    if t.len() != 27 || t[4] != b'-' || t[7] != b'-' || t[10] != b'T' || t[13] != b':' || t[16] != b':' || t[19] != b'.' || t[26] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        t[r].iter().try_fold(0i64, |acc, &b| if b.is_ascii_digit() { Some(acc * 10 + i64::from(b - b'0')) } else { None })
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss, us) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..26)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + hh * 3_600 + mm * 60 + ss) * 1_000_000) + us)
}
