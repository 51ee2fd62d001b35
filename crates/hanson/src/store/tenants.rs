//! Providers, API keys, tokens, wallets and the money that enters or leaves the system.

use sha2::{Digest, Sha256};

use super::ledger;
use super::sql::{query_as, query_opt_as, Conn, FromRow, Param, Row};
use super::tx::Tx;
use crate::domain::event::Event;
use crate::domain::ids::{ProviderId, WalletId};
use crate::domain::ledger::{treasury_account, wallet_account, Account, Transfer};
use crate::domain::money::Wei;
use crate::domain::tenant::{Balance, Provider, Token, TransferReceipt, Transferred, TreasuryDeposit, Wallet, WalletTransfer};
use crate::domain::time::{Micros, Timestamp};
use crate::error::{Error, Result};

pub(crate) fn create_provider(c: &mut dyn Conn, id: &str, name: &str, key_hash: &[u8], now: Micros) -> Result<()> {
    c.exec("INSERT INTO providers (id, name, created_at) VALUES ($1, $2, $3)", &[Param::Text(id), Param::Text(name), Param::Int(now)])?;
    c.exec(
        "INSERT INTO api_keys (key_hash, provider_id, created_at) VALUES ($1, $2, $3)",
        &[Param::Blob(key_hash), Param::Text(id), Param::Int(now)],
    )?;
    Ok(())
}

/// Replaces the provider's key; the old one stops working with this commit.
pub(crate) fn rotate_key(c: &mut dyn Conn, provider_id: &str, key_hash: &[u8], now: Micros) -> Result<()> {
    if provider(c, provider_id)?.is_none() {
        return Err(Error::NotFound);
    }
    c.exec("DELETE FROM api_keys WHERE provider_id = $1", &[Param::Text(provider_id)])?;
    c.exec(
        "INSERT INTO api_keys (key_hash, provider_id, created_at) VALUES ($1, $2, $3)",
        &[Param::Blob(key_hash), Param::Text(provider_id), Param::Int(now)],
    )?;
    Ok(())
}

pub(crate) fn provider_count(c: &mut dyn Conn) -> Result<i64> {
    c.query_one("SELECT count(*) FROM providers", &[])?.int(0)
}

/// Every provider, oldest first.
pub(crate) fn providers(c: &mut dyn Conn) -> Result<Vec<Provider>> {
    let rows = c.query("SELECT id, name FROM providers ORDER BY created_at, id", &[])?;
    rows.iter().map(|r| Ok(Provider { id: r.text(0)?.into(), name: r.text(1)? })).collect()
}

pub(crate) fn provider(c: &mut dyn Conn, id: &str) -> Result<Option<Provider>> {
    let row = c.query_opt("SELECT id, name FROM providers WHERE id = $1", &[Param::Text(id)])?;
    row.map(|r| Ok(Provider { id: r.text(0)?.into(), name: r.text(1)? })).transpose()
}

/// The provider whose key hashes to `key_hash`, with the stored hash for a constant-time check.
pub(crate) fn provider_by_key_hash(c: &mut dyn Conn, key_hash: &[u8]) -> Result<Option<(Provider, Vec<u8>)>> {
    let row = c.query_opt(
        "SELECT p.id, p.name, k.key_hash FROM api_keys k JOIN providers p ON p.id = k.provider_id WHERE k.key_hash = $1",
        &[Param::Blob(key_hash)],
    )?;
    row.map(|r| Ok((Provider { id: r.text(0)?.into(), name: r.text(1)? }, r.blob(2)?))).transpose()
}

pub(crate) fn create_token(c: &mut dyn Conn, token: &Token, now: Micros) -> Result<()> {
    c.exec(
        "INSERT INTO tokens (id, symbol, name, decimals, created_at) VALUES ($1, $2, $3, $4, $5)",
        &[Param::Text(&token.id), Param::Text(&token.symbol), Param::Text(&token.name), Param::Int(token.decimals), Param::Int(now)],
    )?;
    Ok(())
}

impl FromRow for Token {
    fn from_row(r: &Row) -> Result<Token> {
        Ok(Token { id: r.text(0)?, symbol: r.text(1)?, name: r.text(2)?, decimals: r.int(3)? })
    }
}

pub(crate) fn tokens(c: &mut dyn Conn) -> Result<Vec<Token>> {
    query_as(c, "SELECT id, symbol, name, decimals FROM tokens ORDER BY symbol, id", &[])
}

pub(crate) fn token(c: &mut dyn Conn, id: &str) -> Result<Option<Token>> {
    query_opt_as(c, "SELECT id, symbol, name, decimals FROM tokens WHERE id = $1", &[Param::Text(id)])
}

impl FromRow for Wallet {
    fn from_row(r: &Row) -> Result<Wallet> {
        Ok(Wallet {
            wallet_id: r.text(0)?.into(),
            provider_id: r.text(1)?.into(),
            wallet_address: r.text(2)?,
            wallet_type: r.text(3)?,
            alt_evm_address: r.opt_text(4)?,
            created_at: r.int(5)?,
        })
    }
}

const WALLET_COLUMNS: &str = "id, provider_id, address, wallet_type, alt_evm_address, created_at";

pub(crate) fn wallet_by_address(c: &mut dyn Conn, provider_id: &str, address: &str) -> Result<Option<Wallet>> {
    let sql = format!("SELECT {WALLET_COLUMNS} FROM wallets WHERE provider_id = $1 AND address = $2");
    query_opt_as(c, &sql, &[Param::Text(provider_id), Param::Text(address)])
}

pub(crate) fn wallet_by_id(c: &mut dyn Conn, wallet_id: &str) -> Result<Option<Wallet>> {
    let sql = format!("SELECT {WALLET_COLUMNS} FROM wallets WHERE id = $1");
    query_opt_as(c, &sql, &[Param::Text(wallet_id)])
}

/// The wallet for (provider, lower-cased address), created if missing.
pub(crate) fn ensure_wallet(
    c: &mut dyn Conn,
    provider_id: &str,
    address: &str,
    wallet_type: &str,
    alt_evm_address: Option<&str>,
    now: Micros,
) -> Result<Wallet> {
    if let Some(w) = wallet_by_address(c, provider_id, address)? {
        return Ok(w);
    }
    let id = crate::domain::ids::new_id();
    c.exec(
        "INSERT INTO wallets (id, provider_id, address, wallet_type, alt_evm_address, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            Param::Text(&id),
            Param::Text(provider_id),
            Param::Text(address),
            Param::Text(wallet_type),
            alt_evm_address.into(),
            Param::Int(now),
        ],
    )?;
    Ok(Wallet {
        wallet_id: id.into(),
        provider_id: provider_id.into(),
        wallet_address: address.to_string(),
        wallet_type: wallet_type.to_string(),
        alt_evm_address: alt_evm_address.map(str::to_string),
        created_at: now,
    })
}

/// Every balance of the accounts of `kind` owned by `owner_id`, with token details.
pub(crate) fn balances(c: &mut dyn Conn, kind: &str, owner_id: &str) -> Result<Vec<Balance>> {
    c.query(
        "SELECT t.id, t.symbol, t.decimals, a.balance FROM accounts a JOIN tokens t ON t.id = a.token_id \
         WHERE a.kind = $1 AND a.owner_id = $2 ORDER BY t.symbol, t.id",
        &[Param::Text(kind), Param::Text(owner_id)],
    )?
    .iter()
    .map(|r| Ok(Balance { token_id: r.text(0)?, symbol: r.text(1)?, decimals: r.int(2)?, balance: Wei(r.money(3)?) }))
    .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExternalKind {
    TreasuryDeposit,
    WalletDeposit,
    WalletWithdrawal,
}

impl ExternalKind {
    fn as_str(self) -> &'static str {
        match self {
            ExternalKind::TreasuryDeposit => "treasury_deposit",
            ExternalKind::WalletDeposit => "wallet_deposit",
            ExternalKind::WalletWithdrawal => "wallet_withdrawal",
        }
    }
}

#[derive(Clone)]
pub(crate) struct ExternalTransfer {
    pub(crate) provider_id: String,
    pub(crate) kind: ExternalKind,
    pub(crate) token_id: String,
    pub(crate) amount: u128,
    pub(crate) reference: String,
    /// Lower-cased; None for treasury deposits.
    pub(crate) wallet_address: Option<String>,
    pub(crate) wallet_type: &'static str,
}

/// A stored response and whether it is a replay of an earlier identical request.
pub(crate) struct Recorded {
    pub(crate) response: TransferReceipt,
    pub(crate) replayed: bool,
}

fn request_hash(t: &ExternalTransfer) -> Vec<u8> {
    let canonical = format!("{}\n{}\n{}\n{}", t.kind.as_str(), t.token_id, t.amount, t.wallet_address.as_deref().unwrap_or(""));
    Sha256::digest(canonical.as_bytes()).to_vec()
}

fn transferred(t: &ExternalTransfer, balance_after: u128, now: Micros) -> Transferred {
    Transferred {
        token_id: t.token_id.clone(),
        amount: Wei(t.amount),
        reference: t.reference.clone(),
        balance_after: Wei(balance_after),
        created_at: Timestamp(now),
    }
}

/// Deposits into a treasury or wallet, or withdraws from a wallet; idempotent by reference.
pub(crate) fn external_transfer(c: &mut Tx<'_>, t: ExternalTransfer, now: Micros) -> Result<Recorded> {
    let hash = request_hash(&t);
    if let Some(row) = c.query_opt(
        "SELECT request_hash, response FROM external_transfers WHERE provider_id = $1 AND kind = $2 AND reference = $3",
        &[Param::Text(&t.provider_id), Param::Text(t.kind.as_str()), Param::Text(&t.reference)],
    )? {
        if row.blob(0)? != hash {
            return Err(Error::conflict("reference_reused", "this reference was already used for a different request"));
        }
        let response = serde_json::from_str(&row.text(1)?).map_err(Error::internal)?;
        return Ok(Recorded { response, replayed: true });
    }
    if token(c, &t.token_id)?.is_none() {
        return Err(Error::rule_on("unknown_token", "token_id", "no such token"));
    }
    let id = crate::domain::ids::new_id();
    let response = match t.kind {
        ExternalKind::TreasuryDeposit => {
            let treasury = treasury_account(&t.provider_id, &t.token_id);
            let deposit = Transfer {
                kind: "treasury_deposit",
                from: None,
                to: Some(Account::treasury(&treasury, &t.provider_id)),
                token_id: &t.token_id,
                amount: t.amount,
                reference_id: Some(&id),
                at: now,
            };
            let (_, balance_after) =
                ledger::transfer(c, deposit).map_err(|e| ledger::client_error(e, "insufficient_treasury", "treasury"))?;
            TransferReceipt::Treasury(TreasuryDeposit { deposit_id: id.clone(), transfer: transferred(&t, balance_after, now) })
        }
        ExternalKind::WalletDeposit | ExternalKind::WalletWithdrawal => {
            let address = t.wallet_address.as_deref().unwrap_or_default();
            let wallet = if t.kind == ExternalKind::WalletDeposit {
                ensure_wallet(c, &t.provider_id, address, t.wallet_type, None, now)?
            } else {
                // Withdrawing from a wallet that never existed: it has no balance.
                wallet_by_address(c, &t.provider_id, address)?
                    .ok_or_else(|| Error::rule("insufficient_balance", "wallet balance 0 is too low"))?
            };
            let account = wallet_account(&wallet.wallet_id, &t.token_id);
            let side = Account::wallet(&account, &wallet.wallet_id);
            let (kind, from, to) = if t.kind == ExternalKind::WalletDeposit {
                ("wallet_deposit", None, Some(side))
            } else {
                ("wallet_withdrawal", Some(side), None)
            };
            let is_deposit = to.is_some();
            let transfer = Transfer { kind, from, to, token_id: &t.token_id, amount: t.amount, reference_id: Some(&id), at: now };
            let (from_after, to_after) =
                ledger::transfer(c, transfer).map_err(|e| ledger::client_error(e, "insufficient_balance", "wallet"))?;
            TransferReceipt::Wallet(WalletTransfer {
                id: id.clone(),
                wallet_id: wallet.wallet_id.to_string(),
                wallet_address: wallet.wallet_address,
                transfer: transferred(&t, if is_deposit { to_after } else { from_after }, now),
            })
        }
    };
    c.exec(
        "INSERT INTO external_transfers (provider_id, kind, reference, request_hash, response) VALUES ($1, $2, $3, $4, $5)",
        &[
            Param::Text(&t.provider_id),
            Param::Text(t.kind.as_str()),
            Param::Text(&t.reference),
            Param::Blob(&hash),
            Param::Text(&serde_json::to_string(&response).map_err(Error::internal)?),
        ],
    )?;
    let wallet_id = match &response {
        TransferReceipt::Wallet(w) => Some(WalletId::from(w.wallet_id.as_str())),
        TransferReceipt::Treasury(_) => None,
    };
    let event = match (t.kind, wallet_id) {
        (ExternalKind::WalletWithdrawal, Some(wallet_id)) => {
            Event::WithdrawalCompleted { receipt: response.clone(), wallet_id, provider_id: ProviderId(t.provider_id.clone()) }
        }
        (_, wallet_id) => Event::DepositCompleted { receipt: response.clone(), wallet_id, provider_id: ProviderId(t.provider_id.clone()) },
    };
    c.emit(event);
    Ok(Recorded { response, replayed: false })
}
