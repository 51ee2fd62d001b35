//! `hanson serve`: bind, serve, and shut down cleanly on SIGINT/SIGTERM after in-flight
//! requests finish.

use std::net::SocketAddr;

use tokio::net::TcpListener;

use crate::api::{self, AppState, Settings};
use crate::error::{Error, Result};
use crate::store::{Store, StoreOptions};

pub struct ServeConfig {
    pub listen: String,
    pub database_url: String,
    pub store_options: StoreOptions,
    pub settings: Settings,
}

pub async fn serve(config: ServeConfig) -> Result<()> {
    let store = Store::open_with(&config.database_url, &config.store_options)?;
    let listener = TcpListener::bind(&config.listen)
        .await
        .map_err(|e| Error::internal(format!("cannot listen on {}: {e}", config.listen)))?;
    let address = listener.local_addr().map_err(Error::internal)?;
    // Tests and scripts read this line to find a random port.
    println!("listening on http://{address}");
    tracing::info!(%address, database = %redact(&config.database_url), "hanson serving");
    run(listener, store, config.settings, shutdown_signal()).await?;
    tracing::info!("hanson stopped");
    Ok(())
}

/// Serves on `listener` until `shutdown` completes, then lets in-flight requests finish.
#[tracing::instrument(name = "server", skip_all, level = "debug")]
pub async fn run(
    listener: TcpListener,
    store: Store,
    settings: impl Into<Settings>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let app = api::router(AppState::new(store, settings.into()).await?);
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| Error::internal(format!("server error: {e}")))
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
