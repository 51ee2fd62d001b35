//! `hanson serve`: bind the address first, then take, create and migrate the database, then
//! serve (with the demo exchange under `--demo`).

use std::time::Duration;

use tokio::net::TcpListener;

use super::args::ServeArgs;
use super::demo;
use crate::api::ratelimit::Rule;
use crate::api::{Limits, Settings};
use crate::error::{Error, Result};
use crate::events::StreamSettings;
use crate::server::{redact, run_with, shutdown_signal, ConnectionLimits};
use crate::store::{sqlite, tenants, Store, StoreOptions};

fn rule(per_second: f64, burst: f64) -> Rule {
    Rule { per_second: per_second.max(0.0), burst: burst.max(1.0) }
}

pub(super) async fn serve(args: Box<ServeArgs>) -> Result<()> {
    if args.access_token_ttl < 1 || args.refresh_token_ttl < 1 {
        return Err(Error::invalid("access_token_ttl", "token lifetimes must be positive"));
    }
    let database_url = args.database.url_or(if args.demo { "hanson-demo.db" } else { "hanson.db" });
    let settings = Settings {
        limits: Limits {
            auth_per_ip: rule(args.auth_rate_per_ip, args.auth_burst_per_ip),
            general_per_ip: rule(args.rate_per_ip, args.burst_per_ip),
            per_principal: rule(args.rate_per_principal, args.burst_per_principal),
        },
        jwt_secret: args.jwt_secret.filter(|s| !s.is_empty()),
        access_token_ttl_secs: args.access_token_ttl,
        refresh_token_ttl_secs: args.refresh_token_ttl,
        trusted_proxies: args.trusted_proxies,
        streams: StreamSettings {
            ping_interval: Duration::from_secs(args.stream_ping_secs),
            max_streams: args.max_streams as usize,
            max_streams_per_ip: args.max_streams_per_ip as usize,
            lag_limit: args.stream_lag_limit,
            ticker_interval: std::time::Duration::from_millis(args.ticker_interval_ms),
            retention: crate::store::event_log::Retention {
                keep_for: i64::try_from(args.event_retention_secs).unwrap_or(i64::MAX / 1_000_000) * 1_000_000,
                keep_last: args.event_retention_events,
            },
            prune_every: Duration::from_secs(args.event_prune_every_secs),
        },
        web_dir: args.web_dir,
        advertise_url: args.advertise_url,
        forward_trades: !args.no_trade_forwarding,
        public_url: args.public_url,
        public_metrics: !args.no_public_metrics,
        webhooks: crate::events::webhook_sender::SenderSettings {
            schedule: args.webhook_retry_schedule,
            allow_private: args.webhook_allow_private,
        },
    };
    let store_options =
        StoreOptions { max_connections: args.db_max_connections as usize, statement_timeout_ms: args.db_statement_timeout_ms };
    let connections = ConnectionLimits {
        header_read_timeout: Duration::from_secs(args.header_read_timeout_secs),
        body_read_timeout: Duration::from_secs(args.body_read_timeout_secs),
        idle_timeout: Duration::from_secs(args.idle_timeout_secs),
        max_connections: args.max_connections as usize,
        shutdown_grace: Duration::from_secs(args.shutdown_grace_secs),
    };

    // Bound first: a taken port fails before any file is created or migrated.
    let listener =
        TcpListener::bind(&args.listen).await.map_err(|e| Error::Unavailable(format!("cannot listen on {}: {e}", args.listen)))?;
    let address = listener.local_addr().map_err(Error::internal)?;
    let database =
        if database_url.starts_with("sqlite:") { sqlite::shown(&sqlite::hold_for_serving(&database_url)?) } else { redact(&database_url) };
    let store = Store::open_with(&database_url, &store_options)?;
    // Where this process reaches itself, and where a person opens the web app.
    let base = match address.ip().is_unspecified() {
        true => format!("http://127.0.0.1:{}", address.port()),
        false => format!("http://{address}"),
    };
    let demo = match args.demo {
        true => Some(demo::prepare(&store, &base).await?),
        false => None,
    };
    // Tests and scripts read this line to find a random port.
    println!("listening on http://{address}");
    if let Some(metrics_listen) = &args.metrics_listen {
        let metrics = TcpListener::bind(metrics_listen)
            .await
            .map_err(|e| Error::Unavailable(format!("cannot listen on {metrics_listen} for metrics: {e}")))?;
        let metrics_address = metrics.local_addr().map_err(Error::internal)?;
        println!("metrics on http://{metrics_address}/metrics");
        // Ends with the process: a scrape in flight at shutdown is simply cut.
        tokio::spawn(async move {
            if let Err(e) = axum::serve(metrics, crate::api::metrics_router()).await {
                tracing::error!(error = %e, "the metrics listener failed");
            }
        });
    }
    tracing::info!(%address, %database, "hanson serving");
    if let Some(demo) = demo {
        demo.announce();
        tokio::spawn(demo.run());
    } else if store.read(tenants::provider_count).await? == 0 {
        let flag = match args.database.given() {
            true => format!(" --database-url {}", redact(&database_url)),
            false => String::new(),
        };
        tracing::info!(
            "no providers yet: create one with `hanson provider create --name NAME{flag}` (it prints the API key for {base}/console), \
             or try a demo exchange with `hanson serve --demo`"
        );
    }
    run_with(listener, store, settings, connections, shutdown_signal()).await?;
    tracing::info!("hanson stopped");
    Ok(())
}
