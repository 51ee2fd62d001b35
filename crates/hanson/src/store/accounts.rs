//! The accounts and transfers tables: balances read and stored, accounts created, transfer
//! rows recorded. The arithmetic is `domain::ledger`'s; `store::ledger` applies transfers.

use crate::domain::ledger::{Account, Transfer};
use crate::error::Result;
use crate::store::sql::{id_list, value_rows, Conn, Param, Row};

pub(crate) fn balance(c: &mut dyn Conn, account_id: &str) -> Result<u128> {
    match c.query_opt("SELECT balance FROM accounts WHERE id = $1", &[Param::Text(account_id)])? {
        Some(row) => row.money(0),
        None => Ok(0),
    }
}

/// The balances of the accounts that exist among `ids` (distinct), locked, in one statement.
pub(crate) fn stored_balances(c: &mut dyn Conn, ids: &[&str]) -> Result<Vec<(String, u128)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let (sql, params) = stored_balances_read(c, ids);
    balances_from(&c.query(&sql, &params)?)
}

/// The statement of [`stored_balances`] (`ids` not empty), for a batch of reads.
pub(crate) fn stored_balances_read<'a>(c: &dyn Conn, ids: &'a [&'a str]) -> (String, Vec<Param<'a>>) {
    let (list, params) = id_list(ids);
    // Locked in id order, so two transactions that lock overlapping accounts cannot each hold
    // one the other waits for (PostgreSQL locks rows as the sorted rows leave the sort).
    let lock = c.lock_clause();
    let order = if lock.is_empty() { "" } else { " ORDER BY id" };
    (format!("SELECT id, balance FROM accounts WHERE id IN ({list}){order}{lock}"), params)
}

pub(crate) fn balances_from(rows: &[Row]) -> Result<Vec<(String, u128)>> {
    rows.iter().map(|row| Ok((row.text(0)?, row.money(1)?))).collect()
}

pub(crate) fn create_account(c: &mut dyn Conn, account: &Account, token_id: &str, balance: u128) -> Result<()> {
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

/// Deferred where the connection defers writes: until the transaction ends, nothing reads the
/// balance back but from the batch's copies.
pub(crate) fn set_balance(c: &mut dyn Conn, account_id: &str, balance: u128) -> Result<()> {
    c.exec_later("UPDATE accounts SET balance = $1 WHERE id = $2", &[Param::Money(balance), Param::Text(account_id)])
}

/// Sets many balances in one statement (see `batch::flush`).
pub(crate) fn set_balances(c: &mut dyn Conn, balances: &[(String, u128)]) -> Result<()> {
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

/// Records transfer rows (zero amounts record nothing), in one statement.
pub(crate) fn insert_transfers(c: &mut dyn Conn, transfers: &[Transfer<'_>]) -> Result<()> {
    let recorded: Vec<&Transfer<'_>> = transfers.iter().filter(|t| t.amount > 0).collect();
    if recorded.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO transfers (kind, from_account, to_account, token_id, amount, reference_id, created_at) VALUES {}",
        value_rows(recorded.len(), 7)
    );
    let mut params: Vec<Param<'_>> = Vec::with_capacity(recorded.len() * 7);
    for t in &recorded {
        params.extend([
            Param::Text(t.kind),
            t.from.map(|a| a.id).into(),
            t.to.map(|a| a.id).into(),
            Param::Text(t.token_id),
            Param::Money(t.amount),
            t.reference_id.into(),
            Param::Int(t.at),
        ]);
    }
    c.exec_later(&sql, &params)
}
