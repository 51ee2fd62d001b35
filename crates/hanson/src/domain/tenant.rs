//! Tenants and what they hold: providers, the tokens markets are denominated in, wallets
//! and their balances.

use serde::{Deserialize, Serialize};

use super::ids::{ProviderId, WalletId};
use super::money::Wei;
use super::time::{self, Micros, Timestamp};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Provider {
    pub(crate) id: ProviderId,
    pub(crate) name: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub(crate) struct Token {
    pub(crate) id: String,
    pub(crate) symbol: String,
    pub(crate) name: String,
    pub(crate) decimals: i64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Balance {
    pub(crate) token_id: String,
    pub(crate) symbol: String,
    pub(crate) decimals: i64,
    pub(crate) balance: Wei,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Wallet {
    pub(crate) wallet_id: WalletId,
    pub(crate) provider_id: ProviderId,
    pub(crate) wallet_address: String,
    pub(crate) wallet_type: String,
    pub(crate) alt_evm_address: Option<String>,
    #[serde(serialize_with = "time::serialize")]
    pub(crate) created_at: Micros,
}

/// What every transfer's receipt says: the token, the amount, the caller's reference, the
/// balance it left and when.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct Transferred {
    pub(crate) token_id: String,
    pub(crate) amount: Wei,
    pub(crate) reference: String,
    pub(crate) balance_after: Wei,
    pub(crate) created_at: Timestamp,
}

/// A deposit into a provider's treasury.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct TreasuryDeposit {
    pub(crate) deposit_id: String,
    #[serde(flatten)]
    pub(crate) transfer: Transferred,
}

/// A deposit into, or a withdrawal from, a wallet.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct WalletTransfer {
    pub(crate) id: String,
    pub(crate) wallet_id: String,
    pub(crate) wallet_address: String,
    #[serde(flatten)]
    pub(crate) transfer: Transferred,
}

/// What a transfer answered, kept to answer a replay of its reference the same way.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub(crate) enum TransferReceipt {
    Treasury(TreasuryDeposit),
    Wallet(WalletTransfer),
}
