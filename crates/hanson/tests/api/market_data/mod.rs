//! Market data: candles, the ticker, leaderboards and exports, each checked against values
//! computed here from the trades the test made.

mod candles;
mod exports;
mod leaderboard;
mod ticker;
