//! The planner against exact figures and the lmsr crate's interval reference: what a bet
//! and a sale move, the position and record they leave, and what they refuse.

use proptest::prelude::*;

use super::*;
use crate::domain::event::Event;
use crate::domain::fees::split_fee;
use crate::domain::ids::{ProviderId, SessionId, WalletId};
use crate::domain::market::{MarketStatus, Outcome};
use crate::domain::tenant::Token;
use crate::domain::trade::bounds::{BetBounds, SellBounds};
use crate::domain::trade::SellBy;

const TOKEN: u128 = 1_000_000_000_000_000_000;
const NOW: Micros = 1_700_000_000_000_000;

/// A market open at `NOW` with `shares` outstanding per outcome, fees in units of 0.0001%
/// (100,000 = 10%). Its pool is what its liquidity and the trades to `shares` paid in at the
/// market's rounded-up cost: at least the cost function C(shares), so at least any outcome's
/// shares.
fn market(b: u128, shares: &[u128], creator_fee: u32, platform_fee: u32) -> Market {
    let empty = lmsr::cost_function(b, &vec![0; shares.len()]).expect("C(0)");
    let liquidity = empty.ceil_hi();
    let pool = liquidity + lmsr::cost_function(b, shares).expect("C(q)").ceil_hi() - empty.floor_lo();
    Market {
        id: "m".into(),
        provider_id: "p".into(),
        provider_name: "P".into(),
        game_id: None,
        question: "q".into(),
        description: String::new(),
        category: None,
        resolution_source: None,
        tags: serde_json::json!([]),
        images: serde_json::json!([]),
        metadata: serde_json::json!({}),
        pricing_method: "lmsr".into(),
        token: Token { id: "t".into(), symbol: "T".into(), name: "T".into(), decimals: 18 },
        min_bet: 1_000,
        max_bet: 1_000_000 * TOKEN,
        liquidity,
        b,
        starts_at: NOW - 1,
        ends_at: NOW + 1_000_000_000,
        creator_wallet_id: "creator".into(),
        creator_fee,
        platform_fee,
        stored_status: MarketStatus::Active,
        total_volume: 0,
        trade_count: 0,
        winning_outcome_id: None,
        settled_at: None,
        paused_at: None,
        paused_reason: None,
        final_at: None,
        finalized: true,
        created_at: NOW - 10,
        updated_at: NOW - 10,
        revision: 1,
        pool,
        outcomes: shares
            .iter()
            .enumerate()
            .map(|(i, &s)| Outcome {
                id: format!("o{i}").into(),
                market_id: "m".into(),
                index: i as i64,
                title: format!("O{i}"),
                description: String::new(),
                images: serde_json::json!([]),
                total_shares: s,
                total_volume: 0,
            })
            .collect(),
    }
}

fn trader() -> Trader {
    Trader { wallet_id: WalletId::from("w"), session_id: SessionId::from("s"), provider_id: ProviderId::from("p") }
}

/// The stored balances of `m`'s trade accounts: the wallet's `wallet`, the pool's, and none
/// yet for the creator and the platform.
fn balances(m: &Market, wallet: u128) -> Vec<(String, u128)> {
    vec![(ledger::wallet_account("w", "t"), wallet), (ledger::pool_account(&m.id), m.pool)]
}

/// The accounts of trades by wallet `w` on market `m` (token `t`, created by `creator`).
fn accounts() -> &'static TradeAccounts {
    static ACCOUNTS: std::sync::OnceLock<TradeAccounts> = std::sync::OnceLock::new();
    ACCOUNTS.get_or_init(|| TradeAccounts::of("m", "creator", "t", "w"))
}

fn start<'a>(m: &'a Market, position: Option<&'a Position>, balances: &'a [(String, u128)]) -> TradeStart<'a> {
    TradeStart {
        accounts: accounts(),
        market: m,
        position,
        balances,
        wallet_address: "0xabc",
        now: NOW,
        trade_id: TradeId::from("trade"),
        new_position_id: PositionId::from("position"),
    }
}

fn bet(outcome: &str, amount: u128) -> BetRequest {
    BetRequest { market_id: "m".into(), outcome_id: outcome.into(), amount, bounds: BetBounds::default() }
}

fn sale(outcome: &str, shares: u128) -> SellRequest {
    SellRequest { market_id: "m".into(), outcome_id: outcome.into(), by: SellBy::Shares(shares), bounds: SellBounds::default() }
}

fn held(shares: u128, invested: u128) -> Position {
    Position {
        id: "held".into(),
        market_id: "m".into(),
        outcome_id: "o0".into(),
        wallet_id: "w".into(),
        shares,
        total_invested: invested,
        status: PositionStatus::Active,
        claimed_amount: None,
        created_at: NOW - 5,
        updated_at: NOW - 5,
    }
}

fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::kind).collect()
}

/// The sum of every balance change: transfers between accounts create no money.
fn net_change(plan: &TradePlan) -> i128 {
    plan.balances.0.iter().map(|t| t.after as i128 - t.before as i128).sum()
}

#[test]
fn a_bet_pays_its_fee_to_creator_and_platform_and_buys_with_the_rest() {
    // 1% creator + 2% platform of 10 tokens: 0.3 tokens of fee, 0.1 and 0.2.
    let m = market(1_000 * TOKEN, &[0, 0], 10_000, 20_000);
    let stored = balances(&m, 50 * TOKEN);
    let begun = start(&m, None, &stored);
    let trader = trader();
    let (plan, receipt) = plan_bet(&begun, &trader, &bet("o0", 10 * TOKEN)).expect("bet");
    let net = 10 * TOKEN - 3 * TOKEN / 10;
    let bought = lmsr::buy(m.b, &[0, 0], 0, net).expect("reference buy");
    let transfers: Vec<(&str, &str, &str, u128)> =
        plan.transfers.iter().map(|t| (t.kind, t.from.unwrap().id, t.to.unwrap().id, t.amount)).collect();
    assert_eq!(
        transfers,
        vec![
            ("bet", "wallet:w:t", "pool:m", net),
            ("creator_fee", "wallet:w:t", "wallet:creator:t", TOKEN / 10),
            ("platform_fee", "wallet:w:t", "platform:t", 2 * TOKEN / 10),
        ]
    );
    assert_eq!(plan.balances.after("wallet:w:t"), 40 * TOKEN);
    assert_eq!(plan.balances.after("pool:m"), m.pool + net);
    assert_eq!(plan.balances.after("wallet:creator:t"), TOKEN / 10);
    assert_eq!(plan.balances.created().map(|t| t.account.id).collect::<Vec<_>>(), ["wallet:creator:t", "platform:t"]);
    assert_eq!(net_change(&plan), 0);
    assert_eq!((plan.position.id.as_str(), plan.position.shares, plan.position.total_invested), ("position", bought.shares, net));
    assert_eq!(plan.stored_status, None);
    assert_eq!(
        (plan.record().amount.0, plan.record().shares.0, plan.record().fee.0, plan.record().net_amount.0),
        (10 * TOKEN, bought.shares, 3 * TOKEN / 10, net)
    );
    assert_eq!(plan.totals.total_shares, bought.shares);
    assert_eq!((plan.totals.outcome_volume, plan.totals.market_volume, plan.totals.pool), (10 * TOKEN, 10 * TOKEN, m.pool + net));
    assert_eq!(plan.prices, lmsr::prices(m.b, &[bought.shares, 0]).unwrap());
    assert_eq!(kinds(&plan.events), ["balance.updated", "balance.updated", "position.updated", "trade.created"]);
    assert_eq!((receipt.amount.0, receipt.shares_purchased.0, receipt.net_amount.0), (10 * TOKEN, bought.shares, net));
    assert_eq!((receipt.fill.balance_before.0, receipt.fill.balance_after.0), (50 * TOKEN, 40 * TOKEN));
    assert_eq!(receipt.fill.new_outcome_price, plan.prices[0].to_string());
}

#[test]
fn a_bet_adds_to_a_held_position_and_keeps_its_id() {
    let m = market(1_000 * TOKEN, &[5 * TOKEN, 0], 0, 0);
    let stored = balances(&m, 50 * TOKEN);
    let position = held(5 * TOKEN, 3 * TOKEN);
    let begun = start(&m, Some(&position), &stored);
    let trader = trader();
    let (plan, _) = plan_bet(&begun, &trader, &bet("o0", TOKEN)).expect("bet");
    let bought = lmsr::buy(m.b, &[5 * TOKEN, 0], 0, TOKEN).unwrap().shares;
    assert_eq!((plan.position.id.as_str(), plan.position.shares, plan.position.total_invested), ("held", 5 * TOKEN + bought, 4 * TOKEN));
    assert_eq!(plan.stored_status, Some(PositionStatus::Active));
    // No fee: only the wallet and pool move, and only the wallet is a wallet.
    assert_eq!(kinds(&plan.events), ["balance.updated", "position.updated", "trade.created"]);
}

#[test]
fn a_bet_beyond_the_balance_is_refused_with_its_amount() {
    let m = market(1_000 * TOKEN, &[0, 0], 0, 0);
    let stored = balances(&m, TOKEN - 1);
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let e = plan_bet(&begun, &trader_, &bet("o0", TOKEN)).unwrap_err();
    assert!(matches!(&e, Error::Rule { code: "insufficient_balance", detail, .. } if detail.ends_with(&TOKEN.to_string())), "{e:?}");
    // A wallet with no account has nothing.
    let none = vec![(ledger::pool_account("m"), m.pool)];
    assert!(matches!(
        plan_bet(&start(&m, None, &none), &trader(), &bet("o0", 1_000)),
        Err(Error::Rule { code: "insufficient_balance", .. })
    ));
}

#[test]
fn a_trade_on_another_providers_market_or_an_unknown_outcome_is_refused_first() {
    let m = market(1_000 * TOKEN, &[0, 0], 0, 0);
    let stored = balances(&m, 0);
    let stranger = Trader { provider_id: ProviderId::from("other"), ..trader() };
    assert!(matches!(
        plan_bet(&start(&m, None, &stored), &stranger, &bet("o9", TOKEN)),
        Err(Error::Forbidden { code: "wrong_provider", .. })
    ));
    assert!(matches!(plan_bet(&start(&m, None, &stored), &trader(), &bet("o9", TOKEN)), Err(Error::Rule { code: "unknown_outcome", .. })));
    assert!(matches!(plan_sell(&start(&m, None, &stored), &trader(), &sale("o9", 1)), Err(Error::Rule { code: "unknown_outcome", .. })));
}

#[test]
fn a_trade_on_a_closed_market_is_refused() {
    let mut m = market(1_000 * TOKEN, &[0, 0], 0, 0);
    m.ends_at = NOW;
    let stored = balances(&m, 50 * TOKEN);
    assert!(matches!(
        plan_bet(&start(&m, None, &stored), &trader(), &bet("o0", TOKEN)),
        Err(Error::Conflict { code: "market_not_open", .. })
    ));
}

#[test]
fn a_sale_pays_the_wallet_net_of_the_fee_and_removes_basis_rounded_up() {
    let q = [10 * TOKEN, 0];
    let m = market(1_000 * TOKEN, &q, 10_000, 10_000);
    let stored = balances(&m, 0);
    // 3 of 7 tokens' worth of shares leave 4/7 of a basis of 10 wei: 10 - ceil(30/7) = 5.
    let position = held(7 * TOKEN, 10);
    let begun = start(&m, Some(&position), &stored);
    let trader = trader();
    let (plan, receipt) = plan_sell(&begun, &trader, &sale("o0", 3 * TOKEN)).expect("sell");
    let proceeds = lmsr::sell(m.b, &q, 0, 3 * TOKEN).unwrap().proceeds;
    let fee = split_fee(proceeds, 10_000, 10_000);
    assert_eq!((plan.position.shares, plan.position.total_invested, plan.position.status), (4 * TOKEN, 5, PositionStatus::Active));
    assert_eq!(plan.balances.after("wallet:w:t"), proceeds - fee.total);
    assert_eq!(plan.balances.after("pool:m"), m.pool - proceeds);
    assert_eq!(net_change(&plan), 0);
    assert_eq!((receipt.shares_sold.0, receipt.proceeds.0, receipt.net_proceeds.0), (3 * TOKEN, proceeds, proceeds - fee.total));
    assert_eq!(plan.record().amount.0, proceeds);
    assert_eq!(plan.totals.total_shares, 7 * TOKEN);
}

#[test]
fn selling_every_share_closes_the_position_with_no_basis() {
    let q = [5 * TOKEN, 0];
    let m = market(1_000 * TOKEN, &q, 0, 0);
    let stored = balances(&m, 0);
    let position = held(5 * TOKEN, 2 * TOKEN);
    let begun = start(&m, Some(&position), &stored);
    let trader = trader();
    let (plan, _) = plan_sell(&begun, &trader, &sale("o0", 5 * TOKEN)).expect("sell");
    assert_eq!((plan.position.shares, plan.position.total_invested, plan.position.status), (0, 0, PositionStatus::Closed));
}

#[test]
fn a_sale_needs_an_active_position_with_the_shares() {
    let m = market(1_000 * TOKEN, &[5 * TOKEN, 0], 0, 0);
    let stored = balances(&m, 0);
    assert!(matches!(
        plan_sell(&start(&m, None, &stored), &trader(), &sale("o0", 1)),
        Err(Error::Rule { code: "insufficient_shares", .. })
    ));
    let position = held(5, 5);
    assert!(matches!(
        plan_sell(&start(&m, Some(&position), &stored), &trader(), &sale("o0", 6)),
        Err(Error::Rule { code: "insufficient_shares", .. })
    ));
    let lost = Position { status: PositionStatus::Lost, ..held(5, 5) };
    assert!(matches!(
        plan_sell(&start(&m, Some(&lost), &stored), &trader(), &sale("o0", 1)),
        Err(Error::Rule { code: "insufficient_shares", .. })
    ));
}

#[test]
fn the_trade_clock_never_runs_behind_the_markets_last_change() {
    let mut m = market(1_000 * TOKEN, &[0, 0], 0, 0);
    m.updated_at = NOW + 5;
    let stored = balances(&m, 50 * TOKEN);
    let begun = start(&m, None, &stored);
    let trader = trader();
    let (plan, receipt) = plan_bet(&begun, &trader, &bet("o0", TOKEN)).expect("bet");
    assert_eq!((plan.totals.at, receipt.fill.created_at.0, plan.record().created_at.0), (NOW + 5, NOW + 5, NOW + 5));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any bet buys the most shares its net amount pays for at the market's rounded-up cost,
    /// never less than the exact cost; moves no money out of nowhere; and leaves the pool
    /// able to pay every outcome's shares.
    #[test]
    fn a_bet_buys_what_the_reference_prices_and_keeps_the_market_solvent(
        b in 1_000u128..1_000_000 * TOKEN,
        q0 in 0u128..2_000 * TOKEN,
        q1 in 0u128..2_000 * TOKEN,
        amount in 1_000u128..100_000 * TOKEN,
        creator in 0u32..100_000,
        platform in 0u32..100_000,
    ) {
        let m = market(b, &[q0, q1], creator, platform);
        let stored = balances(&m, 200_000 * TOKEN);
        let begun = start(&m, None, &stored);
        let trader = trader();
        let result = plan_bet(&begun, &trader, &bet("o1", amount));
        let Ok((plan, receipt)) = result else {
            prop_assert!(matches!(result, Err(Error::Rule { code: "trade_too_small" | "amount_too_large", .. })), "{result:?}");
            return Ok(());
        };
        let net = receipt.net_amount.0;
        let shares = receipt.shares_purchased.0;
        prop_assert_eq!(net, amount - split_fee(amount, creator, platform).total);
        prop_assert!(lmsr::buy_cost(b, &[q0, q1], 1, shares).unwrap() <= net);
        prop_assert!(lmsr::buy_cost(b, &[q0, q1], 1, shares + 1).map_or(true, |cost| cost > net));
        prop_assert!(lmsr::cost_interval(b, &[q0, q1], 1, shares).unwrap().proven_le(net));
        prop_assert_eq!(net_change(&plan), 0);
        let pool = plan.balances.after("pool:m");
        prop_assert!(pool >= q0.max(q1 + shares), "pool {} below the shares outstanding", pool);
        prop_assert_eq!(plan.totals.pool, pool);
    }

    /// Any sale pays at most the exact proceeds, rounded down, and the rest of the basis it
    /// leaves is never more than the sold share of it allows.
    #[test]
    fn a_sale_pays_no_more_than_the_reference_and_keeps_the_market_solvent(
        b in 1_000u128..1_000_000 * TOKEN,
        q0 in 1u128..2_000 * TOKEN,
        q1 in 0u128..2_000 * TOKEN,
        held_shares in 1u128..2_000 * TOKEN,
        sold_part in 1u128..=1_000,
        invested in 0u128..2_000 * TOKEN,
        fees in 0u32..200_000,
    ) {
        let held_shares = held_shares.min(q0);
        let sold = (held_shares * sold_part / 1_000).max(1);
        let m = market(b, &[q0, q1], fees / 2, fees - fees / 2);
        let stored = balances(&m, 0);
        let position = held(held_shares, invested);
        let begun = start(&m, Some(&position), &stored);
        let trader = trader();
        let result = plan_sell(&begun, &trader, &sale("o0", sold));
        let Ok((plan, receipt)) = result else {
            prop_assert!(matches!(result, Err(Error::Rule { code: "trade_too_small", .. })), "{result:?}");
            return Ok(());
        };
        let exact = lmsr::proceeds_interval(b, &[q0, q1], 0, sold).unwrap();
        prop_assert_eq!(receipt.proceeds.0, exact.floor_lo());
        prop_assert_eq!(net_change(&plan), 0);
        prop_assert!(plan.balances.after("pool:m") >= (q0 - sold).max(q1));
        let kept = invested - mul_div(invested, sold, held_shares, Rounding::Down).unwrap();
        prop_assert!(plan.position.total_invested <= kept, "basis {} above {}", plan.position.total_invested, kept);
    }
}

fn bounded_bet(outcome: &str, amount: u128, min_shares: Option<u128>, max_price: Option<u128>) -> BetRequest {
    BetRequest { bounds: BetBounds { min_shares, max_price: max_price.map(lmsr::Price::from_raw) }, ..bet(outcome, amount) }
}

fn bounded_sale(by: SellBy, bounds: SellBounds) -> SellRequest {
    SellRequest { by, bounds, ..sale("o0", 0) }
}

fn moved(result: Result<impl std::fmt::Debug>, current: lmsr::Price) {
    match result {
        Err(Error::PriceMoved { current_price, .. }) => assert_eq!(current_price, current.to_string()),
        other => panic!("expected price_moved, got {other:?}"),
    }
}

/// The price of outcome 0 after `shares` more of it on `q`, raw.
fn price_after(b: u128, q: &[u128], shares: u128) -> u128 {
    let mut q = q.to_vec();
    q[0] += shares;
    lmsr::prices(b, &q).unwrap()[0].raw()
}

#[test]
fn min_shares_holds_at_its_exact_edge() {
    let m = market(1_000 * TOKEN, &[3 * TOKEN, 0], 10_000, 5_000);
    let stored = balances(&m, 50 * TOKEN);
    let (_, plain) = plan_bet(&start(&m, None, &stored), &trader(), &bet("o0", 10 * TOKEN)).expect("plain bet");
    let shares = plain.shares_purchased.0;
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let (_, edge) = plan_bet(&begun, &trader_, &bounded_bet("o0", 10 * TOKEN, Some(shares), None)).expect("edge");
    assert_eq!((edge.shares_purchased.0, edge.amount.0, edge.unfilled_amount.0), (shares, 10 * TOKEN, 0));
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let over = plan_bet(&begun, &trader_, &bounded_bet("o0", 10 * TOKEN, Some(shares + 1), None));
    moved(over, m.prices().unwrap()[0]);
}

#[test]
fn a_limit_above_the_full_fill_changes_nothing() {
    let m = market(1_000 * TOKEN, &[0, 0], 10_000, 0);
    let stored = balances(&m, 50 * TOKEN);
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let (plain_plan, plain) = plan_bet(&begun, &trader_, &bet("o0", 10 * TOKEN)).expect("plain");
    let after = plain_plan.prices[0].raw();
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let (plan, limited) = plan_bet(&begun, &trader_, &bounded_bet("o0", 10 * TOKEN, None, Some(after))).expect("limit");
    assert_eq!((limited.amount.0, limited.unfilled_amount.0, limited.shares_purchased.0), (10 * TOKEN, 0, plain.shares_purchased.0));
    assert_eq!(plan.prices, plain_plan.prices);
}

#[test]
fn a_limit_fills_the_largest_amount_within_it_and_no_more() {
    let q = [40 * TOKEN, 15 * TOKEN];
    let m = market(1_000 * TOKEN, &q, 10_000, 15_000);
    let stored = balances(&m, 500 * TOKEN);
    let limit = 55 * lmsr::PRICE_SCALE / 100;
    let req = bounded_bet("o0", 400 * TOKEN, None, Some(limit));
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let (plan, receipt) = plan_bet(&begun, &trader_, &req).expect("partial fill");
    let filled = receipt.amount.0;
    assert!(filled < 400 * TOKEN && filled > 0);
    assert_eq!(receipt.unfilled_amount.0, 400 * TOKEN - filled);
    assert!(plan.prices[0].raw() <= limit, "price after the fill above the limit");
    // One wei more would buy past the limit.
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let (next_plan, _) = plan_bet(&begun, &trader_, &bet("o0", filled + 1)).expect("one more wei");
    assert!(next_plan.prices[0].raw() >= limit, "the fill stopped short of the limit");
    // The fill is the bet of its amount, paid and recorded as such.
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let (same, _) = plan_bet(&begun, &trader_, &bet("o0", filled)).expect("same bet");
    assert_eq!((plan.record().amount.0, plan.record().shares.0), (same.record().amount.0, same.record().shares.0));
    assert_eq!(plan.balances.after("wallet:w:t"), 500 * TOKEN - filled);
    assert_eq!(plan.totals.market_volume, filled);
}

#[test]
fn a_limit_below_the_price_now_or_a_fill_below_the_minimum_moves_nothing() {
    let q = [40 * TOKEN, 15 * TOKEN];
    let m = market(1_000 * TOKEN, &q, 0, 0);
    let stored = balances(&m, 500 * TOKEN);
    let now = m.prices().unwrap()[0];
    moved(plan_bet(&start(&m, None, &stored), &trader(), &bounded_bet("o0", 10 * TOKEN, None, Some(now.raw() - 1))), now);
    // A limit a hair above the price: the fill is below min_bet.
    let mut tight = m.clone();
    tight.min_bet = TOKEN;
    moved(plan_bet(&start(&tight, None, &stored), &trader(), &bounded_bet("o0", 10 * TOKEN, None, Some(price_after(m.b, &q, 1_000)))), now);
}

#[test]
fn a_limit_applies_first_then_min_shares_judges_the_fill() {
    let q = [0, 0];
    let m = market(1_000 * TOKEN, &q, 0, 0);
    let stored = balances(&m, 500 * TOKEN);
    let limit = 6 * lmsr::PRICE_SCALE / 10;
    let begun = start(&m, None, &stored);
    let trader_ = trader();
    let (_, fill) = plan_bet(&begun, &trader_, &bounded_bet("o0", 400 * TOKEN, None, Some(limit))).expect("fill");
    let shares = fill.shares_purchased.0;
    let ok = bounded_bet("o0", 400 * TOKEN, Some(shares), Some(limit));
    assert_eq!(plan_bet(&start(&m, None, &stored), &trader(), &ok).expect("edge").1.shares_purchased.0, shares);
    let short = bounded_bet("o0", 400 * TOKEN, Some(shares + 1), Some(limit));
    moved(plan_bet(&start(&m, None, &stored), &trader(), &short), m.prices().unwrap()[0]);
}

#[test]
fn a_partial_fill_still_needs_the_balance_of_the_requested_amount() {
    let m = market(1_000 * TOKEN, &[0, 0], 0, 0);
    let stored = balances(&m, 100 * TOKEN);
    let req = bounded_bet("o0", 400 * TOKEN, None, Some(6 * lmsr::PRICE_SCALE / 10));
    assert!(matches!(plan_bet(&start(&m, None, &stored), &trader(), &req), Err(Error::Rule { code: "insufficient_balance", .. })));
}

#[test]
fn a_paused_market_refuses_trades_and_previews() {
    let mut m = market(1_000 * TOKEN, &[TOKEN, 0], 0, 0);
    m.paused_at = Some(NOW - 2);
    m.paused_reason = Some("checking the feed".into());
    let stored = balances(&m, 50 * TOKEN);
    let position = held(TOKEN, TOKEN);
    assert!(matches!(
        plan_bet(&start(&m, None, &stored), &trader(), &bet("o0", TOKEN)),
        Err(Error::Conflict { code: "market_paused", .. })
    ));
    assert!(matches!(
        plan_sell(&start(&m, Some(&position), &stored), &trader(), &sale("o0", 1)),
        Err(Error::Conflict { code: "market_paused", .. })
    ));
    assert!(matches!(super::super::quote::quote_buy(&m, 0, TOKEN, NOW), Err(Error::Conflict { code: "market_paused", .. })));
}

#[test]
fn sale_bounds_hold_at_their_exact_edges() {
    let q = [50 * TOKEN, 0];
    let m = market(1_000 * TOKEN, &q, 10_000, 10_000);
    let stored = balances(&m, 0);
    let position = held(50 * TOKEN, 20 * TOKEN);
    let now = m.prices().unwrap()[0];
    let (_, plain) = plan_sell(&start(&m, Some(&position), &stored), &trader(), &sale("o0", 10 * TOKEN)).expect("plain sale");
    let net = plain.net_proceeds.0;
    let at = |min: u128| SellBounds { min_proceeds: Some(min), ..SellBounds::default() };
    let begun = start(&m, Some(&position), &stored);
    let trader_ = trader();
    let edge = plan_sell(&begun, &trader_, &bounded_sale(SellBy::Shares(10 * TOKEN), at(net)));
    assert_eq!(edge.expect("edge").1.net_proceeds.0, net);
    moved(plan_sell(&start(&m, Some(&position), &stored), &trader(), &bounded_sale(SellBy::Shares(10 * TOKEN), at(net + 1))), now);

    // By target: the shares it needs, and one fewer allowed.
    let (_, target) =
        plan_sell(&start(&m, Some(&position), &stored), &trader(), &bounded_sale(SellBy::TargetProceeds(net), SellBounds::default()))
            .expect("target sale");
    let needed = target.shares_sold.0;
    let most = |max: u128| SellBounds { max_shares: Some(max), ..SellBounds::default() };
    let begun = start(&m, Some(&position), &stored);
    let trader_ = trader();
    let edge = plan_sell(&begun, &trader_, &bounded_sale(SellBy::TargetProceeds(net), most(needed)));
    assert_eq!(edge.expect("edge").1.shares_sold.0, needed);
    moved(plan_sell(&start(&m, Some(&position), &stored), &trader(), &bounded_sale(SellBy::TargetProceeds(net), most(needed - 1))), now);
}

#[test]
fn a_sale_limit_sells_the_most_shares_that_keep_the_price_at_or_above_it() {
    let q = [300 * TOKEN, 0];
    let m = market(1_000 * TOKEN, &q, 0, 20_000);
    let stored = balances(&m, 0);
    let position = held(300 * TOKEN, 200 * TOKEN);
    let limit = 55 * lmsr::PRICE_SCALE / 100;
    let bounds = SellBounds { min_price: Some(lmsr::Price::from_raw(limit)), ..SellBounds::default() };
    let begun = start(&m, Some(&position), &stored);
    let trader_ = trader();
    let (plan, receipt) = plan_sell(&begun, &trader_, &bounded_sale(SellBy::Shares(300 * TOKEN), bounds)).expect("partial sale");
    let sold = receipt.shares_sold.0;
    assert!(sold > 0 && sold < 300 * TOKEN);
    assert_eq!(receipt.unfilled_shares.0, 300 * TOKEN - sold);
    assert!(plan.prices[0].raw() >= limit);
    assert!(lmsr::prices(m.b, &[300 * TOKEN - sold - 1, 0]).unwrap()[0].raw() <= limit);
    assert_eq!(plan.position.shares, 300 * TOKEN - sold);
    // Above the price now: nothing can be sold.
    let now = m.prices().unwrap()[0];
    let above = SellBounds { min_price: Some(lmsr::Price::from_raw(now.raw() + 1)), ..SellBounds::default() };
    moved(plan_sell(&start(&m, Some(&position), &stored), &trader(), &bounded_sale(SellBy::Shares(TOKEN), above)), now);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// A limit bet fills the largest amount whose price after it is within the limit: the
    /// price after the fill is at most the limit, and one wei more would reach it.
    #[test]
    fn a_limit_bet_fills_exactly_to_its_limit(
        b in 1_000_000u128..1_000_000 * TOKEN,
        q0 in 0u128..2_000 * TOKEN,
        q1 in 0u128..2_000 * TOKEN,
        amount in 1_000u128..10_000 * TOKEN,
        limit_permille in 1u128..1_000,
        fees in 0u32..100_000,
    ) {
        let m = market(b, &[q0, q1], fees / 2, fees - fees / 2);
        let stored = balances(&m, 20_000 * TOKEN);
        let limit = limit_permille * (lmsr::PRICE_SCALE / 1_000);
        let begun = start(&m, None, &stored);
        let trader_ = trader();
        let result = plan_bet(&begun, &trader_, &bounded_bet("o0", amount, None, Some(limit)));
        let Ok((plan, receipt)) = result else {
            prop_assert!(matches!(result, Err(Error::PriceMoved { .. } | Error::Rule { code: "trade_too_small", .. })), "{result:?}");
            return Ok(());
        };
        prop_assert!(plan.prices[0].raw() <= limit);
        let filled = receipt.amount.0;
        prop_assert_eq!(filled + receipt.unfilled_amount.0, amount);
        if filled < amount {
            let begun = start(&m, None, &stored);
            let trader_ = trader();
            let next = plan_bet(&begun, &trader_, &bet("o0", filled + 1));
            let (next, _) = next.expect("one more wei");
            prop_assert!(next.prices[0].raw() >= limit, "stopped {} short", limit - next.prices[0].raw());
        }
    }
}
