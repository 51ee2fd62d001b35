use reqwest::StatusCode;
use serde_json::{json, Value};

use super::support::library::{claims_of, forge, Db};
use super::support::*;

const SECRET: &str = "test-secret-for-forging";

async fn app_with_known_secret() -> TestApp {
    TestApp::spawn_with(Settings { jwt_secret: Some(SECRET.into()), ..Settings::default() }).await
}

async fn login_body(app: &TestApp, provider_id: &str, wallet: &TestWallet, nonce: &str, signature: &str) -> Response {
    app.post("/v1/auth/login", None, json!({
        "provider_id": provider_id, "wallet_address": wallet.address, "signature": signature, "nonce": nonce,
    }))
    .await
}

#[tokio::test]
async fn full_flow_nonce_login_profile_refresh_logout() {
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let token = app.create_token("USDC");
    let wallet = TestWallet::random();
    app.fund_wallet(&provider, &token, &wallet.address, 1234).await;

    let r = app.post("/v1/auth/nonce", None, json!({ "wallet_address": wallet.address, "provider_id": provider.id })).await;
    assert_eq!(r.status, StatusCode::OK);
    let nonce = r.body["nonce"].as_str().unwrap().to_string();
    assert!(nonce.len() >= 32, "at least 128 bits");
    assert_eq!(r.body["message"], login_message(&nonce));
    assert!(r.body["expires_at"].as_str().unwrap().ends_with('Z'));

    let r = login_body(&app, &provider.id, &wallet, &nonce, &wallet.sign(&login_message(&nonce))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["token_type"], "Bearer");
    assert_eq!(r.body["expires_in"], 604_800);
    let session = Session::from_body(&r.body);
    assert_eq!(session.access_token.split('.').count(), 3);

    let p = app.get("/v1/auth/profile", Some(&session.access_token)).await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    assert_eq!(p.body["wallet_address"], wallet.address);
    assert_eq!(p.body["wallet_type"], "evm");
    assert_eq!(p.body["alt_evm_address"], Value::Null);
    assert_eq!(p.body["provider_id"], provider.id);
    assert_eq!(p.body["session_id"], session.session_id);
    assert_eq!(p.body["balances"], json!([{ "token_id": token, "symbol": "USDC", "decimals": 18, "balance": "1234" }]));
    assert!(p.body["wallet_id"].is_string() && p.body["created_at"].is_string());

    let r = app.post("/v1/auth/refresh", None, json!({ "refresh_token": session.refresh_token, "provider_id": provider.id })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let refreshed = Session::from_body(&r.body);
    assert_eq!(refreshed.session_id, session.session_id, "refresh keeps the session");
    assert_ne!(refreshed.refresh_token, session.refresh_token, "refresh rotates the token");
    assert_eq!(r.body["token_type"], "Bearer");
    assert_eq!(app.get("/v1/auth/profile", Some(&refreshed.access_token)).await.status, StatusCode::OK);

    let out = app.post("/v1/auth/logout", Some(&refreshed.access_token), json!({})).await;
    assert_eq!(out.status, StatusCode::OK);
    assert_eq!(out.body["message"], "Logged out");
    for token in [&refreshed.access_token, &session.access_token] {
        assert_problem(&app.get("/v1/auth/profile", Some(token)).await, 401, "unauthenticated");
    }
    let again = app.post("/v1/auth/refresh", None, json!({ "refresh_token": refreshed.refresh_token, "provider_id": provider.id })).await;
    assert_problem(&again, 401, "unauthenticated");
}

#[tokio::test]
async fn the_same_wallet_logs_in_again_into_the_same_wallet() {
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let wallet = TestWallet::random();
    let a = login(&app, &provider.id, &wallet).await;
    let b = login(&app, &provider.id, &wallet).await;
    assert_ne!(a.session_id, b.session_id);
    let pa = app.get("/v1/auth/profile", Some(&a.access_token)).await.body;
    let pb = app.get("/v1/auth/profile", Some(&b.access_token)).await.body;
    assert_eq!(pa["wallet_id"], pb["wallet_id"]);
    // A checksummed address is the same wallet.
    let checksummed = wallet_auth::to_checksum_address(&wallet_auth::parse_evm_address(&wallet.address).unwrap());
    let nonce = request_nonce(&app, &provider.id, &checksummed).await;
    let r = app.post("/v1/auth/login", None, json!({ "provider_id": provider.id, "wallet_address": checksummed, "signature": wallet.sign(&login_message(&nonce)), "nonce": nonce })).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let pc = app.get("/v1/auth/profile", Some(r.body["access_token"].as_str().unwrap())).await.body;
    assert_eq!(pc["wallet_id"], pa["wallet_id"]);
}

/// s' = n - s for secp256k1, big-endian.
fn high_s_twin(signature_hex: &str) -> String {
    const N: [u8; 32] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,
        0xBA, 0xAE, 0xDC, 0xE6, 0xAF, 0x48, 0xA0, 0x3B, 0xBF, 0xD2, 0x5E, 0x8C, 0xD0, 0x36, 0x41, 0x41,
    ];
    let mut sig = wallet_auth::parse_hex(signature_hex, true).unwrap();
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let d = i16::from(N[i]) - i16::from(sig[32 + i]) - borrow;
        borrow = i16::from(d < 0);
        sig[32 + i] = (d + 256 * borrow) as u8;
    }
    sig[64] = if sig[64] == 27 { 28 } else { 27 };
    format!("0x{}", wallet_auth::to_hex(&sig))
}

#[tokio::test]
async fn login_attacks_fail_and_do_not_burn_the_nonce() {
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let other_provider = app.create_provider("Other");
    let wallet = TestWallet::random();
    let intruder = TestWallet::random();
    let nonce = request_nonce(&app, &provider.id, &wallet.address).await;
    let good = wallet.sign(&login_message(&nonce));

    // Wrong signer.
    let r = login_body(&app, &provider.id, &wallet, &nonce, &intruder.sign(&login_message(&nonce))).await;
    assert_problem(&r, 401, "invalid_signature");
    // High-s twin of the valid signature.
    let r = login_body(&app, &provider.id, &wallet, &nonce, &high_s_twin(&good)).await;
    assert_problem(&r, 401, "invalid_signature");
    // Signature over another message.
    let r = login_body(&app, &provider.id, &wallet, &nonce, &wallet.sign("Sign this message to authenticate with nonce: other")).await;
    assert_problem(&r, 401, "invalid_signature");
    // Malformed signatures are 422 (not hex, or the wrong length).
    let r = login_body(&app, &provider.id, &wallet, &nonce, &good[..good.len() - 2]).await;
    assert_field_error(&r, "signature");
    let r = login_body(&app, &provider.id, &wallet, &nonce, &good.replace("0x", "0xzz")[..132]).await;
    assert_field_error(&r, "signature");
    // The nonce is for another provider / another address.
    let r = login_body(&app, &other_provider.id, &wallet, &nonce, &good).await;
    assert_problem(&r, 401, "invalid_nonce");
    let intruder_nonce_use = app.post("/v1/auth/login", None, json!({
        "provider_id": provider.id, "wallet_address": intruder.address, "signature": intruder.sign(&login_message(&nonce)), "nonce": nonce,
    })).await;
    assert_problem(&intruder_nonce_use, 401, "invalid_nonce");
    let unknown = login_body(&app, &provider.id, &wallet, "00112233445566778899aabbccddeeff", &wallet.sign(&login_message("00112233445566778899aabbccddeeff"))).await;
    assert_problem(&unknown, 401, "invalid_nonce");

    // None of that burned the nonce: the real login works once, and its replay fails.
    let r = login_body(&app, &provider.id, &wallet, &nonce, &good).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let replay = login_body(&app, &provider.id, &wallet, &nonce, &good).await;
    assert_problem(&replay, 401, "invalid_nonce");
}

#[tokio::test]
async fn expired_nonces_are_refused() {
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let wallet = TestWallet::random();
    let nonce = request_nonce(&app, &provider.id, &wallet.address).await;
    // Age the nonce past its five minutes.
    let db = Db::open(&app.database_url);
    db.exec("UPDATE nonces SET expires_at = expires_at - 300000001 WHERE nonce = $1", &[(&nonce).into()]).await.unwrap();
    let r = login_body(&app, &provider.id, &wallet, &nonce, &wallet.sign(&login_message(&nonce))).await;
    assert_problem(&r, 401, "invalid_nonce");
}

#[tokio::test]
async fn nonce_requests_are_validated() {
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let r = app.post("/v1/auth/nonce", None, json!({ "wallet_address": "0x0000000000000000000000000000000000000001", "provider_id": uuid() })).await;
    assert_problem(&r, 404, "not_found");
    let r = app.post("/v1/auth/nonce", None, json!({ "wallet_address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "provider_id": provider.id })).await;
    assert_field_error(&r, "wallet_address");
    let r = app.post("/v1/auth/nonce", None, json!({ "wallet_address": "0x01", "provider_id": "not-a-uuid" })).await;
    assert_field_error(&r, "provider_id");
    assert_field_error(&r, "wallet_address");
}

#[tokio::test]
async fn token_attacks_are_401() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let app = app_with_known_secret().await;
    let provider = app.create_provider("Acme");
    let other = app.create_provider("Other");
    let wallet = TestWallet::random();
    let session = login(&app, &provider.id, &wallet).await;
    let claims = claims_of(&session.access_token);
    assert_eq!(claims.aud, provider.id);
    assert_eq!(claims.sid, session.session_id);
    assert_eq!(claims.iss, "hanson");
    assert_eq!(claims.exp - claims.iat, 604_800);
    assert_eq!(forge(&claims, SECRET), forge(&claims, SECRET), "sanity: forging reproduces the format");
    assert_eq!(app.get("/v1/auth/profile", Some(&forge(&claims, SECRET))).await.status, StatusCode::OK, "the known secret is in use");

    let parts: Vec<&str> = session.access_token.split('.').collect();
    let mut tampered_claims = claims.clone();
    tampered_claims.sub = uuid();
    let tampered = format!("{}.{}.{}", parts[0], b64.encode(serde_json::to_vec(&tampered_claims).unwrap()), parts[2]);
    let alg_none = format!("{}.{}.", b64.encode(br#"{"alg":"none","typ":"JWT"}"#), parts[1]);
    let other_secret = forge(&claims, "another-secret");
    let mut expired_claims = claims.clone();
    expired_claims.exp = expired_claims.iat - 1;
    let expired = forge(&expired_claims, SECRET);
    let mut wrong_aud = claims.clone();
    wrong_aud.aud = other.id.clone();
    let wrong_audience = forge(&wrong_aud, SECRET);
    let mut wrong_sub = claims.clone();
    wrong_sub.sub = uuid();
    let wrong_subject = forge(&wrong_sub, SECRET);
    for (name, token) in [
        ("tampered payload", tampered),
        ("alg none", alg_none),
        ("other secret", other_secret),
        ("expired", expired),
        ("wrong audience", wrong_audience),
        ("wrong subject", wrong_subject),
        ("garbage", "not.a.jwt".to_string()),
        ("api key on a user route", provider.key.clone()),
    ] {
        let r = app.get("/v1/auth/profile", Some(&token)).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{name}");
        assert_problem(&r, 401, "unauthenticated");
    }
    assert_problem(&app.get("/v1/auth/profile", None).await, 401, "unauthenticated");
    // A JWT on a provider route.
    assert_problem(&app.get("/v1/providers/treasury", Some(&session.access_token)).await, 401, "unauthenticated");
    // The real token still works: nothing above changed the session.
    assert_eq!(app.get("/v1/auth/profile", Some(&session.access_token)).await.status, StatusCode::OK);
}

#[tokio::test]
async fn refresh_token_reuse_revokes_the_session() {
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let other = app.create_provider("Other");
    let wallet = TestWallet::random();
    let session = login(&app, &provider.id, &wallet).await;

    let wrong_provider = app.post("/v1/auth/refresh", None, json!({ "refresh_token": session.refresh_token, "provider_id": other.id })).await;
    assert_problem(&wrong_provider, 401, "unauthenticated");
    // The wrong-provider attempt did not spend the token.
    let first = app.post("/v1/auth/refresh", None, json!({ "refresh_token": session.refresh_token, "provider_id": provider.id })).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let rotated = Session::from_body(&first.body);

    let reuse = app.post("/v1/auth/refresh", None, json!({ "refresh_token": session.refresh_token, "provider_id": provider.id })).await;
    assert_problem(&reuse, 401, "unauthenticated");
    // Reuse revoked the whole session: the rotated tokens are dead too.
    assert_problem(&app.get("/v1/auth/profile", Some(&rotated.access_token)).await, 401, "unauthenticated");
    let after = app.post("/v1/auth/refresh", None, json!({ "refresh_token": rotated.refresh_token, "provider_id": provider.id })).await;
    assert_problem(&after, 401, "unauthenticated");
    let garbage = app.post("/v1/auth/refresh", None, json!({ "refresh_token": "nope", "provider_id": provider.id })).await;
    assert_problem(&garbage, 401, "unauthenticated");
}

struct AltAccount {
    address: &'static str,
    evm: &'static str,
    key: [u8; 32],
}

async fn alt_login(app: &TestApp, provider: &Provider, account: &AltAccount, key_id: i64, sign_algo: wallet_auth::SignAlgo, hash_algo: wallet_auth::HashAlgo) -> Response {
    let nonce = request_nonce(app, &provider.id, account.address).await;
    let (sig, _) = wallet_auth::sign_alt(&account.key, sign_algo, hash_algo, login_message(&nonce).as_bytes()).unwrap();
    app.post("/v1/auth/login", None, json!({
        "provider_id": provider.id,
        "wallet_address": account.address,
        "signature": wallet_auth::to_hex(&sig),
        "nonce": nonce,
        "wallet_type": "alt",
        "alt_evm_address": account.evm,
        "key_id": key_id,
    }))
    .await
}

#[tokio::test]
async fn alt_network_login_uses_the_provider_key_registry() {
    use wallet_auth::{HashAlgo, SignAlgo};
    let app = TestApp::spawn().await;
    let provider = app.create_provider("Acme");
    let account = AltAccount { address: "0x01cf0e2f2f715450", evm: "0x00000000000000000000000201cf0e2f2f715450", key: [7u8; 32] };

    // Unknown key: 401.
    let r = alt_login(&app, &provider, &account, 0, SignAlgo::P256, HashAlgo::Sha3_256).await;
    assert_problem(&r, 401, "invalid_signature");

    for (key_id, sign_algo, hash_algo) in [(0, SignAlgo::P256, HashAlgo::Sha3_256), (1, SignAlgo::Secp256k1, HashAlgo::Sha2_256)] {
        let (_, public_key) = wallet_auth::sign_alt(&account.key, sign_algo, hash_algo, b"x").unwrap();
        let put = app
            .put(&format!("/v1/providers/alt-keys/{}/{key_id}", account.address), Some(&provider.key), json!({
                "public_key": wallet_auth::to_hex(&public_key), "sign_algo": sign_algo.as_str(), "hash_algo": hash_algo.as_str(), "revoked": false,
            }))
            .await;
        assert_eq!(put.status, StatusCode::OK, "{}", put.body);
        assert_eq!(put.body, json!({
            "wallet_address": account.address, "key_id": key_id, "public_key": wallet_auth::to_hex(&public_key),
            "sign_algo": sign_algo.as_str(), "hash_algo": hash_algo.as_str(), "revoked": false,
        }));
        let r = alt_login(&app, &provider, &account, key_id, sign_algo, hash_algo).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let profile = app.get("/v1/auth/profile", Some(r.body["access_token"].as_str().unwrap())).await.body;
        assert_eq!(profile["wallet_type"], "alt");
        assert_eq!(profile["wallet_address"], account.address);
        assert_eq!(profile["alt_evm_address"], account.evm);
        // Signing with the other key's algorithms fails.
        let mismatched = alt_login(&app, &provider, &account, key_id, sign_algo, if hash_algo == HashAlgo::Sha2_256 { HashAlgo::Sha3_256 } else { HashAlgo::Sha2_256 }).await;
        assert_problem(&mismatched, 401, "invalid_signature");
    }

    // Revoke key 0: its logins fail from then on.
    let (_, public_key) = wallet_auth::sign_alt(&account.key, SignAlgo::P256, HashAlgo::Sha3_256, b"x").unwrap();
    let revoke = app
        .put(&format!("/v1/providers/alt-keys/{}/0", account.address), Some(&provider.key), json!({
            "public_key": wallet_auth::to_hex(&public_key), "sign_algo": "ECDSA_P256", "hash_algo": "SHA3_256", "revoked": true,
        }))
        .await;
    assert_eq!(revoke.body["revoked"], true);
    let r = alt_login(&app, &provider, &account, 0, SignAlgo::P256, HashAlgo::Sha3_256).await;
    assert_problem(&r, 401, "invalid_signature");

    let bad = app.put(&format!("/v1/providers/alt-keys/{}/0", account.address), Some(&provider.key), json!({ "public_key": "abc", "sign_algo": "RSA", "hash_algo": "MD5" })).await;
    assert_field_error(&bad, "public_key");
    assert_field_error(&bad, "sign_algo");
    assert_field_error(&bad, "hash_algo");
    let evm_path = app.put("/v1/providers/alt-keys/0x0000000000000000000000000000000000000001/0", Some(&provider.key), json!({ "public_key": wallet_auth::to_hex(&public_key), "sign_algo": "ECDSA_P256", "hash_algo": "SHA3_256" })).await;
    assert_field_error(&evm_path, "wallet_address");
    let no_key = app.put(&format!("/v1/providers/alt-keys/{}/0", account.address), None, json!({})).await;
    assert_problem(&no_key, 401, "unauthenticated");
}
