//! `hanson audit`: re-derives every balance from the ledger and checks the money invariants.

use std::collections::HashMap;

use super::positions::POSITION_COLUMNS;
use super::sql::{query_as, Conn, Param};
use crate::domain::candle::CANDLE_WIDTHS;
use crate::domain::num::{mul_div, Rounding};
use crate::domain::position::{Position, PositionStatus};
use crate::error::Result;

#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) accounts: usize,
    pub(crate) transfers: usize,
    pub(crate) markets: usize,
    pub(crate) positions: usize,
    pub(crate) problems: Vec<String>,
}

impl Report {
    fn fail(&mut self, problem: String) {
        self.problems.push(problem);
    }
}

#[derive(Default, Clone, Copy)]
struct Flow {
    credits: u128,
    debits: u128,
}

fn add(total: &mut u128, amount: u128, what: &str, report: &mut Report) {
    match total.checked_add(amount) {
        Some(t) => *total = t,
        None => report.fail(format!("{what}: sum overflows")),
    }
}

pub(crate) fn audit(c: &mut dyn Conn) -> Result<Report> {
    let mut report = Report::default();

    // Every account's balance equals what its transfers say, and none is negative.
    let mut flows: HashMap<String, Flow> = HashMap::new();
    let (mut deposits, mut withdrawals) = (0u128, 0u128);
    for r in c.query("SELECT from_account, to_account, amount FROM transfers", &[])? {
        report.transfers += 1;
        let amount = match r.money(2) {
            Ok(a) => a,
            Err(_) => {
                report.fail(format!("transfer with a malformed amount: {:?}", r.0[2]));
                continue;
            }
        };
        match r.opt_text(0)? {
            Some(from) => {
                let f = flows.entry(from.clone()).or_default();
                let mut debits = f.debits;
                add(&mut debits, amount, &from, &mut report);
                flows.get_mut(&from).expect("just inserted").debits = debits;
            }
            None => add(&mut deposits, amount, "deposits", &mut report),
        }
        match r.opt_text(1)? {
            Some(to) => {
                let f = flows.entry(to.clone()).or_default();
                let mut credits = f.credits;
                add(&mut credits, amount, &to, &mut report);
                flows.get_mut(&to).expect("just inserted").credits = credits;
            }
            None => add(&mut withdrawals, amount, "withdrawals", &mut report),
        }
    }
    let mut total_balances = 0u128;
    let mut balances: HashMap<String, u128> = HashMap::new();
    for r in c.query("SELECT id, balance FROM accounts", &[])? {
        report.accounts += 1;
        let id = r.text(0)?;
        let Ok(balance) = r.money(1) else {
            report.fail(format!("account {id}: balance {:?} is not a non-negative integer", r.0[1]));
            continue;
        };
        let flow = flows.get(&id).copied().unwrap_or_default();
        match flow.credits.checked_sub(flow.debits) {
            Some(expected) if expected == balance => {}
            Some(expected) => report.fail(format!("account {id}: balance {balance} but its transfers sum to {expected}")),
            None => report.fail(format!("account {id}: transfers take out {} more than they put in", flow.debits - flow.credits)),
        }
        add(&mut total_balances, balance, "all balances", &mut report);
        balances.insert(id, balance);
    }
    for id in flows.keys().filter(|id| !balances.contains_key(*id)) {
        report.fail(format!("transfers name account {id}, which does not exist"));
    }
    if Some(total_balances) != deposits.checked_sub(withdrawals) {
        report.fail(format!("all balances sum to {total_balances}, but deposits {deposits} minus withdrawals {withdrawals} differ"));
    }

    // Trades, positions and price points name an outcome of their own market, and trades and
    // positions a wallet. No foreign key checks the outcome's market, and PostgreSQL has none
    // on trades and price points at all (migration 0015): this is their check.
    for (record, table) in [("trade", "trades"), ("position", "positions")] {
        for r in c.query(
            &format!(
                "SELECT t.id, t.market_id, t.outcome_id, t.wallet_id, o.id, w.id FROM {table} t \
                 LEFT JOIN outcomes o ON o.id = t.outcome_id AND o.market_id = t.market_id \
                 LEFT JOIN wallets w ON w.id = t.wallet_id WHERE o.id IS NULL OR w.id IS NULL ORDER BY t.id"
            ),
            &[],
        )? {
            let (id, market, outcome, wallet) = (r.text(0)?, r.text(1)?, r.text(2)?, r.text(3)?);
            if r.opt_text(4)?.is_none() {
                report.fail(format!("{record} {id}: outcome {outcome} is not an outcome of its market {market}"));
            }
            if r.opt_text(5)?.is_none() {
                report.fail(format!("{record} {id}: wallet {wallet} does not exist"));
            }
        }
    }
    for r in c.query(
        "SELECT p.seq, p.market_id, p.outcome_id FROM price_points p \
         LEFT JOIN outcomes o ON o.id = p.outcome_id AND o.market_id = p.market_id WHERE o.id IS NULL",
        &[],
    )? {
        report.fail(format!("price point {}: outcome {} is not an outcome of its market {}", r.int(0)?, r.text(2)?, r.text(1)?));
    }

    // Each record's number is its own. PostgreSQL has no primary key on these append-only
    // records (migration 0018): their identity sequences number them, and this is the check.
    for (record, table, column) in [("transfer", "transfers", "id"), ("trade", "trades", "seq"), ("price point", "price_points", "seq")] {
        for r in c.query(&format!("SELECT {column}, count(*) FROM {table} GROUP BY {column} HAVING count(*) > 1 ORDER BY {column}"), &[])? {
            report.fail(format!("{record} number {} is taken by {} records", r.int(0)?, r.int(1)?));
        }
    }

    // Per market: shares, volume and pool consistent with positions, trades and settlement.
    let market_rows =
        c.query("SELECT id, status, total_volume, trade_count, payout_num, payout_den, winning_outcome_id, finalized FROM markets", &[])?;
    for m in market_rows {
        report.markets += 1;
        let (id, status) = (m.text(0)?, m.text(1)?);
        let pool = balances.get(&crate::domain::ledger::pool_account(&id)).copied().unwrap_or(0);
        let outcomes = c.query("SELECT id, total_shares, total_volume FROM outcomes WHERE market_id = $1", &[Param::Text(&id)])?;
        let positions: Vec<Position> =
            query_as(c, &format!("SELECT {POSITION_COLUMNS} FROM positions WHERE market_id = $1"), &[Param::Text(&id)])?;
        report.positions += positions.len();
        let mut max_shares = 0u128;
        let mut outcome_volume = 0u128;
        for o in &outcomes {
            let (oid, total_shares) = (o.text(0)?, o.money(1)?);
            let held: u128 = positions.iter().filter(|p| p.outcome_id == oid).map(|p| p.shares).sum();
            if held != total_shares {
                report.fail(format!("market {id} outcome {oid}: total_shares {total_shares} but positions hold {held}"));
            }
            max_shares = max_shares.max(total_shares);
            add(&mut outcome_volume, o.money(2)?, "outcome volume", &mut report);
        }
        let trades = c.query("SELECT amount FROM trades WHERE market_id = $1", &[Param::Text(&id)])?;
        let mut traded = 0u128;
        for t in &trades {
            add(&mut traded, t.money(0)?, "trade volume", &mut report);
        }
        if traded != m.money(2)? || outcome_volume != traded {
            report.fail(format!(
                "market {id}: total_volume {} and outcome volumes {outcome_volume} differ from its trades {traded}",
                m.money(2)?
            ));
        }
        if trades.len() as i64 != m.int(3)? {
            report.fail(format!("market {id}: trade_count {} but {} trade records", m.int(3)?, trades.len()));
        }
        // Candles of every width cover each price point once (a width with no candles covers none).
        let points = c.query_one("SELECT count(*) FROM price_points WHERE market_id = $1", &[Param::Text(&id)])?.int(0)?;
        let mut covered_by_width: Vec<(i64, i64)> = CANDLE_WIDTHS.iter().map(|&width| (width, 0)).collect();
        for row in c.query(
            "SELECT width, CAST(sum(points) AS BIGINT) FROM price_candles WHERE market_id = $1 GROUP BY width",
            &[Param::Text(&id)],
        )? {
            let (width, covered) = (row.int(0)?, row.int(1)?);
            match covered_by_width.iter_mut().find(|(w, _)| *w == width) {
                Some(kept) => kept.1 = covered,
                None => covered_by_width.push((width, covered)),
            }
        }
        for (width, covered) in covered_by_width {
            if covered != points {
                report.fail(format!("market {id}: candles {width} µs wide cover {covered} price points, not {points}"));
            }
        }
        let terms = |i: usize| -> Option<u128> { m.opt_money(i).ok().flatten() };
        match status.as_str() {
            "active" => {
                if pool < max_shares {
                    report.fail(format!("market {id}: pool {pool} cannot cover {max_shares} winning shares"));
                }
            }
            "resolved" => {
                let (num, den) = (terms(4).unwrap_or(1), terms(5).unwrap_or(1));
                let winner = m.opt_text(6)?.unwrap_or_default();
                let owed = |shares: u128| mul_div(shares, num, den, Rounding::Down).unwrap_or(0);
                let mut unclaimed = 0u128;
                for p in &positions {
                    match p.status {
                        PositionStatus::Won => unclaimed += owed(p.shares),
                        PositionStatus::Claimed if p.claimed_amount != Some(owed(p.shares)) => {
                            report.fail(format!("position {}: claimed {:?}, owed {}", p.id, p.claimed_amount, owed(p.shares)))
                        }
                        PositionStatus::Active => report.fail(format!("position {}: still active in a resolved market", p.id)),
                        _ => {}
                    }
                    if p.status == PositionStatus::Won && p.outcome_id != winner {
                        report.fail(format!("position {}: won on a losing outcome", p.id));
                    }
                }
                // A resolution inside its dispute window keeps the whole pool: nothing is claimed
                // yet, and it must still pay any outcome a new resolution may name.
                let pending = m.int(7)? == 0;
                if pending {
                    if let Some(p) = positions.iter().find(|p| p.status == PositionStatus::Claimed) {
                        report.fail(format!("position {}: claimed before its market's resolution is final", p.id));
                    }
                    if pool < max_shares.max(unclaimed) {
                        report.fail(format!(
                            "market {id}: pending resolution's pool {pool} cannot cover {} winning shares",
                            max_shares.max(unclaimed)
                        ));
                    }
                } else if pool != unclaimed {
                    report.fail(format!("market {id}: resolved pool holds {pool} but unclaimed winnings are {unclaimed}"));
                }
            }
            "cancelled" => {
                let (num, den) = (terms(4).unwrap_or(1), terms(5).unwrap_or(1));
                if pool != 0 {
                    report.fail(format!("market {id}: cancelled but its pool still holds {pool}"));
                }
                for p in positions.iter().filter(|p| p.status == PositionStatus::Refunded) {
                    let owed = mul_div(p.total_invested, num, den, Rounding::Down).unwrap_or(0);
                    if p.claimed_amount != Some(owed) {
                        report.fail(format!("position {}: refunded {:?}, owed {owed}", p.id, p.claimed_amount));
                    }
                }
                if let Some(p) = positions.iter().find(|p| p.status == PositionStatus::Active) {
                    report.fail(format!("position {}: still active in a cancelled market", p.id));
                }
            }
            other => report.fail(format!("market {id}: unknown status {other}")),
        }
    }
    Ok(report)
}
