//! The domain: entities, statuses, ids and money types, and the rules of markets, trades and
//! sessions. It knows nothing of HTTP or SQL.

pub(crate) mod address;
pub mod candle;
pub(crate) mod event;
pub mod fees;
pub(crate) mod ids;
pub(crate) mod json_maps;
pub(crate) mod leaderboard;
pub(crate) mod ledger;
pub(crate) mod market;
pub(crate) mod market_input;
pub mod money;
pub mod num;
pub mod page;
pub(crate) mod position;
pub(crate) mod session;
pub(crate) mod settlement;
pub mod siwe;
pub(crate) mod tenant;
pub mod time;
pub(crate) mod trade;
pub(crate) mod trade_record;
pub(crate) mod views;
pub mod webhook;
