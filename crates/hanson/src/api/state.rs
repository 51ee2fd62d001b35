//! What every handler shares: the store, token settings, rate limiters and the search caches,
//! and the settings they are built from.

use std::net::IpAddr;
use std::sync::Arc;

use super::ratelimit::{Limiter, Rule};
use super::rendered::RenderedMarkets;
use crate::events::{background, Hub, HubPublisher, StreamSettings};
use crate::store::Store;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Nonce, login and refresh, per client IP.
    pub auth_per_ip: Rule,
    /// Every route, per client IP.
    pub general_per_ip: Rule,
    /// Every authenticated route, per credential.
    pub per_principal: Rule,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { auth_per_ip: Rule { per_second: 5.0, burst: 30.0 }, general_per_ip: Rule::OFF, per_principal: Rule::OFF }
    }
}

/// Everything the HTTP layer is configured with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub limits: Limits,
    /// HS256 secret; when absent one is generated once and stored in the database.
    pub jwt_secret: Option<String>,
    pub access_token_ttl_secs: i64,
    pub refresh_token_ttl_secs: i64,
    /// Peers whose `Forwarded` / `X-Forwarded-For` name the client (load balancers, reverse
    /// proxies); from any other peer those headers are ignored.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    pub streams: StreamSettings,
    /// Serve the web app from this directory instead of the copy built into the binary.
    pub web_dir: Option<std::path::PathBuf>,
    pub webhooks: crate::events::webhook_sender::SenderSettings,
    /// Where other nodes reach this one, to forward their trades to it when it runs them
    /// (`forward`); None: the address it listens on, unless that is a wildcard.
    pub advertise_url: Option<String>,
    /// Take part in the trade lead (`forward`): forward trades to the leader, or lead.
    /// Off, this node runs its own trades under the batch lock, as every node can.
    pub forward_trades: bool,
    /// Where users reach the service: the domain and URI of Sign-In with Ethereum messages.
    /// None: logins offer only the spec's message.
    pub public_url: Option<crate::domain::siwe::PublicUrl>,
    /// Serve `/metrics` on the API's listener (off when a separate `--metrics-listen` serves it).
    pub public_metrics: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            limits: Limits::default(),
            jwt_secret: None,
            access_token_ttl_secs: 604_800,
            refresh_token_ttl_secs: 30 * 86_400,
            trusted_proxies: Vec::new(),
            streams: StreamSettings::default(),
            web_dir: None,
            webhooks: Default::default(),
            advertise_url: None,
            forward_trades: true,
            public_url: None,
            public_metrics: true,
        }
    }
}

impl From<Limits> for Settings {
    fn from(limits: Limits) -> Self {
        Settings { limits, ..Settings::default() }
    }
}

/// Token settings, with the signing key set up once per process.
pub(crate) struct AuthState {
    pub(crate) jwt: crate::auth::jwt::JwtKey,
    pub(crate) access_token_ttl_secs: i64,
    pub(crate) refresh_token_ttl_secs: i64,
    pub(crate) public_url: Option<crate::domain::siwe::PublicUrl>,
}

pub(crate) struct Limiters {
    pub(crate) auth_per_ip: Limiter<IpAddr>,
    pub(crate) general_per_ip: Limiter<IpAddr>,
    /// Keyed by a digest of the credential.
    pub(crate) per_principal: Limiter<[u8; 16]>,
}

/// What handlers share, behind one `Arc`: axum clones the state for every extractor and
/// middleware of every request, and a field per `Arc` made those clones and drops a
/// noticeable part of the server's time.
#[derive(Clone)]
pub(crate) struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) auth: Arc<AuthState>,
    pub(crate) limiters: Arc<Limiters>,
    pub(crate) trusted_proxies: Arc<[ipnet::IpNet]>,
    pub(crate) search_cache: Arc<crate::store::markets::search::SearchCache>,
    pub(crate) rendered_markets: Arc<RenderedMarkets>,
    pub(crate) hub: Arc<Hub>,
    /// The watched markets' tickers.
    pub(crate) tickers: Arc<crate::events::ticker::Tickers>,
    /// Leaderboards computed in the last few seconds.
    pub(crate) leaderboards: Arc<crate::store::leaderboard::Leaderboards>,
    pub(crate) web: Arc<super::web::WebApp>,
    pub(crate) webhooks: crate::events::webhook_sender::SenderSettings,
    /// Wakes this node's webhook sender (a delivery became due now).
    pub(crate) webhooks_wake: Arc<crate::events::webhook_sender::Wake>,
    /// Where this node's bets and sells run (`forward`).
    pub(crate) trade_route: Arc<super::forward::TradeRoute>,
    pub(crate) public_metrics: bool,
}

impl AppState {
    /// Sets up the JWT key (from the settings, or the secret stored in the database), and the
    /// event hub with its background work (stopped by `hub.close()`).
    pub(crate) async fn new(mut store: Store, settings: Settings) -> crate::error::Result<Self> {
        let secret = match settings.jwt_secret {
            Some(secret) => secret,
            None => {
                let generated = wallet_auth::to_hex(&crate::auth::random_bytes::<32>());
                store.write(move |c| crate::store::auth::jwt_secret(c, &generated)).await?
            }
        };
        let limits = settings.limits;
        let trusted_proxies = settings.trusted_proxies.into();
        let hub = Hub::new(store.clone(), settings.streams);
        let tickers = crate::events::ticker::Tickers::new(hub.clone(), store.clone(), settings.streams.ticker_interval);
        let webhooks_wake = Arc::new(crate::events::webhook_sender::Wake::default());
        store.set_publisher(Arc::new(HubPublisher { hub: hub.clone(), webhooks: webhooks_wake.clone() }));
        background::start(&hub, store.clone());
        crate::events::webhook_sender::start(store.clone(), settings.webhooks.clone(), webhooks_wake.clone());
        let rendered_markets = Arc::new(RenderedMarkets::default());
        tokio::spawn(rendered_markets.clone().warm(store.clone()));
        Ok(AppState(Arc::new(Shared {
            store,
            search_cache: Arc::default(),
            rendered_markets,
            auth: Arc::new(AuthState {
                jwt: crate::auth::jwt::JwtKey::new(secret.as_bytes()),
                access_token_ttl_secs: settings.access_token_ttl_secs,
                refresh_token_ttl_secs: settings.refresh_token_ttl_secs,
                public_url: settings.public_url,
            }),
            trusted_proxies,
            hub,
            tickers,
            leaderboards: Arc::default(),
            web: Arc::new(super::web::WebApp::new(settings.web_dir)),
            webhooks: settings.webhooks,
            webhooks_wake,
            trade_route: Arc::default(),
            public_metrics: settings.public_metrics,
            limiters: Arc::new(Limiters {
                auth_per_ip: Limiter::new(limits.auth_per_ip),
                general_per_ip: Limiter::new(limits.general_per_ip),
                per_principal: Limiter::new(limits.per_principal),
            }),
        })))
    }
}
