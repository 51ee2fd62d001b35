//! Hanson: a self-hostable prediction-market service with an exact LMSR market maker.
#![recursion_limit = "512"]

pub mod api;
pub mod auth;
pub mod cli;
pub mod domain;
pub mod error;
pub mod events;
#[doc(hidden)]
pub mod fuzzing;
pub mod metrics;
pub mod server;
pub mod store;
