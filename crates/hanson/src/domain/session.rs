//! Login sessions: a wallet logged in to one provider, and the rules a session lives by.

use super::time::Micros;

#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub provider_id: String,
    pub wallet_id: String,
    pub expires_at: Micros,
    pub revoked: bool,
}

/// An alt-network account key a provider registered for a wallet address.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct AltKey {
    pub wallet_address: String,
    pub key_id: i64,
    pub public_key: String,
    pub sign_algo: String,
    pub hash_algo: String,
    pub revoked: bool,
}
