//! Wallets that log in for real: keys, signatures and sessions over HTTP.

use serde_json::{json, Value};

use super::app::{json_of, TestApp};

pub(crate) struct TestWallet {
    pub key: [u8; 32],
    /// Lower-case 0x address.
    pub address: String,
}

impl TestWallet {
    pub(crate) fn random() -> TestWallet {
        loop {
            let key: [u8; 32] = rand_bytes();
            if let Ok(address) = wallet_auth::evm_address_from_private_key(&key) {
                return TestWallet { key, address: format!("0x{}", wallet_auth::to_hex(&address)) };
            }
        }
    }

    pub(crate) fn sign(&self, message: &str) -> String {
        let sig = wallet_auth::sign_personal(&self.key, message.as_bytes()).unwrap();
        format!("0x{}", wallet_auth::to_hex(&sig))
    }
}

pub(crate) fn rand_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(16) {
        let bytes = uuid::Uuid::new_v4().into_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    out
}

#[derive(Clone, Debug)]
pub(crate) struct Session {
    pub access_token: String,
    pub refresh_token: String,
    pub session_id: String,
}

impl Session {
    pub(crate) fn from_body(body: &Value) -> Session {
        Session {
            access_token: body["access_token"].as_str().expect("access_token").to_string(),
            refresh_token: body["refresh_token"].as_str().expect("refresh_token").to_string(),
            session_id: body["session_id"].as_str().expect("session_id").to_string(),
        }
    }
}

pub(crate) async fn request_nonce(app: &TestApp, provider_id: &str, address: &str) -> String {
    let r = app.post("/v1/auth/nonce", None, json!({ "wallet_address": address, "provider_id": provider_id })).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["nonce"].as_str().unwrap().to_string()
}

pub(crate) fn login_message(nonce: &str) -> String {
    format!("Sign this message to authenticate with nonce: {nonce}")
}

/// nonce -> personal_sign -> login.
pub(crate) async fn login(app: &TestApp, provider_id: &str, wallet: &TestWallet) -> Session {
    let nonce = request_nonce(app, provider_id, &wallet.address).await;
    let r = app
        .post("/v1/auth/login", None, json!({
            "provider_id": provider_id,
            "wallet_address": wallet.address,
            "signature": wallet.sign(&login_message(&nonce)),
            "nonce": nonce,
        }))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    Session::from_body(&r.body)
}

/// nonce -> personal_sign -> login against the server at `base` (another node, a `hanson
/// serve` process); the answers are checked against the OpenAPI document.
pub(crate) async fn login_at(client: &reqwest::Client, base: &str, provider_id: &str, wallet: &TestWallet) -> Session {
    let nonce = json_of(client.post(format!("{base}/v1/auth/nonce")).json(&json!({ "wallet_address": wallet.address, "provider_id": provider_id }))).await;
    let nonce = nonce["nonce"].as_str().unwrap_or_else(|| panic!("no nonce: {nonce}"));
    let login = json!({ "provider_id": provider_id, "wallet_address": wallet.address, "signature": wallet.sign(&login_message(nonce)), "nonce": nonce });
    let body = json_of(client.post(format!("{base}/v1/auth/login")).json(&login)).await;
    Session::from_body(&body)
}
