//! Leaderboards read from the trade records and the positions of a market, or of every
//! market of a provider in one token.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::history::holdings::value_position;
use super::positions::POSITION_COLUMNS;
use super::sql::{query_as, Conn, Param};
use super::Store;
use crate::domain::leaderboard::{rank, LeaderboardRow, RankBy, Tally};
use crate::domain::position::Position;
use crate::error::{Error, Result};

/// A ranked board, shared by the requests that read it.
pub(crate) type Board = Arc<Vec<LeaderboardRow>>;

/// Which markets a board covers.
pub(crate) enum Scope {
    Market(String),
    Provider { provider_id: String, token_id: String },
}

/// Every wallet's standing in the scope; None for an unknown market.
pub(crate) fn tally(c: &mut dyn Conn, scope: &Scope) -> Result<Option<Tally>> {
    let (filter, params): (&str, Vec<Param<'_>>) = match scope {
        Scope::Market(market_id) => {
            if c.query_opt("SELECT 1 FROM markets WHERE id = $1", &[Param::Text(market_id)])?.is_none() {
                return Ok(None);
            }
            ("market_id = $1", vec![Param::Text(market_id)])
        }
        Scope::Provider { provider_id, token_id } => (
            "market_id IN (SELECT id FROM markets WHERE provider_id = $1 AND token_id = $2)",
            vec![Param::Text(provider_id), Param::Text(token_id)],
        ),
    };
    let mut tally = Tally::default();
    let sql = format!("SELECT wallet_id, wallet_address, transaction_type, amount, net_amount FROM trades WHERE {filter}");
    for r in c.query(&sql, &params)? {
        tally.trade(r.text(0)?.into(), r.text(1)?, r.text(2)? == "buy", r.money(3)?, r.money(4)?)?;
    }
    let sql = format!("SELECT {POSITION_COLUMNS} FROM positions WHERE {filter}");
    let positions: Vec<Position> = query_as(c, &sql, &params)?;
    let mut seen = HashMap::new();
    for p in positions {
        let (wallet_id, paid_out) = (p.wallet_id.clone(), p.claimed_amount.unwrap_or(0));
        let holding = value_position(c, p, &mut seen)?;
        tally.position(&wallet_id, paid_out, holding.current_value.0)?;
    }
    Ok(Some(tally))
}

/// Ranked boards kept for up to `BOARD_TTL` (the contract lets them lag 5 s), by scope and
/// order.
#[derive(Default)]
pub(crate) struct Leaderboards {
    boards: std::sync::Mutex<HashMap<(String, RankBy), (Instant, Board)>>,
}

/// How long a computed board is served; with its computation it stays under 5 s behind.
const BOARD_TTL: Duration = Duration::from_secs(4);
/// Boards kept at once; expired ones go first.
const MAX_BOARDS: usize = 10_000;

impl Leaderboards {
    pub(crate) async fn board(&self, store: &Store, key: String, scope: Scope, by: RankBy) -> Result<Board> {
        let cache_key = (key, by);
        if let Some((at, board)) = self.boards.lock().map_err(Error::internal)?.get(&cache_key) {
            if at.elapsed() < BOARD_TTL {
                return Ok(board.clone());
            }
        }
        let started = Instant::now();
        let tally = store.read(move |c| tally(c, &scope)).await?.ok_or(Error::NotFound)?;
        let board = Arc::new(rank(tally, by));
        let mut boards = self.boards.lock().map_err(Error::internal)?;
        if boards.len() >= MAX_BOARDS {
            boards.retain(|_, (at, _)| at.elapsed() < BOARD_TTL);
            if boards.len() >= MAX_BOARDS {
                boards.clear();
            }
        }
        boards.insert(cache_key, (started, board.clone()));
        Ok(board)
    }
}
