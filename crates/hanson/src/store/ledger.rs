//! The double-entry ledger: every balance change is one transfer row between two accounts
//! (or the outside world), applied to both balances in the same transaction.

use super::sql::{Conn, Param};
use crate::error::{Error, Result};

pub fn wallet_account(wallet_id: &str, token_id: &str) -> String {
    format!("wallet:{wallet_id}:{token_id}")
}

pub fn treasury_account(provider_id: &str, token_id: &str) -> String {
    format!("treasury:{provider_id}:{token_id}")
}

pub fn pool_account(market_id: &str) -> String {
    format!("pool:{market_id}")
}

pub fn platform_account(token_id: &str) -> String {
    format!("platform:{token_id}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Wallet,
    Treasury,
    Pool,
    Platform,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Wallet => "wallet",
            Kind::Treasury => "treasury",
            Kind::Pool => "pool",
            Kind::Platform => "platform",
        }
    }
}

/// An account named by its id, created with a zero balance on first use.
pub struct Account<'a> {
    pub id: &'a str,
    pub kind: Kind,
    pub owner_id: Option<&'a str>,
}

/// Why a transfer could not happen; callers map it to their own error code.
#[derive(Debug)]
pub enum TransferError {
    Insufficient { balance: u128 },
    Overflow,
    Store(Error),
}

impl From<Error> for TransferError {
    fn from(e: Error) -> Self {
        TransferError::Store(e)
    }
}

pub fn balance(c: &mut dyn Conn, account_id: &str) -> Result<u128> {
    match c.query_opt("SELECT balance FROM accounts WHERE id = $1", &[Param::Text(account_id)])? {
        Some(row) => row.money(0),
        None => Ok(0),
    }
}

fn ensure_account(c: &mut dyn Conn, account: &Account<'_>, token_id: &str) -> Result<u128> {
    let lock = c.lock_clause();
    let sql = format!("SELECT balance FROM accounts WHERE id = $1{lock}");
    if let Some(row) = c.query_opt(&sql, &[Param::Text(account.id)])? {
        return row.money(0);
    }
    c.exec(
        "INSERT INTO accounts (id, kind, owner_id, token_id, balance) VALUES ($1, $2, $3, $4, $5)",
        &[
            Param::Text(account.id),
            Param::Text(account.kind.as_str()),
            account.owner_id.into(),
            Param::Text(token_id),
            Param::Money(0),
        ],
    )?;
    Ok(0)
}

fn set_balance(c: &mut dyn Conn, account_id: &str, balance: u128) -> Result<()> {
    c.exec(
        "UPDATE accounts SET balance = $1 WHERE id = $2",
        &[Param::Money(balance), Param::Text(account_id)],
    )?;
    Ok(())
}

pub struct Transfer<'a> {
    pub kind: &'a str,
    pub from: Option<Account<'a>>,
    pub to: Option<Account<'a>>,
    pub token_id: &'a str,
    pub amount: u128,
    pub reference_id: Option<&'a str>,
    pub at: i64,
}

/// Applies one transfer. Returns (from balance after, to balance after); an absent side is 0.
/// A zero amount records nothing.
pub fn transfer(c: &mut dyn Conn, t: Transfer<'_>) -> Result<(u128, u128), TransferError> {
    let from_after = match &t.from {
        Some(from) => {
            let before = ensure_account(c, from, t.token_id)?;
            let after = before
                .checked_sub(t.amount)
                .ok_or(TransferError::Insufficient { balance: before })?;
            if t.amount > 0 {
                set_balance(c, from.id, after)?;
            }
            after
        }
        None => 0,
    };
    let to_after = match &t.to {
        Some(to) => {
            let before = ensure_account(c, to, t.token_id)?;
            let after = before.checked_add(t.amount).ok_or(TransferError::Overflow)?;
            if t.amount > 0 {
                set_balance(c, to.id, after)?;
            }
            after
        }
        None => 0,
    };
    if t.amount > 0 {
        c.exec(
            "INSERT INTO transfers (kind, from_account, to_account, token_id, amount, reference_id, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                Param::Text(t.kind),
                t.from.as_ref().map(|a| a.id).into(),
                t.to.as_ref().map(|a| a.id).into(),
                Param::Text(t.token_id),
                Param::Money(t.amount),
                t.reference_id.into(),
                Param::Int(t.at),
            ],
        )?;
    }
    Ok((from_after, to_after))
}

/// Maps a transfer failure where the paying side is a client's account.
pub fn map_transfer_error(e: TransferError, insufficient_code: &'static str, what: &str) -> Error {
    match e {
        TransferError::Insufficient { balance } => {
            Error::rule(insufficient_code, format!("{what} balance {balance} is too low"))
        }
        TransferError::Overflow => {
            Error::rule("amount_too_large", format!("{what} balance would exceed the supported maximum"))
        }
        TransferError::Store(e) => e,
    }
}
