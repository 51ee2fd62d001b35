//! The double-entry ledger: every balance change is one transfer row between two accounts
//! (or the outside world), applied to both balances in the same transaction.

use crate::domain::event::Event;
use super::sql::{id_list, value_rows, Conn, Param, Row};
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
#[derive(Clone)]
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

/// The balances of the accounts that exist among `ids` (distinct), locked, in one statement.
pub fn stored_balances(c: &mut dyn Conn, ids: &[&str]) -> Result<Vec<(String, u128)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let (sql, params) = stored_balances_read(c, ids);
    balances_from(&c.query(&sql, &params)?)
}

/// The statement of [`stored_balances`] (`ids` not empty), for a batch of reads.
pub fn stored_balances_read<'a>(c: &dyn Conn, ids: &'a [&'a str]) -> (String, Vec<Param<'a>>) {
    let (list, params) = id_list(ids);
    // Locked in id order, so two transactions that lock overlapping accounts cannot each hold
    // one the other waits for (PostgreSQL locks rows as the sorted rows leave the sort).
    let lock = c.lock_clause();
    let order = if lock.is_empty() { "" } else { " ORDER BY id" };
    (format!("SELECT id, balance FROM accounts WHERE id IN ({list}){order}{lock}"), params)
}

pub fn balances_from(rows: &[Row]) -> Result<Vec<(String, u128)>> {
    rows.iter().map(|row| Ok((row.text(0)?, row.money(1)?))).collect()
}

fn create_account(c: &mut dyn Conn, account: &Account<'_>, token_id: &str, balance: u128) -> Result<()> {
    c.exec(
        "INSERT INTO accounts (id, kind, owner_id, token_id, balance) VALUES ($1, $2, $3, $4, $5)",
        &[
            Param::Text(account.id),
            Param::Text(account.kind.as_str()),
            account.owner_id.into(),
            Param::Text(token_id),
            Param::Money(balance),
        ],
    )?;
    Ok(())
}

/// Deferred where the connection defers writes: until the transaction ends, the balance is
/// read back only from the kept rows (see `hot`).
pub fn set_balance(c: &mut dyn Conn, account_id: &str, balance: u128) -> Result<()> {
    c.exec_later("UPDATE accounts SET balance = $1 WHERE id = $2", &[Param::Money(balance), Param::Text(account_id)])
}

/// Sets many balances in one statement (see `hot::flush`).
pub fn set_balances(c: &mut dyn Conn, balances: &[(String, u128)]) -> Result<()> {
    if balances.is_empty() {
        return Ok(());
    }
    let mut params: Vec<Param<'_>> = Vec::with_capacity(balances.len() * 2);
    for (id, balance) in balances {
        params.extend([Param::Text(id), Param::Money(*balance)]);
    }
    let sql = format!(
        "WITH v(id, balance) AS (VALUES {}) UPDATE accounts SET balance = v.balance FROM v WHERE accounts.id = v.id",
        value_rows(balances.len(), 2)
    );
    c.exec_later(&sql, &params)
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

/// Balances of the accounts a batch of transfers touched: before and after, per account.
#[derive(Debug, Default)]
pub struct Touched(Vec<TouchedAccount>);

#[derive(Debug)]
struct TouchedAccount {
    id: String,
    before: u128,
    after: u128,
    /// Kind, owner and token of an account not stored yet; it is created with `after`.
    new: Option<(Kind, Option<String>, String)>,
}

impl Touched {
    fn get(&self, account_id: &str) -> Option<&TouchedAccount> {
        self.0.iter().find(|t| t.id == account_id)
    }

    pub fn before(&self, account_id: &str) -> u128 {
        self.get(account_id).map_or(0, |t| t.before)
    }

    pub fn after(&self, account_id: &str) -> u128 {
        self.get(account_id).map_or(0, |t| t.after)
    }
}

/// Applies transfers in order, as if one after another (each debit must be covered by the
/// account's running balance), but reads and writes each account once and records all
/// transfer rows in one statement. Zero amounts record nothing. Every check comes before
/// the first write, so a refused batch of transfers writes nothing.
pub fn apply(c: &mut dyn Conn, transfers: &[Transfer<'_>]) -> Result<Touched, TransferError> {
    let mut ids: Vec<&str> = Vec::with_capacity(transfers.len() * 2);
    for side in transfers.iter().flat_map(|t| [&t.from, &t.to]).flatten() {
        if !ids.contains(&side.id) {
            ids.push(side.id);
        }
    }
    // Balances this group commit keeps in memory (see `hot`) are read there.
    let kept: Vec<(String, u128)> =
        ids.iter().filter_map(|id| c.hot().and_then(|hot| hot.balance(id)).map(|balance| (id.to_string(), balance))).collect();
    let unkept: Vec<&str> = ids.iter().copied().filter(|id| !kept.iter().any(|(k, _)| k == id)).collect();
    let mut stored = stored_balances(c, &unkept)?;
    stored.extend(kept);
    let mut touched = Touched::default();
    for t in transfers {
        for side in [&t.from, &t.to].into_iter().flatten() {
            if touched.get(side.id).is_none() {
                let stored = stored.iter().find(|(id, _)| id == side.id).map(|(_, balance)| *balance);
                let new = stored.is_none().then(|| (side.kind, side.owner_id.map(str::to_string), t.token_id.to_string()));
                let balance = stored.unwrap_or(0);
                touched.0.push(TouchedAccount { id: side.id.to_string(), before: balance, after: balance, new });
            }
        }
        if let Some(from) = &t.from {
            let entry = touched.0.iter_mut().find(|a| a.id == from.id).expect("touched above");
            entry.after = entry.after.checked_sub(t.amount).ok_or(TransferError::Insufficient { balance: entry.after })?;
        }
        if let Some(to) = &t.to {
            let entry = touched.0.iter_mut().find(|a| a.id == to.id).expect("touched above");
            entry.after = entry.after.checked_add(t.amount).ok_or(TransferError::Overflow)?;
        }
    }
    for account in &touched.0 {
        match &account.new {
            Some((kind, owner_id, token_id)) => {
                let side = Account { id: &account.id, kind: *kind, owner_id: owner_id.as_deref() };
                create_account(c, &side, token_id, account.after)?;
            }
            None if account.before != account.after => match c.hot() {
                Some(hot) => hot.set_balance(&account.id, account.after),
                None => set_balance(c, &account.id, account.after)?,
            },
            None => {}
        }
    }
    let recorded: Vec<&Transfer<'_>> = transfers.iter().filter(|t| t.amount > 0).collect();
    if !recorded.is_empty() {
        let sql = format!(
            "INSERT INTO transfers (kind, from_account, to_account, token_id, amount, reference_id, created_at) VALUES {}",
            value_rows(recorded.len(), 7)
        );
        let mut params: Vec<Param<'_>> = Vec::with_capacity(recorded.len() * 7);
        for t in &recorded {
            params.extend([
                Param::Text(t.kind),
                t.from.as_ref().map(|a| a.id).into(),
                t.to.as_ref().map(|a| a.id).into(),
                Param::Text(t.token_id),
                Param::Money(t.amount),
                t.reference_id.into(),
                Param::Int(t.at),
            ]);
        }
        c.exec_later(&sql, &params)?;
    }
    emit_wallet_balances(c, transfers, &touched)?;
    Ok(touched)
}

/// A `BalanceUpdated` for each wallet balance the transfers changed.
fn emit_wallet_balances(c: &mut dyn Conn, transfers: &[Transfer<'_>], touched: &Touched) -> Result<(), TransferError> {
    for account in touched.0.iter().filter(|a| a.before != a.after) {
        let side = transfers.iter().find_map(|t| {
            [&t.from, &t.to].into_iter().flatten().find(|s| s.id == account.id).map(|s| (s, t.token_id))
        });
        if let Some((Account { kind: Kind::Wallet, owner_id: Some(owner), .. }, token_id)) = side {
            let event = Event::BalanceUpdated { wallet_id: (*owner).into(), token_id: token_id.to_string(), balance: account.after };
            c.emit(event)?;
        }
    }
    Ok(())
}

/// Applies one transfer. Returns (from balance after, to balance after); an absent side is 0.
pub fn transfer(c: &mut dyn Conn, t: Transfer<'_>) -> Result<(u128, u128), TransferError> {
    let (from, to) = (t.from.as_ref().map(|a| a.id.to_string()), t.to.as_ref().map(|a| a.id.to_string()));
    let touched = apply(c, std::slice::from_ref(&t))?;
    Ok((from.map_or(0, |id| touched.after(&id)), to.map_or(0, |id| touched.after(&id))))
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
