//! Rate limits key on the client behind a trusted proxy (Forwarded / X-Forwarded-For), and
//! on the peer itself when the peer is not trusted: a client cannot pick its own address.

use reqwest::StatusCode;
use serde_json::json;

use super::support::*;

fn settings(trusted: &[&str]) -> Settings {
    Settings {
        limits: Limits { auth_per_ip: Rule { per_second: 0.001, burst: 2.0 }, ..Default::default() },
        trusted_proxies: trusted.iter().map(|t| t.parse().unwrap()).collect(),
        ..Settings::default()
    }
}

async fn nonce(app: &TestApp, header: (&str, &str)) -> StatusCode {
    let body = json!({ "wallet_address": "0x00000000000000000000000000000000000000a1", "provider_id": uuid() });
    let r = app.client.post(format!("{}/v1/auth/nonce", app.base)).header(header.0, header.1).json(&body).send().await.unwrap();
    r.status()
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_client_has_its_own_budget() {
    let app = TestApp::spawn_with(settings(&["127.0.0.0/8"])).await;
    let a = ("x-forwarded-for", "203.0.113.7");
    // The provider is unknown (404), but the request counted against the budget.
    assert_eq!(nonce(&app, a).await, StatusCode::NOT_FOUND);
    assert_eq!(nonce(&app, a).await, StatusCode::NOT_FOUND);
    assert_eq!(nonce(&app, a).await, StatusCode::TOO_MANY_REQUESTS);
    // Another client behind the same proxy is not limited by the first one.
    assert_eq!(nonce(&app, ("x-forwarded-for", "203.0.113.8")).await, StatusCode::NOT_FOUND);
    // RFC 7239, with a port and a proxy chain: the last hop that is not a trusted proxy counts.
    assert_eq!(nonce(&app, ("forwarded", "for=\"[2001:db8::1]:4711\";proto=https, for=127.0.0.9")).await, StatusCode::NOT_FOUND);
    assert_eq!(nonce(&app, ("forwarded", "for=198.51.100.1, for=\"[2001:db8::1]:80\"")).await, StatusCode::NOT_FOUND);
    assert_eq!(nonce(&app, ("forwarded", "for=\"[2001:db8::1]\"")).await, StatusCode::TOO_MANY_REQUESTS);
    // A client naming someone else first cannot escape: the proxy appended its real address.
    assert_eq!(nonce(&app, ("x-forwarded-for", "192.0.2.99, 203.0.113.7")).await, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn from_an_untrusted_peer_forwarding_headers_are_ignored() {
    let app = TestApp::spawn_with(settings(&[])).await;
    for (i, status) in [StatusCode::NOT_FOUND, StatusCode::NOT_FOUND, StatusCode::TOO_MANY_REQUESTS].into_iter().enumerate() {
        let spoofed = format!("198.51.100.{i}");
        assert_eq!(nonce(&app, ("x-forwarded-for", &spoofed)).await, status, "request {i}");
    }
}
