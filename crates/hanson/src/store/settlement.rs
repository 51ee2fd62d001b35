//! Settlement: resolving a market, cancelling it with refunds, and claiming a won position.
//! Each is one transaction that moves the pool's money through the ledger and emits the
//! events the change causes.

use super::ledger;
use super::positions::{self, active_positions};
use super::sql::{Conn, Param};
use super::tx::Tx;
use super::{accounts, markets};
use crate::domain::event::Event;
use crate::domain::ids::{MarketId, OutcomeId, TradeId, WalletId};
use crate::domain::ledger::{pool_account, treasury_account, wallet_account, Account, Transfer};
use crate::domain::market::{Market, MarketStatus};
use crate::domain::money::Wei;
use crate::domain::num::{mul_div, Rounding};
use crate::domain::position::{Holding, Position, PositionStatus};
use crate::domain::settlement::{
    payout_ratio_text, CancelRequest, Cancellation, ClaimReceipt, ClaimStatus, Finalization, Resolution, ResolveRequest, UserRefund,
};
use crate::domain::time::{Micros, Timestamp};
use crate::domain::trade::Trader;
use crate::error::{Error, Result};

fn checked_add(a: u128, b: u128) -> Result<u128> {
    a.checked_add(b).ok_or_else(|| Error::rule("amount_too_large", "a total would exceed the supported maximum"))
}

/// A market may be settled while it is not, and again while its resolution waits out its
/// dispute window.
fn ensure_settleable(m: &Market, now: Micros) -> Result<()> {
    if m.is_settled() && !m.resolution_pending(now) {
        let detail = match m.stored_status {
            MarketStatus::Resolved => "the market is already resolved, and the resolution is final".to_string(),
            status => format!("the market is already {status}"),
        };
        return Err(Error::conflict("market_settled", detail));
    }
    Ok(())
}

/// The positions a settlement settles: the open ones, and while a resolution is pending the
/// ones it marked won or lost.
fn positions_to_settle(c: &mut dyn Conn, m: &Market) -> Result<Vec<Position>> {
    if m.stored_status == MarketStatus::Resolved {
        positions::resolved_positions(c, &m.id)
    } else {
        active_positions(c, &m.id)
    }
}

/// Who settles a market is the provider's to name: one of its own wallets, or a label of its
/// own (an operator, a system). A wallet id of another tenant is refused: it would put that
/// tenant's wallet on this provider's record.
fn ensure_own_wallet_or_label(c: &mut dyn Conn, provider_id: &str, id: &str, field: &str) -> Result<()> {
    match c.query_opt("SELECT provider_id FROM wallets WHERE id = $1", &[Param::Text(id)])? {
        Some(row) if row.text(0)? != provider_id => Err(Error::invalid(field, "must be one of your wallets or a label of your own")),
        _ => Ok(()),
    }
}

/// Returns what is left in the pool beyond `keep` to the provider's treasury; answers how much.
fn return_surplus(c: &mut Tx<'_>, m: &Market, keep: u128, at: Micros) -> Result<u128> {
    let (pool, treasury) = (pool_account(&m.id), treasury_account(&m.provider_id, &m.token.id));
    let balance = accounts::balance(c, &pool)?;
    let surplus = Transfer {
        kind: "surplus",
        from: Some(Account::pool(&pool, &m.id)),
        to: Some(Account::treasury(&treasury, &m.provider_id)),
        token_id: &m.token.id,
        amount: balance.saturating_sub(keep),
        reference_id: Some(&m.id),
        at,
    };
    let amount = surplus.amount;
    ledger::transfer(c, surplus).map_err(|e| ledger::internal_error(e, "surplus transfer failed"))?;
    Ok(amount)
}

/// How a market was settled, as its row keeps it.
struct Settled<'a> {
    status: MarketStatus,
    payout: (u128, u128),
    winner: Option<&'a str>,
    resolution_source: Option<&'a str>,
    resolver: Option<&'a str>,
    /// The settlement's response body, kept with the market.
    body: String,
    at: Micros,
    /// When it becomes final (None for a cancellation), and whether it is already.
    final_at: Option<Micros>,
    finalized: bool,
}

/// Settling ends a pause: a settled market has no trading to pause.
fn settle_market(c: &mut dyn Conn, m: &Market, s: Settled<'_>) -> Result<()> {
    c.exec(
        "UPDATE markets SET status = $1, payout_num = $2, payout_den = $3, winning_outcome_id = $4, resolution_source = $5, \
         resolver_wallet_id = $6, settlement = $7, settled_at = $8, updated_at = $8, final_at = $10, finalized = $11, \
         paused_at = NULL, paused_reason = NULL WHERE id = $9",
        &[
            Param::Text(s.status.as_str()),
            Param::Money(s.payout.0),
            Param::Money(s.payout.1),
            s.winner.into(),
            s.resolution_source.into(),
            s.resolver.into(),
            Param::Text(&s.body),
            Param::Int(s.at),
            Param::Text(&m.id),
            s.final_at.into(),
            Param::Int(i64::from(s.finalized)),
        ],
    )?;
    Ok(())
}

fn settlement_body<T: serde::Serialize>(body: &T) -> Result<String> {
    serde_json::to_string(body).map_err(Error::internal)
}

/// Resolves: active positions become won or lost. Without a dispute window the pool keeps
/// exactly what winners are owed and returns the rest to the treasury at once; with one the
/// whole pool stays until the resolution is final ([`finalize`]). A resolution still inside
/// its window may be replaced: its positions are marked again from the new winner.
pub(crate) fn resolve(c: &mut Tx<'_>, provider_id: &str, req: &ResolveRequest, now: Micros) -> Result<Resolution> {
    let m = markets::provider_market(c, provider_id, &req.market_id)?;
    ensure_settleable(&m, now)?;
    ensure_own_wallet_or_label(c, provider_id, &req.resolver_wallet_id, "resolver_wallet_id")?;
    let winner = m
        .outcomes
        .iter()
        .find(|o| req.winning_outcome_id == o.id.as_str())
        .ok_or_else(|| Error::rule_on("unknown_outcome", "winning_outcome_id", "no such outcome in this market"))?;
    let total_pool = m.pool;
    let winning_pool = winner.total_shares;
    // Solvency keeps pool >= every outcome's shares; scale down only if that ever failed.
    let (num, den) = if total_pool >= winning_pool { (1, 1) } else { (total_pool, winning_pool) };
    let positions = positions_to_settle(c, &m)?;
    for p in &positions {
        let status = if p.outcome_id == winner.id && p.shares > 0 { PositionStatus::Won } else { PositionStatus::Lost };
        c.exec(
            "UPDATE positions SET status = $1, updated_at = $2 WHERE id = $3",
            &[Param::Text(status.as_str()), Param::Int(now), Param::Text(&p.id)],
        )?;
        let settled = Position { status, updated_at: now, ..p.clone() };
        c.emit(Event::PositionUpdated(Holding::value(settled, lmsr::Price::from_raw(0), (num, den))));
    }
    let owed: u128 =
        positions.iter().filter(|p| p.outcome_id == winner.id).map(|p| mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0)).sum();
    let window = req.dispute_window_seconds;
    let final_at = now + i64::from(window) * 1_000_000;
    if window == 0 {
        return_surplus(c, &m, owed, now)?;
    }
    let resolution_source = req.resolution_source.clone().or_else(|| m.resolution_source.clone());
    let resolution = Resolution {
        market_id: MarketId::from(m.id.as_str()),
        winning_outcome_id: OutcomeId::from(winner.id.as_str()),
        resolved_at: Timestamp(now),
        total_pool: Wei(total_pool),
        winning_pool: Wei(winning_pool),
        payout_ratio: payout_ratio_text(num, den),
        positions_updated: positions.len(),
        resolution_source: resolution_source.clone(),
        resolver_wallet_id: req.resolver_wallet_id.clone(),
        resolution_data: req.resolution_data.clone(),
        dispute_window_seconds: window,
        final_at: Timestamp(final_at),
        status: MarketStatus::Resolved,
    };
    let settled = Settled {
        final_at: Some(final_at),
        finalized: window == 0,
        status: MarketStatus::Resolved,
        payout: (num, den),
        winner: Some(&winner.id),
        resolution_source: resolution_source.as_deref(),
        resolver: Some(&req.resolver_wallet_id),
        body: settlement_body(&resolution)?,
        at: now,
    };
    settle_market(c, &m, settled)?;
    c.emit(Event::MarketResolved(resolution.clone()));
    Ok(resolution)
}

/// Cancels: refunds every open position its remaining cost basis (scaled pro rata if the
/// pool cannot cover all), returns the rest of the pool to the treasury.
pub(crate) fn cancel(c: &mut Tx<'_>, provider_id: &str, req: &CancelRequest, now: Micros) -> Result<Cancellation> {
    let m = markets::provider_market(c, provider_id, &req.market_id)?;
    ensure_settleable(&m, now)?;
    ensure_own_wallet_or_label(c, provider_id, &req.canceller_wallet_id, "canceller_wallet_id")?;
    let positions = positions_to_settle(c, &m)?;
    let owed: u128 = positions.iter().try_fold(0u128, |acc, p| checked_add(acc, p.total_invested))?;
    let (num, den) = if m.pool >= owed { (1, 1) } else { (m.pool, owed) };
    let pool = pool_account(&m.id);
    let mut refunds: Vec<UserRefund> = Vec::new();
    let mut total_refund = 0u128;
    for p in &positions {
        let refund = mul_div(p.total_invested, num, den, Rounding::Down).unwrap_or(0);
        let wallet = wallet_account(&p.wallet_id, &m.token.id);
        let transfer = Transfer {
            kind: "refund",
            from: Some(Account::pool(&pool, &m.id)),
            to: Some(Account::wallet(&wallet, &p.wallet_id)),
            token_id: &m.token.id,
            amount: refund,
            reference_id: Some(&p.id),
            at: now,
        };
        ledger::transfer(c, transfer).map_err(|e| ledger::internal_error(e, "refund failed"))?;
        c.exec(
            "UPDATE positions SET status = $1, claimed_amount = $2, updated_at = $3 WHERE id = $4",
            &[Param::Text(PositionStatus::Refunded.as_str()), Param::Money(refund), Param::Int(now), Param::Text(&p.id)],
        )?;
        let refunded = Position { status: PositionStatus::Refunded, claimed_amount: Some(refund), updated_at: now, ..p.clone() };
        c.emit(Event::PositionUpdated(Holding::value(refunded, lmsr::Price::from_raw(0), (num, den))));
        total_refund += refund;
        match refunds.iter_mut().find(|r| r.wallet_id == p.wallet_id.as_str()) {
            Some(entry) => {
                entry.refund_amount.0 += refund;
                entry.original_positions += 1;
            }
            None => refunds.push(UserRefund {
                wallet_id: WalletId::from(p.wallet_id.as_str()),
                refund_amount: Wei(refund),
                original_positions: 1,
            }),
        }
    }
    return_surplus(c, &m, 0, now)?;
    let cancellation = Cancellation {
        market_id: MarketId::from(m.id.as_str()),
        cancelled_at: Timestamp(now),
        total_refund_amount: Wei(total_refund),
        positions_refunded: positions.len(),
        user_refunds: refunds,
        refund_ratio: payout_ratio_text(num, den),
        canceller_wallet_id: req.canceller_wallet_id.clone(),
        cancellation_source: req.cancellation_source.clone(),
        reason: req.reason.clone(),
        cancellation_data: req.cancellation_data.clone(),
        status: MarketStatus::Cancelled,
    };
    let settled = Settled {
        final_at: None,
        finalized: true,
        status: MarketStatus::Cancelled,
        payout: (num, den),
        winner: None,
        resolution_source: m.resolution_source.as_deref(),
        resolver: None,
        body: settlement_body(&cancellation)?,
        at: now,
    };
    settle_market(c, &m, settled)?;
    c.emit(Event::MarketCancelled(cancellation.clone()));
    Ok(cancellation)
}

/// The caller has checked the session with [`live_session`] in this transaction.
pub(crate) fn claim(c: &mut Tx<'_>, trader: &Trader, position_id: &str, now: Micros) -> Result<ClaimReceipt> {
    let p = positions::locked_position(c, position_id)?.filter(|p| trader.wallet_id == p.wallet_id.as_str()).ok_or(Error::NotFound)?;
    match p.status {
        PositionStatus::Claimed => return Err(Error::conflict("already_claimed", "this position was already claimed")),
        PositionStatus::Won => {}
        other => return Err(Error::conflict("not_claimable", format!("a {other} position has nothing to claim"))),
    }
    let m = markets::market(c, &p.market_id, true)?.ok_or_else(|| Error::internal("position without market"))?;
    if m.resolution_pending(now) {
        let final_at = crate::domain::time::format_micros(m.final_at.unwrap_or(now));
        return Err(Error::conflict("resolution_pending", format!("the resolution is final at {final_at}; claims wait until then")));
    }
    if !m.finalized {
        // Due, and the service has not finalized it yet: the claim does, first.
        finalize(c, &m.id, now)?;
    }
    let (num, den) = markets::payout_terms(c, &m.id)?;
    let amount = mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0);
    let (pool, wallet) = (pool_account(&m.id), wallet_account(&trader.wallet_id, &m.token.id));
    let balance_before = accounts::balance(c, &wallet)?;
    let claim_id = TradeId::new();
    let payout = Transfer {
        kind: "payout",
        from: Some(Account::pool(&pool, &m.id)),
        to: Some(Account::wallet(&wallet, &trader.wallet_id)),
        token_id: &m.token.id,
        amount,
        reference_id: Some(&claim_id),
        at: now,
    };
    let (_, balance_after) = ledger::transfer(c, payout).map_err(|e| ledger::internal_error(e, "pool cannot pay a claim"))?;
    // The only change to what a market shows (its pool) that leaves the market row alone.
    c.exec("UPDATE markets SET revision = revision + 1 WHERE id = $1", &[Param::Text(&m.id)])?;
    let balance_after = if amount == 0 { balance_before } else { balance_after };
    c.exec(
        "UPDATE positions SET status = $1, claimed_amount = $2, updated_at = $3 WHERE id = $4",
        &[Param::Text(PositionStatus::Claimed.as_str()), Param::Money(amount), Param::Int(now), Param::Text(&p.id)],
    )?;
    let claimed = Position { status: PositionStatus::Claimed, claimed_amount: Some(amount), updated_at: now, ..p.clone() };
    c.emit(Event::PositionUpdated(Holding::value(claimed, lmsr::Price::from_raw(0), (num, den))));
    let receipt = ClaimReceipt {
        claim_id,
        position_id: p.id,
        market_id: m.id,
        outcome_id: p.outcome_id,
        session_id: trader.session_id.clone(),
        shares_claimed: Wei(p.shares),
        claimed_amount: Wei(amount),
        payout_ratio: payout_ratio_text(num, den),
        balance_before: Wei(balance_before),
        balance_after: Wei(balance_after),
        claimed_at: Timestamp(now),
        status: ClaimStatus::Completed,
    };
    c.emit(Event::ClaimCompleted { receipt: receipt.clone(), wallet_id: trader.wallet_id.clone() });
    Ok(receipt)
}

/// Markets whose resolution is due to become final at `now`, the earliest first.
pub(crate) fn finalizations_due(c: &mut dyn Conn, now: Micros) -> Result<Vec<String>> {
    let rows = c.query(
        "SELECT id FROM markets WHERE finalized = 0 AND status = 'resolved' AND final_at <= $1 ORDER BY final_at LIMIT 100",
        &[Param::Int(now)],
    )?;
    rows.iter().map(|r| r.text(0)).collect()
}

/// Makes a resolution whose dispute window has ended final: the pool returns to the treasury
/// what its winners are not owed, and `market.finalized` says so. The row update guarded by
/// the flag is what makes it happen once, whichever node or claim gets there first: the
/// others find it done and do nothing. Returns whether this call did it.
pub(crate) fn finalize(c: &mut Tx<'_>, market_id: &str, now: Micros) -> Result<bool> {
    let done = c.query(
        "UPDATE markets SET finalized = 1 WHERE id = $1 AND finalized = 0 AND status = 'resolved' AND final_at <= $2 RETURNING id",
        &[Param::Text(market_id), Param::Int(now)],
    )?;
    if done.is_empty() {
        return Ok(false);
    }
    let m = markets::market(c, market_id, true)?.ok_or_else(|| Error::internal("finalized market vanished"))?;
    let (num, den) = markets::payout_terms(c, &m.id)?;
    let winner = m.winning_outcome_id.clone().ok_or_else(|| Error::internal("a resolved market without a winner"))?;
    let owed: u128 = positions::resolved_positions(c, &m.id)?
        .iter()
        .filter(|p| p.status == PositionStatus::Won)
        .map(|p| mul_div(p.shares, num, den, Rounding::Down).unwrap_or(0))
        .sum();
    let final_at = m.final_at.unwrap_or(now);
    let returned = return_surplus(c, &m, owed, final_at.max(now))?;
    c.emit(Event::MarketFinalized(Finalization {
        market_id: MarketId::from(m.id.as_str()),
        winning_outcome_id: winner,
        final_at: Timestamp(final_at),
        payout_ratio: payout_ratio_text(num, den),
        returned_to_treasury: Wei(returned),
    }));
    Ok(true)
}
