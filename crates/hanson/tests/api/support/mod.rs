//! What the API tests share. Expanded once per backend by `api_tests!` (see `main.rs`):
//! `app.rs` creates the databases of the backend whose module it is in (`super::BACKEND`).
//!
//! - `app`: the in-process server on a fresh database (`TestApp`), the provider fixture
//!   (`Fixture`), responses and problem assertions.
//! - `wallet`: wallets that sign in for real (`TestWallet`, `login`, `login_at`).
//! - `arena`: the trader arena: funded, logged-in `Trader`s, the `Arena` of one market and its
//!   traders, bets and sells through any server, trade records replayed, `hanson audit`.
//! - `sse`, `ws`: the stream clients; every event they receive is checked against the
//!   AsyncAPI document.
//! - `webhooks`: a webhook receiver whose bodies are checked against the documents.
//! - `process`: `hanson serve` processes and the CLI.
//! - `library`: every use of the library's internals (see there).
//!
//! Each backend's tests use a different part of it (the PostgreSQL-only ones more), hence
//! the `dead_code` allowance.
#![allow(dead_code)]

pub mod app;
pub mod arena;
pub mod library;
pub mod process;
pub mod sse;
pub mod wallet;
pub mod webhooks;
pub mod ws;

pub(crate) use super::BACKEND;
pub(crate) use crate::contract;
pub use app::*;
pub use arena::*;
pub use library::{Limits, Rule, Settings};
pub use process::*;
pub use sse::*;
pub use wallet::*;
pub use webhooks::*;
pub use ws::*;
