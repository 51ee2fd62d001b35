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

pub(super) mod app;
pub(super) mod arena;
pub(super) mod library;
pub(super) mod process;
// The chaos tests' proxy: PostgreSQL only, so unused in the SQLite expansion.
#[allow(dead_code)]
pub(super) mod proxy;
pub(super) mod sse;
pub(super) mod wallet;
pub(super) mod webhooks;
pub(super) mod ws;

pub(crate) use super::BACKEND;
pub(crate) use crate::contract;
pub(super) use app::*;
pub(super) use arena::*;
pub(super) use library::{Limits, Rule, Settings};
pub(super) use process::*;
pub(super) use sse::*;
pub(super) use wallet::*;
pub(super) use webhooks::*;
pub(super) use ws::*;
