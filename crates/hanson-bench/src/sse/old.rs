//! Light Server-Sent Events subscribers for the stream scenarios: one tokio task and one raw
//! `TcpStream` each (HTTP/1.1 `GET` with `Accept: text/event-stream`), the chunked transfer
//! encoding and the SSE frames parsed here, one read buffer per subscriber and nothing else
//! of any size, so 10,000 of them fit easily.
//!
//! Per event the hot path does no JSON parsing: the type comes from the `event:` line, the
//! seq from the `id:` line, and the envelope's `timestamp` is found with a substring search of
//! the `data:` line (the envelope's own key comes before `data`, so the first match is it;
//! should a `"data":` ever come first, that envelope is parsed in full instead).
//! One subscriber (`verify`) also parses every envelope in full and checks that the fast
//! path read the same type, seq and timestamp, so a change of the envelope cannot go unseen.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// The subscribers' worker threads (their CPU time is read by this name).
pub(crate) const THREAD_NAME: &str = "sse-subscribers";

/// Receive-minus-timestamp delays, microseconds: a log-linear histogram (128 sub-buckets per
/// power of two, so a reported percentile is within 1% above the true value).
pub(crate) struct LagHistogram {
    buckets: Vec<u64>,
    pub count: u64,
    pub max_us: u64,
}

const SUB_BUCKETS: u64 = 128;
const MAX_LAG_US: u64 = 1 << 40;

impl LagHistogram {
    pub(crate) fn new() -> LagHistogram {
        LagHistogram { buckets: vec![0; Self::index(MAX_LAG_US) + 1], count: 0, max_us: 0 }
    }

    fn index(v: u64) -> usize {
        let v = v.min(MAX_LAG_US);
        if v < SUB_BUCKETS {
            return v as usize;
        }
        let e = 63 - u64::from(v.leading_zeros()); // >= 7
        (SUB_BUCKETS * (e - 6) + (v >> (e - 7)) - SUB_BUCKETS) as usize
    }

    /// The largest value that falls into bucket `i`.
    fn upper(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB_BUCKETS {
            return i;
        }
        let e = i / SUB_BUCKETS + 6;
        let m = i % SUB_BUCKETS + SUB_BUCKETS;
        ((m + 1) << (e - 7)) - 1
    }

    pub(crate) fn record(&mut self, us: u64) {
        self.buckets[Self::index(us)] += 1;
        self.count += 1;
        self.max_us = self.max_us.max(us);
    }

    pub(crate) fn merge(&mut self, other: &LagHistogram) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        self.count += other.count;
        self.max_us = self.max_us.max(other.max_us);
    }

    /// Nearest-rank percentile in ms (the bucket's upper edge, capped at the maximum seen).
    pub(crate) fn percentile_ms(&self, p: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Self::upper(i).min(self.max_us) as f64 / 1000.0;
            }
        }
        self.max_us as f64 / 1000.0
    }
}

/// What one subscriber saw.
#[derive(Default)]
pub(crate) struct SubStats {
    /// Seq of the snapshot (its `id:` line).
    pub snapshot_seq: Option<u64>,
    /// Seq of the last event after the snapshot.
    pub last_seq: Option<u64>,
    pub trades: u64,
    /// Market events other than `trade.created` (after the snapshot).
    pub other_events: BTreeMap<String, u64>,
    /// Times the seq jumped forward by more than 1, and the seqs skipped in all.
    pub gaps: u64,
    pub missing_seqs: u64,
    /// Events whose seq was not above the previous one.
    pub repeats: u64,
    pub pings: u64,
    /// Body bytes read (chunk framing included).
    pub bytes: u64,
    /// `trade.created` whose timestamp lay after the local receive time (clamped to 0).
    pub negative_lags: u64,
    /// Events without a readable timestamp (no lag recorded).
    pub bad_timestamps: u64,
    /// Protocol surprises: a second snapshot, an event before the snapshot, a bad `id:`.
    pub protocol_errors: u64,
    /// Verify mode: envelopes whose full parse disagreed with the fast path.
    pub envelope_mismatches: u64,
    pub first_problem: Option<String>,
    /// Why the stream ended before the bench stopped it (None: it was still open).
    pub ended: Option<String>,
    pub lags: Option<Box<LagHistogram>>,
}

impl SubStats {
    fn problem(&mut self, text: String) {
        if self.first_problem.is_none() {
            self.first_problem = Some(text);
        }
    }
}

/// Counters the scenario watches while the subscribers run.
pub(crate) struct Shared {
    pub snapshots: AtomicUsize,
    /// Subscribers that ended (any reason) before their snapshot.
    pub failed_before_snapshot: AtomicUsize,
    /// Per subscriber: `trade.created` events received so far.
    pub trades: Vec<AtomicU64>,
    /// Per subscriber: its task has ended.
    pub finished: Vec<AtomicBool>,
}

pub(crate) struct Config {
    /// host:port to connect to.
    pub addr: String,
    pub host: String,
    pub path: String,
    pub market_id: String,
    pub read_buffer: usize,
    /// Record delivery lags of `trade.created` events.
    pub lags: bool,
}

/// Splits `http://host:port[/...]` into (host:port, host header).
pub(crate) fn authority(base: &str) -> Result<String, String> {
    let rest = base.strip_prefix("http://").ok_or_else(|| format!("stream scenarios need an http:// URL, not {base}"))?;
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.is_empty() {
        return Err(format!("no host in {base}"));
    }
    Ok(if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") })
}

/// N subscribers to one market's `GET /v1/markets/{id}/events`, on a runtime of their own.
pub(crate) struct Subscribers {
    runtime: Option<tokio::runtime::Runtime>,
    handles: Vec<JoinHandle<SubStats>>,
    pub shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    pub opened_at: Instant,
}

impl Subscribers {
    /// Starts `n` subscribers; at most `parallel` of them are between connect and snapshot at
    /// a time (so the server's accept queue never overflows). Subscriber 0 verifies every
    /// envelope in full.
    pub(crate) fn open(
        base: &str,
        market_id: &str,
        n: usize,
        parallel: usize,
        read_buffer: usize,
        lags: bool,
    ) -> Result<Subscribers, String> {
        let addr = authority(base)?;
        let config = Arc::new(Config {
            host: addr.clone(),
            addr,
            path: format!("/v1/markets/{market_id}/events"),
            market_id: market_id.to_string(),
            read_buffer,
            lags,
        });
        // Their own worker threads: the trade clients of the main runtime never queue behind
        // a thousand readers (both still share the machine's cores with the server).
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(THREAD_NAME)
            .enable_all()
            .build()
            .map_err(|e| format!("subscriber runtime: {e}"))?;
        let shared = Arc::new(Shared {
            snapshots: AtomicUsize::new(0),
            failed_before_snapshot: AtomicUsize::new(0),
            trades: (0..n).map(|_| AtomicU64::new(0)).collect(),
            finished: (0..n).map(|_| AtomicBool::new(false)).collect(),
        });
        let (stop, stop_rx) = watch::channel(false);
        let gate = Arc::new(Semaphore::new(parallel.max(1)));
        let handles = (0..n)
            .map(|i| {
                let (config, shared, stop_rx, gate) = (config.clone(), shared.clone(), stop_rx.clone(), gate.clone());
                runtime.spawn(async move {
                    let permit = gate.acquire_owned().await.ok();
                    let mut sub = Subscriber::new(i, &config, &shared, i == 0, permit);
                    let end = sub.run(stop_rx).await;
                    let mut stats = sub.finish();
                    stats.ended = end.err();
                    if stats.snapshot_seq.is_none() {
                        shared.failed_before_snapshot.fetch_add(1, Ordering::SeqCst);
                    }
                    shared.finished[i].store(true, Ordering::SeqCst);
                    stats
                })
            })
            .collect();
        Ok(Subscribers { runtime: Some(runtime), handles, shared, stop, opened_at: Instant::now() })
    }

    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// Waits until every subscriber has its snapshot or has failed; returns (snapshots, failed).
    pub(crate) async fn wait_snapshots(&self, timeout: Duration) -> (usize, usize) {
        let deadline = Instant::now() + timeout;
        loop {
            let ok = self.shared.snapshots.load(Ordering::SeqCst);
            let failed = self.shared.failed_before_snapshot.load(Ordering::SeqCst);
            if ok + failed >= self.len() || Instant::now() >= deadline {
                return (ok, failed);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Subscribers whose task has ended (stream closed, error).
    pub(crate) fn finished(&self) -> usize {
        self.shared.finished.iter().filter(|f| f.load(Ordering::SeqCst)).count()
    }

    /// Waits until every live subscriber has `expected` trade events, or nothing moved for
    /// `stall`, or `timeout` passed. Returns the seconds it waited.
    pub(crate) async fn wait_trades(&self, expected: u64, stall: Duration, timeout: Duration) -> f64 {
        let start = Instant::now();
        let mut last_total = u64::MAX;
        let mut last_move = Instant::now();
        loop {
            let mut total = 0;
            let mut pending = false;
            for (count, finished) in self.shared.trades.iter().zip(&self.shared.finished) {
                let c = count.load(Ordering::SeqCst);
                total += c;
                if c < expected && !finished.load(Ordering::SeqCst) {
                    pending = true;
                }
            }
            if !pending {
                break;
            }
            if total != last_total {
                last_total = total;
                last_move = Instant::now();
            }
            if last_move.elapsed() >= stall || start.elapsed() >= timeout {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        start.elapsed().as_secs_f64()
    }

    /// Closes every stream and collects what each subscriber saw.
    pub(crate) async fn close(mut self) -> Vec<SubStats> {
        let _ = self.stop.send(true);
        let mut out = Vec::with_capacity(self.handles.len());
        for h in std::mem::take(&mut self.handles) {
            out.push(h.await.unwrap_or_else(|e| SubStats { ended: Some(format!("task failed: {e}")), ..Default::default() }));
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
        out
    }
}

impl Drop for Subscribers {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// The kinds of frame the bench tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    None,
    Snapshot,
    Trade,
    Other,
}

/// Chunked transfer decoding state.
enum Chunked {
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

struct Subscriber<'a> {
    index: usize,
    config: &'a Config,
    shared: &'a Shared,
    verify: bool,
    /// Held from the start until the snapshot arrives (limits parallel connects).
    permit: Option<OwnedSemaphorePermit>,
    chunked: Option<Chunked>,
    /// The unfinished line carried between reads.
    line: Vec<u8>,
    kind: Kind,
    event_name: Vec<u8>,
    id: Option<u64>,
    bad_id: bool,
    timestamp: Option<i64>,
    data: Option<String>,
    stats: SubStats,
}

impl<'a> Subscriber<'a> {
    fn new(index: usize, config: &'a Config, shared: &'a Shared, verify: bool, permit: Option<OwnedSemaphorePermit>) -> Self {
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

    fn finish(self) -> SubStats {
        self.stats
    }

    /// Ok(()) when stopped by the bench; Err(reason) when the stream ended or failed.
    async fn run(&mut self, mut stop: watch::Receiver<bool>) -> Result<(), String> {
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
    fn feed(&mut self, mut input: &[u8], now: i64) -> Result<bool, String> {
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
    fn sse(&mut self, mut data: &[u8], now: i64) {
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

    fn on_line(&mut self, line: &[u8], now: i64) {
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

    fn dispatch(&mut self, now: i64) {
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
    fn verify_envelope(&mut self, data: &str, id: Option<u64>, timestamp: Option<i64>) {
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
fn envelope_timestamp(data: &[u8]) -> Option<i64> {
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
fn fixed_iso_micros(t: &[u8]) -> Option<i64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_timestamps_match_the_service() {
        for micros in [0i64, 1_700_000_000_123_456, 1_798_761_599_999_999, 951_782_400_000_001] {
            let text = hanson::domain::time::format_micros(micros);
            assert_eq!(fixed_iso_micros(text.as_bytes()), Some(micros), "{text}");
        }
    }

    /// A fake SSE endpoint: each connection gets a snapshot (seq 10) and, once `go` flips,
    /// `trades` trade.created events, in chunks; then it stays open.
    #[test]
    fn subscribers_against_a_fake_server() {
        use tokio::net::TcpListener;
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let (go, go_rx) = watch::channel(false);
            let trades = 50u64;
            tokio::spawn(async move {
                loop {
                    let (mut sock, _) = listener.accept().await.unwrap();
                    let mut go_rx = go_rx.clone();
                    tokio::spawn(async move {
                        let mut req = vec![0u8; 1024];
                        let _ = sock.read(&mut req).await;
                        let chunk = |s: String| format!("{:x}\r\n{s}\r\n", s.len());
                        let mut out = String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
                        out.push_str(&chunk("event: snapshot\nid: 10\ndata: {\"seq\":10,\"market\":{\"id\":\"m\"}}\n\n".into()));
                        sock.write_all(out.as_bytes()).await.unwrap();
                        while !*go_rx.borrow() {
                            go_rx.changed().await.unwrap();
                        }
                        let ts = hanson::domain::time::format_micros(hanson::domain::time::now_micros());
                        let mut body = String::new();
                        for seq in 11..11 + trades {
                            body.push_str(&chunk(format!(
                                "event: trade.created\nid: {seq}\ndata: {{\"id\":\"e\",\"type\":\"trade.created\",\"timestamp\":\"{ts}\",\"market_id\":\"m\",\"seq\":{seq},\"data\":{{\"trade\":{{}}}}}}\n\n"
                            )));
                        }
                        if sock.write_all(body.as_bytes()).await.is_err() {
                            return;
                        }
                        let mut sink = [0u8; 64];
                        let _ = sock.read(&mut sink).await; // until the client closes
                    });
                }
            });
            let n = 300; // two sockets each in this process: stays under a default fd limit of 1024
            let subs = Subscribers::open(&format!("http://{addr}"), "m", n, 256, 4096, true).unwrap();
            assert_eq!(subs.wait_snapshots(Duration::from_secs(30)).await, (n, 0));
            go.send(true).unwrap();
            subs.wait_trades(trades, Duration::from_secs(5), Duration::from_secs(30)).await;
            assert_eq!(subs.finished(), 0);
            let stats = subs.close().await;
            assert_eq!(stats.len(), n);
            for st in &stats {
                assert_eq!((st.snapshot_seq, st.last_seq, st.trades, st.gaps, st.envelope_mismatches), (Some(10), Some(10 + trades), trades, 0, 0), "{:?}", st.first_problem);
                assert!(st.ended.is_none());
                assert_eq!(st.lags.as_ref().unwrap().count, trades);
            }
        });
    }

    #[test]
    fn envelope_timestamp_is_the_top_level_one() {
        let t1 = hanson::domain::time::format_micros(1_600_000_000_000_000);
        let t2 = hanson::domain::time::format_micros(1_700_000_000_000_000);
        let ordered =
            format!("{{\"id\":\"x\",\"type\":\"trade.created\",\"timestamp\":\"{t2}\",\"data\":{{\"trade\":{{\"timestamp\":\"{t1}\"}}}}}}");
        assert_eq!(envelope_timestamp(ordered.as_bytes()), Some(1_700_000_000_000_000));
        let data_first = format!("{{\"data\":{{\"trade\":{{\"timestamp\":\"{t1}\"}}}},\"timestamp\":\"{t2}\"}}");
        assert_eq!(envelope_timestamp(data_first.as_bytes()), Some(1_700_000_000_000_000));
    }

    #[test]
    fn histogram_percentiles_are_close() {
        let mut h = LagHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v);
        }
        let p50 = h.percentile_ms(50.0) * 1000.0;
        let p99 = h.percentile_ms(99.0) * 1000.0;
        assert!((50_000.0..50_500.0).contains(&p50), "{p50}");
        assert!((99_000.0..100_000.0 + 1.0).contains(&p99), "{p99}");
        assert_eq!(h.percentile_ms(100.0), 100.0);
        for v in [0u64, 1, 127, 128, 129, 255, 256, 1000, 123_456_789] {
            let i = LagHistogram::index(v);
            assert!(LagHistogram::upper(i) >= v && (i == 0 || LagHistogram::upper(i - 1) < v), "{v}");
        }
    }

    #[test]
    fn frames_across_chunks_and_reads() {
        let config =
            Config { addr: String::new(), host: String::new(), path: String::new(), market_id: "m1".into(), read_buffer: 1024, lags: true };
        let shared = Shared {
            snapshots: AtomicUsize::new(0),
            failed_before_snapshot: AtomicUsize::new(0),
            trades: vec![AtomicU64::new(0)],
            finished: vec![AtomicBool::new(false)],
        };
        let mut sub = Subscriber::new(0, &config, &shared, true, None);
        sub.chunked = Some(Chunked::Size { value: 0, in_extension: false });
        let ts = hanson::domain::time::format_micros(1_700_000_000_000_000);
        let snapshot = "event: snapshot\nid: 4\ndata: {\"seq\":4,\"market\":{\"id\":\"m1\"}}\n\n".to_string();
        let trade = |seq: u64| {
            format!(
                "event: trade.created\nid: {seq}\ndata: {{\"id\":\"e{seq}\",\"type\":\"trade.created\",\"timestamp\":\"{ts}\",\"market_id\":\"m1\",\"seq\":{seq},\"data\":{{\"trade\":{{\"timestamp\":\"x\"}}}}}}\n\n"
            )
        };
        let body = format!("{snapshot}: ping\n\n{}{}{}", trade(5), trade(6), trade(8));
        // As chunks of 7 bytes, fed one byte at a time.
        let mut wire = Vec::new();
        for chunk in body.as_bytes().chunks(7) {
            wire.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            wire.extend_from_slice(chunk);
            wire.extend_from_slice(b"\r\n");
        }
        for b in wire.chunks(1) {
            assert!(!sub.feed(b, 1_700_000_000_005_000).unwrap());
        }
        assert!(sub.feed(b"0\r\n\r\n", 0).unwrap());
        let st = sub.finish();
        assert_eq!(st.snapshot_seq, Some(4));
        assert_eq!(st.trades, 3);
        assert_eq!(st.last_seq, Some(8));
        assert_eq!((st.gaps, st.missing_seqs, st.repeats), (1, 1, 0));
        assert_eq!(st.pings, 1);
        assert_eq!(st.envelope_mismatches, 0, "{:?}", st.first_problem);
        let lags = st.lags.unwrap();
        assert_eq!(lags.count, 3);
        assert_eq!(lags.max_us, 5_000);
        assert_eq!(shared.snapshots.load(Ordering::SeqCst), 1);
        assert_eq!(shared.trades[0].load(Ordering::SeqCst), 3);
    }
}
