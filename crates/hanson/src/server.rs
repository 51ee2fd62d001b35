//! `hanson serve`: bind, serve, and shut down cleanly on SIGINT/SIGTERM after in-flight
//! requests finish. Slow or idle clients are timed out and open connections are capped
//! ([`ConnectionLimits`]), so a crowd of half-sent requests cannot exhaust the process.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::{header, HeaderValue, Request, Response as HttpResponse};
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::{Instant, Sleep};

mod parse_errors;

use crate::api::{self, AppState, Settings};
use crate::error::{Error, Result};
use crate::store::{Store, StoreOptions};

pub(crate) struct ServeConfig {
    pub(crate) listen: String,
    pub(crate) database_url: String,
    pub(crate) store_options: StoreOptions,
    pub(crate) settings: Settings,
    pub(crate) connections: ConnectionLimits,
    /// A second address serving only `/metrics`.
    pub(crate) metrics_listen: Option<String>,
}

pub(crate) async fn serve(config: ServeConfig) -> Result<()> {
    let store = Store::open_with(&config.database_url, &config.store_options)?;
    let listener =
        TcpListener::bind(&config.listen).await.map_err(|e| Error::internal(format!("cannot listen on {}: {e}", config.listen)))?;
    let address = listener.local_addr().map_err(Error::internal)?;
    // Tests and scripts read this line to find a random port.
    println!("listening on http://{address}");
    if let Some(metrics_listen) = &config.metrics_listen {
        let metrics = TcpListener::bind(metrics_listen)
            .await
            .map_err(|e| Error::internal(format!("cannot listen on {metrics_listen} for metrics: {e}")))?;
        let metrics_address = metrics.local_addr().map_err(Error::internal)?;
        println!("metrics on http://{metrics_address}/metrics");
        // Ends with the process: a scrape in flight at shutdown is simply cut.
        tokio::spawn(async move {
            if let Err(e) = axum::serve(metrics, api::metrics_router()).await {
                tracing::error!(error = %e, "the metrics listener failed");
            }
        });
    }
    tracing::info!(%address, database = %redact(&config.database_url), "hanson serving");
    run_with(listener, store, config.settings, config.connections, shutdown_signal()).await?;
    tracing::info!("hanson stopped");
    Ok(())
}

/// What `hanson serve` allows each client connection, and how many may be open at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From accept until the first request's headers are complete, and on a keep-alive
    /// connection from the first byte of each later request until its headers are complete.
    pub header_read_timeout: Duration,
    /// From the end of a request's headers until its body is complete. A handler still
    /// waiting for the body then gets a 408 problem+json and the connection is closed.
    pub body_read_timeout: Duration,
    /// How long a keep-alive connection may wait, with no request in flight, for the first
    /// byte of its next request.
    pub idle_timeout: Duration,
    /// Connections served at once; at the limit the server stops accepting until one closes.
    pub max_connections: usize,
    /// At shutdown, how long requests in flight and streams may take to end before the
    /// process exits without them.
    pub shutdown_grace: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            // Below the 30 s an orchestrator commonly allows before it kills the process.
            shutdown_grace: Duration::from_secs(20),
        }
    }
}

/// Serves on `listener` with the default [`ConnectionLimits`] until `shutdown` completes,
/// then lets in-flight requests finish.
pub async fn run(
    listener: TcpListener,
    store: Store,
    settings: impl Into<Settings>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    run_with(listener, store, settings, ConnectionLimits::default(), shutdown).await
}

/// Serves on `listener` until `shutdown` completes: then stops accepting, ends the streams,
/// closes idle connections and lets in-flight requests finish, for at most
/// `limits.shutdown_grace`.
///
/// Each accepted connection is served by hyper's HTTP/1.1 connection (keep-alive on) over
/// the router, under a watchdog enforcing the header and idle timeouts of `limits`.
#[tracing::instrument(name = "server", skip_all, level = "debug")]
pub async fn run_with(
    listener: TcpListener,
    store: Store,
    settings: impl Into<Settings>,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let settings: Settings = settings.into();
    let advertised = settings.advertise_url.clone().or_else(|| {
        let address = listener.local_addr().ok()?;
        (!address.ip().is_unspecified()).then(|| format!("http://{address}"))
    });
    let advertised = advertised.filter(|_| settings.forward_trades);
    let state = AppState::new(store, settings).await?;
    let forward =
        (advertised.is_some() && matches!(state.store.backend(), crate::store::Backend::Postgres(_))).then(|| state.trade_route.clone());
    api::forward::start(state.store.backend(), &state.trade_route, state.hub.closing(), advertised);
    let app = api::router(state.clone(), forward);
    let mut http = http1::Builder::new();
    // hyper's own `header_read_timeout` is off: in hyper 1.x its timer starts whenever the
    // connection waits for a request head, the keep-alive wait between requests included
    // (`proto::h1::conn::State::idle` re-arms it as soon as a response is done), so it cannot
    // tell a slow request head from an idle keep-alive connection. `supervise` enforces both.
    http.keep_alive(true).header_read_timeout(None);
    // An exact limit on request heads: without it hyper refuses a head only once its read
    // buffer (408 KiB) fills before the head is complete, which depends on how reads split.
    http.max_header_size(api::MAX_HEAD_BYTES);
    // Graceful shutdown by hand: hyper-util's `GracefulShutdown` cannot watch a connection
    // that may upgrade to a WebSocket.
    let (draining, drain_signal) = tokio::sync::watch::channel(false);
    // At the limit the accept loop waits for a permit, and the permit is held for the life of
    // a connection: further clients wait in the kernel's listen backlog instead of being
    // accepted and dropped, and are served in turn as soon as connections close, which under
    // a flood of slow clients is within `header_read_timeout`. The process never runs out of
    // file descriptors, so the database and everyone already connected keep working.
    let slots = Arc::new(Semaphore::new(limits.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            biased;
            () = &mut shutdown => break,
            permit = slots.clone().acquire_owned() => permit.expect("the connection semaphore is never closed"),
        };
        let (stream, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
        };
        let activity = Arc::new(Activity::new(limits));
        let service = ConnectionService {
            app: TowerToHyperService::new(app.clone()),
            peer,
            activity: activity.clone(),
            body_read_timeout: limits.body_read_timeout,
        };
        let io = TokioIo::new(Watched { stream, activity: activity.clone(), replacing: Replacing::No });
        let connection = http.serve_connection(io, service).with_upgrades();
        let drain_signal = drain_signal.clone();
        tokio::spawn(async move {
            supervise(connection, &activity, peer, drain_signal).await;
            drop(permit);
        });
    }
    drop(listener);
    // Streams never finish on their own: end them, and the hub's background work.
    state.hub.close();
    let capacity = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    tracing::debug!(connections = capacity - slots.available_permits(), "stopped accepting; waiting for open connections");
    draining.send_replace(true);
    // Every connection holds a slot until it is done; an upgraded WebSocket no longer does,
    // so its stream is waited for too, until it has sent its close frame. A client that stops
    // reading cannot hold the exit: past the grace its socket is simply closed.
    let drained = async {
        let _all = slots.acquire_many(u32::try_from(capacity).unwrap_or(u32::MAX)).await;
        state.hub.streams_ended().await;
    };
    if tokio::time::timeout(limits.shutdown_grace, drained).await.is_err() {
        tracing::warn!(grace = ?limits.shutdown_grace, "connections still open at the end of the shutdown grace; exiting without them");
    }
    Ok(())
}

/// Accept errors other than a client giving up (out of file descriptors, say) are retried
/// after a pause rather than in a busy loop; open connections keep being served meanwhile.
async fn accept_failed(error: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(error.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(%error, "accept failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Drives one connection to its end, or drops it (closing the socket) once it has waited
/// too long for a request: `header_read_timeout` from accept for the first request,
/// `idle_timeout` for the first byte of each later one, then `header_read_timeout` from that
/// byte. There is no deadline while a request is in flight (see `body_read_timeout`).
/// On `drain_signal` it finishes the request in flight, if any, and closes.
async fn supervise(
    connection: http1::UpgradeableConnection<TokioIo<Watched>, ConnectionService>,
    activity: &Activity,
    peer: SocketAddr,
    mut drain_signal: tokio::sync::watch::Receiver<bool>,
) {
    let mut connection = std::pin::pin!(connection);
    let mut draining = false;
    loop {
        let deadline = activity.deadline();
        tokio::select! {
            biased;
            _ = drain_signal.changed(), if !draining => {
                draining = true;
                connection.as_mut().graceful_shutdown();
            }
            ended = &mut connection => {
                if let Err(error) = ended {
                    tracing::debug!(%peer, %error, "connection ended with an error");
                }
                return;
            }
            () = activity.changed.notified() => {}
            () = sleep_until(deadline) => {
                if activity.deadline().is_some_and(|d| d <= Instant::now()) {
                    tracing::debug!(%peer, "closing a connection that timed out waiting for a request");
                    return;
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Where one connection stands, for its watchdog.
struct Activity {
    limits: ConnectionLimits,
    phase: Mutex<Phase>,
    /// Signalled when the deadline may have moved.
    changed: Notify,
}

struct Phase {
    /// Requests handed to the router whose response body is not yet done.
    in_flight: usize,
    /// When the connection was accepted or its last response finished.
    waiting_since: Instant,
    /// The first byte received since `waiting_since`, once a request has been served.
    first_byte: Option<Instant>,
    served: bool,
}

impl Activity {
    fn new(limits: ConnectionLimits) -> Activity {
        let phase = Phase { in_flight: 0, waiting_since: Instant::now(), first_byte: None, served: false };
        Activity { limits, phase: Mutex::new(phase), changed: Notify::new() }
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn deadline(&self) -> Option<Instant> {
        let phase = self.phase();
        if phase.in_flight > 0 {
            return None;
        }
        Some(match (phase.served, phase.first_byte) {
            (false, _) => phase.waiting_since + self.limits.header_read_timeout,
            (true, None) => phase.waiting_since + self.limits.idle_timeout,
            (true, Some(first_byte)) => first_byte + self.limits.header_read_timeout,
        })
    }

    /// Bytes arrived from the client.
    fn received(&self) {
        let mut phase = self.phase();
        if phase.in_flight == 0 && phase.served && phase.first_byte.is_none() {
            phase.first_byte = Some(Instant::now());
            drop(phase);
            self.changed.notify_one();
        }
    }

    fn request_started(self: &Arc<Self>) -> InFlight {
        self.phase().in_flight += 1;
        InFlight(self.clone())
    }
}

/// One request in flight, from its headers until its response body is done or dropped.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut phase = self.0.phase();
        phase.in_flight -= 1;
        if phase.in_flight == 0 {
            phase.waiting_since = Instant::now();
            phase.first_byte = None;
            phase.served = true;
            drop(phase);
            self.0.changed.notify_one();
        }
    }
}

/// The accepted socket, telling the watchdog when bytes arrive, and sending problem+json in
/// place of hyper's own answer to a request it cannot parse ([`parse_errors`]).
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
    replacing: Replacing,
}

/// Where the replacement of hyper's answer stands.
enum Replacing {
    No,
    /// Sending `response`, of which `sent` bytes are out, in place of hyper's `claimed` bytes.
    Sending {
        response: Vec<u8>,
        sent: usize,
        claimed: usize,
    },
    /// Sent. hyper closes the connection after its answer; anything after it is dropped.
    Done,
}

impl Watched {
    /// Writes the replacement, then tells hyper all `claimed` bytes of its answer went out.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<usize>> {
        loop {
            match &mut self.replacing {
                Replacing::Sending { response, sent, claimed } => {
                    if *sent == response.len() {
                        let claimed = *claimed;
                        self.replacing = Replacing::Done;
                        return Poll::Ready(Ok(claimed));
                    }
                    let n = std::task::ready!(Pin::new(&mut self.stream).poll_write(cx, &response[*sent..]))?;
                    if n == 0 {
                        return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                    }
                    *sent += n;
                }
                Replacing::Done | Replacing::No => return Poll::Ready(Ok(0)),
            }
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.received();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        match this.replacing {
            Replacing::No => match parse_errors::replacement(buf) {
                Some(response) => this.replacing = Replacing::Sending { response, sent: 0, claimed: buf.len() },
                None => return Pin::new(&mut this.stream).poll_write(cx, buf),
            },
            Replacing::Sending { .. } => {}
            Replacing::Done => return Poll::Ready(Ok(buf.len())),
        }
        this.poll_replacement(cx)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let mut written = bufs.iter().filter(|b| !b.is_empty());
        // hyper's answer is a head alone, in one slice.
        if let (Some(only), None, Replacing::No) = (written.next(), written.next(), &this.replacing) {
            return Pin::new(this).poll_write(cx, only);
        }
        match this.replacing {
            Replacing::No => Pin::new(&mut this.stream).poll_write_vectored(cx, bufs),
            Replacing::Sending { .. } => this.poll_replacement(cx),
            Replacing::Done => Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// The router as one connection's hyper service: the peer address for the rate limiter (as
/// `into_make_service_with_connect_info` provided it), the body deadline, in-flight tracking.
#[derive(Clone)]
struct ConnectionService {
    app: TowerToHyperService<Router>,
    peer: SocketAddr,
    activity: Arc<Activity>,
    body_read_timeout: Duration,
}

impl Service<Request<Incoming>> for ConnectionService {
    type Response = HttpResponse<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = std::result::Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let in_flight = self.activity.request_started();
        let timed_out = Arc::new(AtomicBool::new(false));
        let limit = self.body_read_timeout;
        let mut request = request.map(|body| DeadlineBody::new(body, limit, timed_out.clone()));
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let responding = self.app.call(request);
        let peer = self.peer;
        Box::pin(async move {
            let mut response = responding.await?;
            if timed_out.load(Ordering::Acquire) {
                tracing::debug!(%peer, "request body not received in time");
                response = body_timeout_response(&response, limit);
            }
            Ok(response.map(|body| TrackedBody { body, _in_flight: in_flight }))
        })
    }
}

/// 408 problem+json in place of whatever the handler made of its cut-off body; the rest of
/// the body is never read, so the connection closes after it.
fn body_timeout_response(late: &Response, limit: Duration) -> Response {
    let mut response = Error::RequestTimeout(limit.as_secs_f64()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    if let Some(id) = late.headers().get("x-request-id") {
        headers.insert("x-request-id", id.clone());
    }
    response
}

/// A request body that fails once `body_read_timeout` has passed since its headers, and
/// says so in `timed_out`. (tower-http 0.6's `RequestBodyTimeout` restarts its timer at
/// every frame, so a client trickling a byte at a time would never hit it.)
struct DeadlineBody {
    body: Incoming,
    deadline: Option<Pin<Box<Sleep>>>,
    timed_out: Arc<AtomicBool>,
}

impl DeadlineBody {
    fn new(body: Incoming, limit: Duration, timed_out: Arc<AtomicBool>) -> DeadlineBody {
        let deadline = (!body.is_end_stream()).then(|| Box::pin(tokio::time::sleep(limit)));
        DeadlineBody { body, deadline, timed_out }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the request body was not received in time")]
struct BodyTimedOut;

impl Body for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<std::result::Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let expired = this.deadline.as_mut().is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
        if !expired {
            return Poll::Pending;
        }
        this.timed_out.store(true, Ordering::Release);
        Poll::Ready(Some(Err(BodyTimedOut.into())))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A response body that keeps its request counted as in flight until it is done.
struct TrackedBody {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<std::result::Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Hides a password in a database URL for logging.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => format!("{}://***{}", &url[..scheme_end], &url[at..]),
        _ => url.to_string(),
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutdown requested; finishing in-flight requests");
}
