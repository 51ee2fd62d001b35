//! The domain: entities, statuses, ids and money types, and the rules of markets, trades and
//! sessions. It knows nothing of HTTP or SQL.

pub mod address;
pub mod candle;
pub mod event;
pub mod webhook;
pub mod fees;
pub mod ledger;
pub mod ids;
pub mod market;
pub mod money;
pub mod num;
pub mod page;
pub mod position;
pub mod session;
pub mod settlement;
pub mod tenant;
pub mod time;
pub mod trade;
pub mod trade_record;
pub mod views;
