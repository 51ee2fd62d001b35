//! The frame parsing and the timestamp fast path against known bytes.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::subscriber::{envelope_timestamp, fixed_iso_micros, Chunked};
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
