//! Trading over real HTTP: bets and sells, settlement, search and the audit. The trader arena
//! they share (`Arena`, `Trader`, `bet_on`, `audit`) is in `support/arena.rs`.

use super::support;

mod audit;
mod bets;
mod operations;
mod protection;
mod search;
mod settlement;
