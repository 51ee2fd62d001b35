//! Which node runs the trades when several share one database: the one holding a session
//! advisory lock (`TRADE_LEADER_LOCK`) on a connection of its own. It writes where it
//! answers (its URL) and the key its forwarded requests carry into `settings`; the other
//! nodes read them there and forward their bets and sells to it (`api::forward`). The lock
//! goes with the leader's connection, so a node that dies or loses its database is replaced
//! within a check or two. Correctness never rests on this: every node can run any trade (the
//! trade batches lock the database), and forwarding only spares the nodes from taking the
//! batch lock in turns, each reading again what the other wrote.

use std::time::Duration;

use ::postgres::NoTls;
use serde::{Deserialize, Serialize};

use super::{pg_error, PostgresBackend};
use crate::error::{Error, Result};

/// Key of the advisory lock the trade leader holds ("hanson" + 2).
const TRADE_LEADER_LOCK: i64 = 0x6861_6e73_6f70;
/// The `settings` row naming the leader.
const LEADER_SETTING: &str = "trade_leader";
/// How often a node tries to take the lead, reads who holds it, or (leading) checks its
/// connection.
const LEADER_CHECK: Duration = Duration::from_secs(1);

/// Where the leader answers and the key its forwarded requests carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Leader {
    pub(crate) url: String,
    pub(crate) key: String,
}

/// What a node knows of the lead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Leadership {
    /// This node holds the lock; its own `Leader` is stored.
    Leading,
    /// Another node holds it (or held it last and has not been replaced yet).
    Following(Leader),
    /// Not known: no connection, or no leader stored.
    Unknown,
}

impl PostgresBackend {
    /// Takes the lead when it is free, or follows whoever holds it, telling `report` of
    /// every check, until `stopped`. Runs on a thread of its own (the driver is blocking);
    /// reconnects after a failure.
    pub(crate) fn lead_trades(&self, own: &Leader, stopped: impl Fn() -> bool, mut report: impl FnMut(Leadership)) {
        while !stopped() {
            if let Err(e) = self.hold_or_follow(own, &stopped, &mut report) {
                report(Leadership::Unknown);
                tracing::warn!(error = %e, "trade leadership: connection failed; trying again");
                std::thread::sleep(LEADER_CHECK);
            }
        }
    }

    fn hold_or_follow(&self, own: &Leader, stopped: &impl Fn() -> bool, report: &mut impl FnMut(Leadership)) -> Result<()> {
        let mut config = ::postgres::Config::from(self.pool.config.clone());
        // Told apart from the pool's connections in pg_stat_activity.
        let name = format!("{} leader", config.get_application_name().unwrap_or("hanson"));
        config.application_name(&name);
        let mut client = config
            .connect(NoTls)
            .map_err(|e| Error::Unavailable(format!("cannot connect to PostgreSQL at {}: {}", self.pool.target, pg_error(&e))))?;
        let own_setting = serde_json::to_string(own).map_err(Error::internal)?;
        let mut leading = false;
        while !stopped() {
            if leading {
                // The lock lives as long as this connection does.
                client.is_valid(LEADER_CHECK * 5).map_err(|e| pg_error(&e))?;
            } else if client.query_one("SELECT pg_try_advisory_lock($1)", &[&TRADE_LEADER_LOCK]).map_err(|e| pg_error(&e))?.get(0) {
                client
                    .execute(
                        "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                        &[&LEADER_SETTING, &own_setting],
                    )
                    .map_err(|e| pg_error(&e))?;
                leading = true;
                tracing::info!(url = %own.url, "this node now runs the trades of every node (trade leader)");
            }
            report(if leading { Leadership::Leading } else { self.stored_leader(&mut client, own)? });
            std::thread::sleep(LEADER_CHECK);
        }
        Ok(())
    }

    fn stored_leader(&self, client: &mut ::postgres::Client, own: &Leader) -> Result<Leadership> {
        let row = client.query_opt("SELECT value FROM settings WHERE name = $1", &[&LEADER_SETTING]).map_err(|e| pg_error(&e))?;
        let stored = row.and_then(|row| serde_json::from_str::<Leader>(row.get(0)).ok());
        // This node's own row, left by a connection it lost: not a leader to forward to.
        Ok(match stored {
            Some(leader) if leader.url != own.url => Leadership::Following(leader),
            _ => Leadership::Unknown,
        })
    }
}
