//! Credentials: provider API keys (wallet login and sessions live beside them).

/// API keys are `hk_` followed by 64 hex digits (256 random bits).
pub mod jwt;

pub(crate) const API_KEY_PREFIX: &str = "hk_";

pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes
}

/// A new API key; only its hash is ever stored.
pub(crate) fn generate_api_key() -> String {
    format!("{API_KEY_PREFIX}{}", wallet_auth::to_hex(&random_bytes::<32>()))
}
