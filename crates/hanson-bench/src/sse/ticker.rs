//! Ticker watchers for `stream_watchers`: one tokio task and one raw `TcpStream` each on
//! `GET /v1/markets/{id}/ticker`, keeping only the count of ticks, the last tick's data and a
//! lag histogram. The lag of a tick is its newest trade's `created_at` (set when the trade is
//! applied, just before its commit) to the local read: the `created_at` is found with a
//! substring search, no JSON is parsed until the end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinHandle;

use super::subscriber::fixed_iso_micros;
use super::{authority, LagHistogram, THREAD_NAME};

#[derive(Default)]
pub(crate) struct TickStats {
    pub ticks: u64,
    /// Body bytes read after the response head (SSE frames and chunk framing).
    pub bytes: u64,
    /// The data line of the last tick.
    pub last: Option<String>,
    pub lags: Option<Box<LagHistogram>>,
    /// Why the stream ended before the bench stopped it.
    pub ended: Option<String>,
}

pub(crate) struct Watchers {
    runtime: Option<tokio::runtime::Runtime>,
    handles: Vec<JoinHandle<TickStats>>,
    first: Arc<AtomicUsize>,
    failed: Arc<AtomicUsize>,
    stop: watch::Sender<bool>,
}

impl Watchers {
    /// Starts `n` watchers, at most `parallel` of them between connect and first tick.
    pub(crate) fn open(base: &str, market_id: &str, n: usize, parallel: usize) -> Result<Watchers, String> {
        let addr = Arc::new(authority(base)?);
        let request = Arc::new(format!(
            "GET /v1/markets/{market_id}/ticker HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n"
        ));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(THREAD_NAME)
            .enable_all()
            .build()
            .map_err(|e| format!("watcher runtime: {e}"))?;
        let (first, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (stop, stop_rx) = watch::channel(false);
        let gate = Arc::new(Semaphore::new(parallel.max(1)));
        let handles = (0..n)
            .map(|_| {
                let (addr, request, first, failed, stop_rx, gate) =
                    (addr.clone(), request.clone(), first.clone(), failed.clone(), stop_rx.clone(), gate.clone());
                runtime.spawn(async move {
                    let mut permit = gate.acquire_owned().await.ok();
                    let mut stats = TickStats::default();
                    if let Err(e) = watch_ticker(&addr, &request, stop_rx, &mut stats, &first, &mut permit).await {
                        stats.ended = Some(e);
                    }
                    if stats.ticks == 0 {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                    stats
                })
            })
            .collect();
        Ok(Watchers { runtime: Some(runtime), handles, first, failed, stop })
    }

    /// Waits until every watcher has its first tick or failed; returns (ticked, failed).
    pub(crate) async fn wait_first(&self, timeout: Duration) -> (usize, usize) {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let (ok, failed) = (self.first.load(Ordering::SeqCst), self.failed.load(Ordering::SeqCst));
            if ok + failed >= self.handles.len() || std::time::Instant::now() >= deadline {
                return (ok, failed);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub(crate) async fn close(mut self) -> Vec<TickStats> {
        let _ = self.stop.send(true);
        let mut out = Vec::with_capacity(self.handles.len());
        for h in std::mem::take(&mut self.handles) {
            out.push(h.await.unwrap_or_else(|e| TickStats { ended: Some(format!("task failed: {e}")), ..Default::default() }));
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
        out
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Chunked body decoding plus SSE lines, enough for the ticker.
#[derive(Default)]
struct Parser {
    raw: Vec<u8>,
    /// Bytes left in the current chunk (0: a size line comes next).
    left: usize,
    body: Vec<u8>,
    is_ticker: bool,
    /// The current event's data line, if it has one (the buffer is reused).
    data: Vec<u8>,
    has_data: bool,
}

impl Parser {
    /// Feeds bytes; calls `tick` with each complete ticker event's data.
    fn feed(&mut self, input: &[u8], tick: &mut dyn FnMut(&[u8])) -> Result<(), String> {
        self.raw.extend_from_slice(input);
        let mut at = 0;
        loop {
            if self.left == 0 {
                let Some(end) = memchr::memmem::find(&self.raw[at..], b"\r\n") else { break };
                let line = &self.raw[at..at + end];
                at += end + 2;
                if line.is_empty() {
                    continue; // the CRLF after a chunk's data
                }
                let hex = line.split(|&b| b == b';').next().unwrap_or(line);
                let size = std::str::from_utf8(hex).ok().and_then(|h| usize::from_str_radix(h.trim(), 16).ok()).ok_or("bad chunk size")?;
                if size == 0 {
                    return Err("stream ended".into());
                }
                self.left = size;
            } else {
                let take = self.left.min(self.raw.len() - at);
                if take == 0 {
                    break;
                }
                self.body.extend_from_slice(&self.raw[at..at + take]);
                self.left -= take;
                at += take;
            }
        }
        self.raw.drain(..at);
        let mut start = 0;
        while let Some(end) = memchr::memchr(b'\n', &self.body[start..]) {
            let line = &self.body[start..start + end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                if self.is_ticker && self.has_data {
                    tick(&self.data);
                }
                self.is_ticker = false;
                self.has_data = false;
            } else if let Some(v) = line.strip_prefix(b"event:") {
                self.is_ticker = v.trim_ascii() == b"ticker";
            } else if let Some(v) = line.strip_prefix(b"data:") {
                self.data.clear();
                self.data.extend_from_slice(v.trim_ascii_start());
                self.has_data = true;
            }
            start += end + 1;
        }
        self.body.drain(..start);
        Ok(())
    }
}

/// The newest trade's `created_at` in a tick (its trades are oldest first).
fn newest_trade_micros(data: &[u8]) -> Option<i64> {
    const KEY: &[u8] = b"\"created_at\":\"";
    let at = memchr::memmem::rfind(data, KEY)? + KEY.len();
    fixed_iso_micros(data.get(at..at + 27)?)
}

async fn watch_ticker(
    addr: &str,
    request: &str,
    mut stop: watch::Receiver<bool>,
    stats: &mut TickStats,
    first: &AtomicUsize,
    permit: &mut Option<tokio::sync::OwnedSemaphorePermit>,
) -> Result<(), String> {
    let mut stream = tokio::select! {
        biased;
        _ = stop.changed() => return Ok(()),
        r = TcpStream::connect(addr) => r.map_err(|e| format!("connect: {:?}", e.kind()))?,
    };
    let _ = stream.set_nodelay(true);
    stream.write_all(request.as_bytes()).await.map_err(|e| format!("write: {:?}", e.kind()))?;
    let mut buf = vec![0u8; 4096];
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
    };
    if !head.starts_with(b"HTTP/1.1 200") {
        return Err(format!("status {}", String::from_utf8_lossy(&head[..12.min(head.len())])));
    }
    let mut parser = Parser::default();
    let mut lags = Box::new(LagHistogram::new());
    // The last tick's data, copied into one reused buffer (a String only at the end).
    let mut last: Vec<u8> = Vec::new();
    let mut on_tick = |data: &[u8]| {
        stats.ticks += 1;
        if stats.ticks == 1 {
            first.fetch_add(1, Ordering::SeqCst);
            permit.take();
        } else if let Some(at) = newest_trade_micros(data) {
            lags.record((hanson::domain::time::now_micros() - at).max(0) as u64);
        }
        last.clear();
        last.extend_from_slice(data);
    };
    let mut bytes = (head.len() - body_start) as u64;
    let mut result = parser.feed(&head[body_start..], &mut on_tick);
    while result.is_ok() {
        let read = tokio::select! {
            biased;
            _ = stop.changed() => break,
            r = stream.read(&mut buf) => r,
        };
        result = match read {
            Ok(0) => Err("closed".into()),
            Ok(n) => {
                bytes += n as u64;
                parser.feed(&buf[..n], &mut on_tick)
            }
            Err(e) => Err(format!("read: {:?}", e.kind())),
        };
    }
    stats.bytes = bytes;
    stats.lags = Some(lags);
    if stats.ticks > 0 {
        stats.last = Some(String::from_utf8_lossy(&last).into_owned());
    }
    result
}
