//! Black-box tests of the HTTP API over real HTTP.

mod helpers;

mod auth;
mod cli;
mod errors;
mod markets;
mod money;
mod openapi;
mod previews;
mod users;
