//! Tenants and what they hold: providers, the tokens markets are denominated in, wallets
//! and their balances.

use serde::{Deserialize, Serialize};

use super::ids::{ProviderId, WalletId};
use super::money::Wei;
use super::time::{self, Micros, Timestamp};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Provider {
    pub id: ProviderId,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Token {
    pub id: String,
    pub symbol: String,
    pub name: String,
    pub decimals: i64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Balance {
    pub token_id: String,
    pub symbol: String,
    pub decimals: i64,
    pub balance: Wei,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Wallet {
    pub wallet_id: WalletId,
    pub provider_id: ProviderId,
    pub wallet_address: String,
    pub wallet_type: String,
    pub alt_evm_address: Option<String>,
    #[serde(serialize_with = "time::serialize")]
    pub created_at: Micros,
}

/// What every transfer's receipt says: the token, the amount, the caller's reference, the
/// balance it left and when.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Transferred {
    pub token_id: String,
    pub amount: Wei,
    pub reference: String,
    pub balance_after: Wei,
    pub created_at: Timestamp,
}

/// A deposit into a provider's treasury.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TreasuryDeposit {
    pub deposit_id: String,
    #[serde(flatten)]
    pub transfer: Transferred,
}

/// A deposit into, or a withdrawal from, a wallet.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WalletTransfer {
    pub id: String,
    pub wallet_id: String,
    pub wallet_address: String,
    #[serde(flatten)]
    pub transfer: Transferred,
}

/// What a transfer answered, kept to answer a replay of its reference the same way.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum TransferReceipt {
    Treasury(TreasuryDeposit),
    Wallet(WalletTransfer),
}
