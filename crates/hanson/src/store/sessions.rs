//! Sessions as a trade checks them: the session and its wallet's address.

use crate::domain::session::Session;
use crate::error::Result;
use crate::store::sql::{id_list, Param, Row};

/// A session as a trade checks it, with its wallet's address.
#[derive(Clone)]
pub(crate) struct KeptSession {
    pub(crate) session: Session,
    pub(crate) address: String,
}

/// The statement reading the sessions among `ids` that exist, with their wallets' addresses;
/// [`sessions_from`] reads its rows.
pub(crate) fn sessions_read<'a>(ids: &'a [&'a str]) -> (String, Vec<Param<'a>>) {
    let (list, params) = id_list(ids);
    let sql = format!(
        "SELECT s.id, s.wallet_id, s.provider_id, s.revoked_at, s.expires_at, w.address FROM sessions s JOIN wallets w ON w.id = s.wallet_id WHERE s.id IN ({list})"
    );
    (sql, params)
}

pub(crate) fn sessions_from(rows: &[Row]) -> Result<Vec<KeptSession>> {
    rows.iter()
        .map(|r| {
            let session = Session {
                id: r.text(0)?.into(),
                wallet_id: r.text(1)?.into(),
                provider_id: r.text(2)?.into(),
                revoked: r.opt_int(3)?.is_some(),
                expires_at: r.int(4)?,
            };
            Ok(KeptSession { session, address: r.text(5)? })
        })
        .collect()
}
