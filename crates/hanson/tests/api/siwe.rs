//! Sign-In with Ethereum (EIP-4361): the opt-in message of `POST /v1/auth/nonce`, and the
//! login's check of its fields. The spec's message stays the default.

use serde_json::{json, Value};

use super::support::library::{format_micros, parse_timestamp, Db, PublicUrl};
use super::support::*;

const PUBLIC_URL: &str = "https://markets.example.com";

async fn app_with_public_url() -> TestApp {
    TestApp::spawn_with(Settings { public_url: Some(PublicUrl::parse(PUBLIC_URL).unwrap()), ..Settings::default() }).await
}

async fn siwe_nonce(app: &TestApp, provider_id: &str, wallet: &TestWallet, chain_id: Option<i64>) -> Value {
    let mut body = json!({ "wallet_address": wallet.address, "provider_id": provider_id, "message_format": "siwe" });
    if let Some(id) = chain_id {
        body["chain_id"] = json!(id);
    }
    let r = app.post("/v1/auth/nonce", None, body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

async fn login_with(app: &TestApp, provider_id: &str, wallet: &TestWallet, nonce: &str, signed: &str, presented: Option<&str>) -> Response {
    let mut body = json!({ "provider_id": provider_id, "wallet_address": wallet.address, "signature": wallet.sign(signed), "nonce": nonce });
    if let Some(message) = presented {
        body["message"] = json!(message);
    }
    app.post("/v1/auth/login", None, body).await
}

fn checksummed(wallet: &TestWallet) -> String {
    let bytes: [u8; 20] = wallet_auth::parse_hex(&wallet.address, true).unwrap().try_into().unwrap();
    wallet_auth::to_checksum_address(&bytes)
}

/// `Issued At` and `Expiration Time` of a message, and the `expires_at` of its grant.
fn times(grant: &Value) -> (String, String) {
    let message = grant["message"].as_str().unwrap();
    let field = |name: &str| message.lines().find_map(|l| l.strip_prefix(name)).unwrap().to_string();
    (field("Issued At: "), field("Expiration Time: "))
}

#[tokio::test]
async fn siwe_messages_name_the_service_and_log_in() {
    let app = app_with_public_url().await;
    let provider = app.create_provider("Acme");
    let wallet = TestWallet::random();
    let grant = siwe_nonce(&app, &provider.id, &wallet, Some(10)).await;
    let nonce = grant["nonce"].as_str().unwrap();
    let (issued_at, expiration) = times(&grant);
    assert_eq!(
        grant["message"],
        format!(
            "markets.example.com wants you to sign in with your Ethereum account:\n{}\n\n\
             Sign in to Hanson. This request does not trigger a blockchain transaction or cost any gas fees.\n\n\
             URI: https://markets.example.com\nVersion: 1\nChain ID: 10\nNonce: {nonce}\nIssued At: {issued_at}\nExpiration Time: {expiration}",
            checksummed(&wallet)
        )
    );
    // Five minutes to the second, and the nonce ends when the message does.
    let (issued, expires) = (parse_time(&issued_at), parse_time(&expiration));
    assert_eq!(expires - issued, 300_000_000);
    assert_eq!(parse_time(grant["expires_at"].as_str().unwrap()), expires);

    let message = grant["message"].as_str().unwrap();
    let r = login_with(&app, &provider.id, &wallet, nonce, message, Some(message)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let session = Session::from_body(&r.body);
    let profile = app.get("/v1/auth/profile", Some(&session.access_token)).await;
    assert_eq!(profile.body["wallet_address"], wallet.address);

    // Without the message in the body the signature is checked against the stored one.
    let grant = siwe_nonce(&app, &provider.id, &wallet, None).await;
    assert!(grant["message"].as_str().unwrap().contains("\nChain ID: 1\n"), "chain 1 by default");
    let r = login_with(&app, &provider.id, &wallet, grant["nonce"].as_str().unwrap(), grant["message"].as_str().unwrap(), None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    // The spec's message was signed, not the SIWE one: no login.
    let grant = siwe_nonce(&app, &provider.id, &wallet, None).await;
    let nonce = grant["nonce"].as_str().unwrap();
    assert_problem(&login_with(&app, &provider.id, &wallet, nonce, &login_message(nonce), None).await, 401, "invalid_signature");
}

fn parse_time(text: &str) -> i64 {
    parse_timestamp(text).unwrap_or_else(|| panic!("not a timestamp: {text}"))
}

#[tokio::test]
async fn tampered_fields_are_refused_and_do_not_burn_the_nonce() {
    let app = app_with_public_url().await;
    let provider = app.create_provider("Acme");
    let wallet = TestWallet::random();
    let grant = siwe_nonce(&app, &provider.id, &wallet, Some(1)).await;
    let nonce = grant["nonce"].as_str().unwrap();
    let message = grant["message"].as_str().unwrap().to_string();
    let (_, expiration) = times(&grant);
    let cases = [
        (message.replace("markets.example.com wants", "markets.example.com.evil.example wants"), "the message's domain is not this service's"),
        (message.replace("URI: https://markets.example.com", "URI: https://evil.example"), "the message's URI is not this service's"),
        (message.replace("Chain ID: 1\n", "Chain ID: 5\n"), "the message's chain ID is not the one issued for this nonce"),
        (message.replace(&checksummed(&wallet), &checksummed(&TestWallet::random())), "the message's address is not the wallet's"),
        (message.replace(&format!("Nonce: {nonce}"), "Nonce: 00000000000000000000000000000000"), "the message's nonce is not this login's"),
        (
            message.replace(&format!("Expiration Time: {expiration}"), "Expiration Time: 2099-01-01T00:00:00Z"),
            "the message has expired or its expiration time was changed",
        ),
        (message.replace("Sign in to Hanson.", "Sign in to Hanson!"), "the message is not the one issued for this nonce"),
        (format!("{message}\nResources:"), "the message is not an EIP-4361 message"),
    ];
    for (tampered, detail) in &cases {
        assert_ne!(tampered, &message);
        // Presented with the signature over it: the field is named.
        let r = login_with(&app, &provider.id, &wallet, nonce, tampered, Some(tampered)).await;
        assert_problem(&r, 401, "invalid_message");
        assert_eq!(r.body["detail"], *detail);
        // Signed but not presented: the signature is not over the issued message.
        let r = login_with(&app, &provider.id, &wallet, nonce, tampered, None).await;
        assert_problem(&r, 401, "invalid_signature");
    }
    // The issued message signed, but a tampered one presented alongside it.
    let r = login_with(&app, &provider.id, &wallet, nonce, &message, Some(&cases[0].0)).await;
    assert_problem(&r, 401, "invalid_message");
    // None of that burned the nonce.
    let r = login_with(&app, &provider.id, &wallet, nonce, &message, Some(&message)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_problem(&login_with(&app, &provider.id, &wallet, nonce, &message, Some(&message)).await, 401, "invalid_nonce");
}

#[tokio::test]
async fn expired_siwe_logins_are_refused() {
    let app = app_with_public_url().await;
    let provider = app.create_provider("Acme");
    let wallet = TestWallet::random();
    let grant = siwe_nonce(&app, &provider.id, &wallet, None).await;
    let nonce = grant["nonce"].as_str().unwrap();
    let message = grant["message"].as_str().unwrap();
    // Age the nonce and its stored message past their five minutes.
    let (issued_at, expiration) = times(&grant);
    let earlier = |text: &str| format!("{}Z", &format_micros(parse_time(text) - 300_000_000)[..19]);
    let aged = message
        .replace(&format!("Issued At: {issued_at}"), &format!("Issued At: {}", earlier(&issued_at)))
        .replace(&format!("Expiration Time: {expiration}"), &format!("Expiration Time: {}", earlier(&expiration)));
    let db = Db::open(&app.database_url);
    db.exec("UPDATE nonces SET expires_at = expires_at - 300000000 WHERE nonce = $1", &[(&nonce.to_string()).into()]).await.unwrap();
    let r = login_with(&app, &provider.id, &wallet, nonce, message, Some(message)).await;
    assert_problem(&r, 401, "invalid_nonce");
    // Even were the nonce still open, the stored message's own expiration stops the login.
    db.exec("UPDATE nonces SET expires_at = expires_at + 600000000, message = $2 WHERE nonce = $1", &[(&nonce.to_string()).into(), (&aged).into()])
        .await
        .unwrap();
    let r = login_with(&app, &provider.id, &wallet, nonce, &aged, Some(&aged)).await;
    assert_problem(&r, 401, "invalid_message");
    assert_eq!(r.body["detail"], "the message has expired or its expiration time was changed");
}

#[tokio::test]
async fn the_spec_message_stays_the_default_and_siwe_is_checked() {
    let app = app_with_public_url().await;
    let provider = app.create_provider("Acme");
    let wallet = TestWallet::random();
    for format in [None, Some("spec")] {
        let mut body = json!({ "wallet_address": wallet.address, "provider_id": provider.id });
        if let Some(f) = format {
            body["message_format"] = json!(f);
        }
        let r = app.post("/v1/auth/nonce", None, body).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let nonce = r.body["nonce"].as_str().unwrap();
        assert_eq!(r.body["message"], login_message(nonce));
        // The spec's message presented as it is, or another text presented with it.
        let r2 = login_with(&app, &provider.id, &wallet, nonce, &login_message(nonce), Some("Sign this: 00")).await;
        assert_problem(&r2, 401, "invalid_message");
        let r2 = login_with(&app, &provider.id, &wallet, nonce, &login_message(nonce), Some(&login_message(nonce))).await;
        assert_eq!(r2.status, 200, "{}", r2.body);
    }
    let alt = json!({ "wallet_address": "0x01cf0e2f2f715450", "provider_id": provider.id, "message_format": "siwe" });
    let r = app.post("/v1/auth/nonce", None, alt).await;
    assert_problem(&r, 422, "validation_failed");
    assert_eq!(r.body["errors"][0]["field"], "message_format");
    for (extra, field) in [
        (json!({ "message_format": "eip4361" }), "message_format"),
        (json!({ "message_format": "siwe", "chain_id": 0 }), "chain_id"),
        (json!({ "chain_id": 1 }), "chain_id"),
    ] {
        let mut body = json!({ "wallet_address": wallet.address, "provider_id": provider.id });
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = app.post("/v1/auth/nonce", None, body).await;
        assert_problem(&r, 422, "validation_failed");
        assert_eq!(r.body["errors"][0]["field"], field, "{}", r.body);
    }
    // A server without a public URL offers only the spec's message.
    let plain = TestApp::spawn().await;
    let provider = plain.create_provider("Acme");
    let r = plain.post("/v1/auth/nonce", None, json!({ "wallet_address": wallet.address, "provider_id": provider.id, "message_format": "siwe" })).await;
    assert_problem(&r, 422, "validation_failed");
    assert_eq!(r.body["errors"], json!([{ "field": "message_format", "message": "siwe needs the server's --public-url, which is not set" }]));
}
