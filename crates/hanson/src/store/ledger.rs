//! Applying transfers in a write: the balances read (locked), the arithmetic of
//! `domain::ledger`, the accounts created and updated, the transfer rows recorded and a
//! `balance.updated` for each wallet whose balance changed. Trades apply their planned
//! transfers through the batch's copies instead (`trading`).

use super::accounts;
use super::tx::Tx;
use crate::domain::ledger::{self, Balances, Transfer, TransferError};
use crate::error::{Error, Result};

/// Why transfers were not applied.
#[derive(Debug)]
pub(crate) enum LedgerError {
    Refused(TransferError),
    Store(Error),
}

impl From<Error> for LedgerError {
    fn from(e: Error) -> Self {
        LedgerError::Store(e)
    }
}

/// Applies `transfers` in order, as if one after another (each debit covered by the running
/// balance), reading and writing each account once. Every check comes before the first
/// write, so refused transfers write nothing.
pub(crate) fn apply<'a>(tx: &mut Tx<'_>, transfers: &[Transfer<'a>]) -> Result<Balances<'a>, LedgerError> {
    let stored = accounts::stored_balances(tx, &ledger::account_ids(transfers))?;
    let balances = ledger::apply(&stored, transfers).map_err(LedgerError::Refused)?;
    for created in balances.created() {
        accounts::create_account(tx, &created.account, created.token_id, created.after)?;
    }
    for changed in balances.changed() {
        accounts::set_balance(tx, changed.account.id, changed.after)?;
    }
    accounts::insert_transfers(tx, transfers)?;
    for event in balances.wallet_events() {
        tx.emit(event);
    }
    Ok(balances)
}

/// Applies one transfer. Returns (from balance after, to balance after); an absent side is 0.
pub(crate) fn transfer(tx: &mut Tx<'_>, t: Transfer<'_>) -> Result<(u128, u128), LedgerError> {
    let balances = apply(tx, std::slice::from_ref(&t))?;
    Ok((t.from.map_or(0, |a| balances.after(a.id)), t.to.map_or(0, |a| balances.after(a.id))))
}

/// Names a refused transfer whose paying side is a client's account.
pub(crate) fn client_error(e: LedgerError, insufficient_code: &'static str, what: &str) -> Error {
    match e {
        LedgerError::Refused(TransferError::Insufficient { balance }) => {
            Error::rule(insufficient_code, format!("{what} balance {balance} is too low"))
        }
        LedgerError::Refused(TransferError::Overflow) => {
            Error::rule("amount_too_large", format!("{what} balance would exceed the supported maximum"))
        }
        LedgerError::Store(e) => e,
    }
}

/// A refused transfer whose paying side is the service's own (a pool paying what it owes):
/// a broken invariant, never the client's doing.
pub(crate) fn internal_error(e: LedgerError, what: &str) -> Error {
    match e {
        LedgerError::Refused(refused) => Error::internal(format!("{what}: {refused:?}")),
        LedgerError::Store(e) => e,
    }
}
