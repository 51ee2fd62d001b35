//! Money and id types, market rules and validation: no HTTP, no SQL.

pub mod address;
pub mod fees;
pub mod ids;
pub mod market;
pub mod money;
pub mod num;
pub mod page;
pub mod time;
pub mod trade;
