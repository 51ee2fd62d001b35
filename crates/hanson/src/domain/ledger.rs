//! The ledger's arithmetic: accounts, transfers between them, and the balances a set of
//! transfers leaves. Every balance change is a transfer between two accounts (or from or to
//! the outside world, for deposits and withdrawals); the store records each as a row and
//! applies it to both balances in one transaction.

use super::event::Event;
use super::ids::WalletId;

pub(crate) fn wallet_account(wallet_id: &str, token_id: &str) -> String {
    format!("wallet:{wallet_id}:{token_id}")
}

pub(crate) fn treasury_account(provider_id: &str, token_id: &str) -> String {
    format!("treasury:{provider_id}:{token_id}")
}

pub(crate) fn pool_account(market_id: &str) -> String {
    format!("pool:{market_id}")
}

pub(crate) fn platform_account(token_id: &str) -> String {
    format!("platform:{token_id}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccountKind {
    Wallet,
    Treasury,
    Pool,
    Platform,
}

impl AccountKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AccountKind::Wallet => "wallet",
            AccountKind::Treasury => "treasury",
            AccountKind::Pool => "pool",
            AccountKind::Platform => "platform",
        }
    }
}

/// An account named by its id; created with a zero balance on first use. Borrowed: a trade
/// moves money between a few accounts whose ids its caller already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Account<'a> {
    pub(crate) id: &'a str,
    pub(crate) kind: AccountKind,
    /// The wallet, provider or market it belongs to (none for the platform's).
    pub(crate) owner_id: Option<&'a str>,
}

impl<'a> Account<'a> {
    /// `id` is [`wallet_account`] of `wallet_id`.
    pub(crate) fn wallet(id: &'a str, wallet_id: &'a str) -> Account<'a> {
        Account { id, kind: AccountKind::Wallet, owner_id: Some(wallet_id) }
    }

    /// `id` is [`treasury_account`] of `provider_id`.
    pub(crate) fn treasury(id: &'a str, provider_id: &'a str) -> Account<'a> {
        Account { id, kind: AccountKind::Treasury, owner_id: Some(provider_id) }
    }

    /// `id` is [`pool_account`] of `market_id`.
    pub(crate) fn pool(id: &'a str, market_id: &'a str) -> Account<'a> {
        Account { id, kind: AccountKind::Pool, owner_id: Some(market_id) }
    }

    /// `id` is [`platform_account`].
    pub(crate) fn platform(id: &'a str) -> Account<'a> {
        Account { id, kind: AccountKind::Platform, owner_id: None }
    }
}

/// One movement of money. A side that is None is the outside world.
#[derive(Debug, Clone)]
pub(crate) struct Transfer<'a> {
    pub(crate) kind: &'static str,
    pub(crate) from: Option<Account<'a>>,
    pub(crate) to: Option<Account<'a>>,
    pub(crate) token_id: &'a str,
    pub(crate) amount: u128,
    pub(crate) reference_id: Option<&'a str>,
    pub(crate) at: i64,
}

/// Why transfers could not be applied; callers name the error for their client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TransferError {
    /// A paying account holds `balance`, less than it must pay.
    Insufficient {
        balance: u128,
    },
    Overflow,
}

/// An account a set of transfers touched: its balance before and after them.
#[derive(Debug, Clone)]
pub(crate) struct Touched<'a> {
    pub(crate) account: Account<'a>,
    pub(crate) token_id: &'a str,
    pub(crate) before: u128,
    pub(crate) after: u128,
    /// Not stored yet: it is created with `after`.
    pub(crate) is_new: bool,
}

/// The balances a set of transfers leaves, per account, in the order the transfers first
/// touch them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Balances<'a>(pub(crate) Vec<Touched<'a>>);

impl<'a> Balances<'a> {
    fn get(&self, account_id: &str) -> Option<&Touched<'a>> {
        self.0.iter().find(|t| t.account.id == account_id)
    }

    pub(crate) fn before(&self, account_id: &str) -> u128 {
        self.get(account_id).map_or(0, |t| t.before)
    }

    pub(crate) fn after(&self, account_id: &str) -> u128 {
        self.get(account_id).map_or(0, |t| t.after)
    }

    /// Accounts whose stored balance changes (created ones aside).
    pub(crate) fn changed(&self) -> impl Iterator<Item = &Touched<'a>> + '_ {
        self.0.iter().filter(|t| !t.is_new && t.before != t.after)
    }

    pub(crate) fn created(&self) -> impl Iterator<Item = &Touched<'a>> + '_ {
        self.0.iter().filter(|t| t.is_new)
    }

    /// A `balance.updated` for each wallet balance that changed.
    pub(crate) fn wallet_events(&self) -> Vec<Event> {
        self.0
            .iter()
            .filter(|t| t.before != t.after && t.account.kind == AccountKind::Wallet)
            .filter_map(|t| {
                let wallet_id = WalletId::from(t.account.owner_id?);
                Some(Event::BalanceUpdated { wallet_id, token_id: t.token_id.to_string(), balance: t.after })
            })
            .collect()
    }
}

/// Applies `transfers` in order to the `stored` balances (accounts absent from it do not
/// exist yet and start at zero), as if one after another: each debit must be covered by the
/// account's running balance. Nothing is applied unless every transfer can be.
pub(crate) fn apply<'a>(stored: &[(String, u128)], transfers: &[Transfer<'a>]) -> Result<Balances<'a>, TransferError> {
    let mut balances = Balances::default();
    for t in transfers {
        for side in [&t.from, &t.to].into_iter().flatten() {
            if balances.get(side.id).is_none() {
                let stored = stored.iter().find(|(id, _)| id == side.id).map(|(_, balance)| *balance);
                let balance = stored.unwrap_or(0);
                balances.0.push(Touched {
                    account: *side,
                    token_id: t.token_id,
                    before: balance,
                    after: balance,
                    is_new: stored.is_none(),
                });
            }
        }
        if let Some(from) = &t.from {
            let entry = balances.0.iter_mut().find(|a| a.account.id == from.id).expect("touched above");
            entry.after = entry.after.checked_sub(t.amount).ok_or(TransferError::Insufficient { balance: entry.after })?;
        }
        if let Some(to) = &t.to {
            let entry = balances.0.iter_mut().find(|a| a.account.id == to.id).expect("touched above");
            entry.after = entry.after.checked_add(t.amount).ok_or(TransferError::Overflow)?;
        }
    }
    Ok(balances)
}

/// The ids of the accounts `transfers` touch, each once, in order.
pub(crate) fn account_ids<'a>(transfers: &[Transfer<'a>]) -> Vec<&'a str> {
    let mut ids: Vec<&'a str> = Vec::with_capacity(transfers.len() * 2);
    for side in transfers.iter().flat_map(|t| [&t.from, &t.to]).flatten() {
        if !ids.contains(&side.id) {
            ids.push(side.id);
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transfer<'a>(from: Option<Account<'a>>, to: Option<Account<'a>>, amount: u128) -> Transfer<'a> {
        Transfer { kind: "test", from, to, token_id: "t", amount, reference_id: None, at: 0 }
    }

    #[test]
    fn transfers_apply_in_order_against_running_balances() {
        let (a_id, b_id) = (wallet_account("a", "t"), wallet_account("b", "t"));
        let (a, b) = (Account::wallet(&a_id, "a"), Account::wallet(&b_id, "b"));
        let stored = vec![(a_id.clone(), 10)];
        let moves = [transfer(Some(a), Some(b), 10), transfer(Some(b), Some(a), 4)];
        let balances = apply(&stored, &moves).unwrap();
        assert_eq!((balances.before(&a_id), balances.after(&a_id)), (10, 4));
        assert_eq!((balances.before(&b_id), balances.after(&b_id)), (0, 6));
        assert_eq!(balances.created().map(|t| t.account.id).collect::<Vec<_>>(), [b_id.as_str()]);
        assert_eq!(balances.changed().map(|t| t.account.id).collect::<Vec<_>>(), [a_id.as_str()]);
        assert_eq!(balances.wallet_events().len(), 2);
    }

    #[test]
    fn a_debit_beyond_the_running_balance_is_refused_with_that_balance() {
        let (a_id, pool_id) = (wallet_account("a", "t"), pool_account("m"));
        let a = Account::wallet(&a_id, "a");
        let stored = vec![(a_id.clone(), 10)];
        let moves = [transfer(Some(a), Some(Account::pool(&pool_id, "m")), 6), transfer(Some(a), None, 5)];
        assert_eq!(apply(&stored, &moves).unwrap_err(), TransferError::Insufficient { balance: 4 });
    }

    #[test]
    fn a_credit_past_the_largest_balance_overflows() {
        let id = platform_account("t");
        let stored = vec![(id.clone(), u128::MAX)];
        assert_eq!(apply(&stored, &[transfer(None, Some(Account::platform(&id)), 1)]).unwrap_err(), TransferError::Overflow);
    }

    #[test]
    fn only_wallets_get_balance_events() {
        let (treasury, wallet) = (treasury_account("p", "t"), wallet_account("w", "t"));
        let moves = [transfer(None, Some(Account::treasury(&treasury, "p")), 5), transfer(None, Some(Account::wallet(&wallet, "w")), 0)];
        assert!(apply(&[], &moves).unwrap().wallet_events().is_empty());
    }
}
