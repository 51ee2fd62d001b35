//! Leaderboards: each wallet's profit and volume from its trades and positions, ranked.

use std::collections::HashMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::ids::WalletId;
use super::money::{SignedWei, Wei};
use crate::error::{Error, Result};

/// One wallet's standing, summed over the trades and positions of the board's scope.
#[derive(Debug, Clone, Default)]
pub(crate) struct Standing {
    pub(crate) wallet_address: String,
    /// Sells' net proceeds, claims and refunds, and the current value of open positions.
    pub(crate) gain: u128,
    /// Bets' gross amounts (fees count as cost).
    pub(crate) cost: u128,
    pub(crate) volume: u128,
    pub(crate) trades: i64,
}

/// Sums standings by wallet.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) wallets: HashMap<WalletId, Standing>,
}

fn add(total: &mut u128, amount: u128) -> Result<()> {
    *total = total.checked_add(amount).ok_or_else(|| Error::internal("leaderboard sum overflow"))?;
    Ok(())
}

impl Tally {
    /// A trade: `amount` is its gross amount (a bet) or gross proceeds (a sale).
    pub(crate) fn trade(&mut self, wallet_id: WalletId, address: String, buy: bool, amount: u128, net_amount: u128) -> Result<()> {
        let s = self.wallets.entry(wallet_id).or_default();
        s.wallet_address = address;
        s.trades += 1;
        add(&mut s.volume, amount)?;
        if buy {
            add(&mut s.cost, amount)
        } else {
            add(&mut s.gain, net_amount)
        }
    }

    /// A position: what was paid out on it (claim or refund) and what it is worth now.
    pub(crate) fn position(&mut self, wallet_id: &WalletId, paid_out: u128, current_value: u128) -> Result<()> {
        // Positions come from trades: a wallet without one has no trade here either.
        if let Some(s) = self.wallets.get_mut(wallet_id) {
            add(&mut s.gain, paid_out)?;
            add(&mut s.gain, current_value)?;
        }
        Ok(())
    }
}

/// What a board is ranked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RankBy {
    Profit,
    Volume,
}

impl RankBy {
    pub(crate) fn parse(text: &str) -> Option<RankBy> {
        match text {
            "profit" => Some(RankBy::Profit),
            "volume" => Some(RankBy::Volume),
            _ => None,
        }
    }
}

/// One row of a leaderboard.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct LeaderboardRow {
    /// 1 for the first; ties are ordered by `wallet_id` and still get distinct ranks.
    pub(crate) rank: i64,
    pub(crate) wallet_id: WalletId,
    pub(crate) wallet_address: String,
    /// Sells' net proceeds + claims + refunds + the current value of open positions - bets' gross amounts.
    pub(crate) profit: SignedWei,
    /// The wallet's trades' `amount`, summed.
    pub(crate) volume: Wei,
    /// How many trades the wallet made.
    pub(crate) trades: i64,
}

/// The board ranked by `by`: highest first, ties by wallet id.
pub(crate) fn rank(tally: Tally, by: RankBy) -> Vec<LeaderboardRow> {
    let mut rows: Vec<(WalletId, Standing)> = tally.wallets.into_iter().collect();
    // Profit as a signed key: gains above cost first, by how much; then losses, smallest first.
    let profit_key = |s: &Standing| if s.gain >= s.cost { (1u8, s.gain - s.cost) } else { (0u8, u128::MAX - (s.cost - s.gain)) };
    rows.sort_by(|(ia, a), (ib, b)| {
        let order = match by {
            RankBy::Profit => profit_key(b).cmp(&profit_key(a)),
            RankBy::Volume => b.volume.cmp(&a.volume),
        };
        order.then_with(|| ia.cmp(ib))
    });
    rows.into_iter()
        .enumerate()
        .map(|(i, (wallet_id, s))| LeaderboardRow {
            rank: i as i64 + 1,
            wallet_id,
            wallet_address: s.wallet_address,
            profit: SignedWei::difference(s.gain, s.cost),
            volume: Wei(s.volume),
            trades: s.trades,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_rank_below_gains_and_ties_go_by_wallet_id() {
        let mut t = Tally::default();
        t.trade("b".into(), "0xb".into(), true, 100, 98).unwrap();
        t.trade("a".into(), "0xa".into(), true, 100, 98).unwrap();
        t.trade("c".into(), "0xc".into(), true, 10, 9).unwrap();
        t.trade("c".into(), "0xc".into(), false, 50, 49).unwrap();
        t.position(&"b".into(), 0, 40).unwrap();
        let ranked = rank(t, RankBy::Profit);
        let order: Vec<(&str, String)> = ranked.iter().map(|r| (r.wallet_id.as_str(), serde_json::to_string(&r.profit).unwrap())).collect();
        assert_eq!(order, [("c", "\"39\"".to_string()), ("b", "\"-60\"".to_string()), ("a", "\"-100\"".to_string())]);
    }
}
