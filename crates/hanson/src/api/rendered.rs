//! Market search results rendered once per market revision and status: a page of cached
//! markets is assembled from their JSON without loading or serializing them again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::domain::market::{Market, MarketStatus};
use crate::domain::time::{now_micros, Micros};
use crate::error::{Error, Result};
use crate::store::markets::search::{self, Kept, Renderings};
use crate::store::Store;

/// Rendered bytes kept at most; the whole cache starts over when a rendering would pass it.
const MAX_RENDERED_BYTES: usize = 256 << 20;
/// The warm-up stops here, leaving room for the renderings searches add.
const WARM_BYTES: usize = MAX_RENDERED_BYTES / 2;
/// Markets the warm-up reads at a time.
const WARM_CHUNK: i64 = 200;

#[derive(Default)]
pub(crate) struct RenderedMarkets {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Arc<str>, Rendered, foldhash::fast::RandomState>,
    bytes: usize,
}

struct Rendered {
    revision: i64,
    /// The status shown, and until when it holds: an active market closes at its end.
    status: MarketStatus,
    status_until: Micros,
    /// The data version under which the revision was last seen current.
    checked: i64,
    json: Bytes,
}

impl RenderedMarkets {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every update leaves the map whole; a panicking holder breaks nothing.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The JSON a search shows of `m` at `now`, kept as loaded after `data_version` was read.
    pub(crate) fn render(&self, m: &Market, now: Micros, data_version: i64) -> Result<Bytes> {
        let json = Bytes::from(serde_json::to_vec(&super::views::market_summary(m, now)?).map_err(Error::internal)?);
        self.put(m, m.status(now), data_version, json.clone());
        Ok(json)
    }

    /// Renders the markets, newest first, until all are kept or half the cache is used, so that
    /// a node's first searches find them. Loaded by the searches instead, they made the first
    /// seconds of a node on PostgreSQL the search tail.
    pub(crate) async fn warm(self: Arc<Self>, store: Store) {
        let mut before: Option<String> = None;
        loop {
            let after = before.clone();
            let chunk = store.read(move |c| search::markets_before(c, after.as_deref(), WARM_CHUNK)).await;
            let (current, loaded, lowest) = match chunk {
                Ok(chunk) => chunk,
                Err(e) => {
                    tracing::warn!(error = %e, "warming the market renderings stopped");
                    return;
                }
            };
            let now = now_micros();
            for m in &loaded {
                if let Err(e) = self.render(m, now, current.data) {
                    tracing::warn!(error = %e, market = %m.id, "a market could not be rendered");
                }
            }
            if lowest.is_none() || self.lock().bytes >= WARM_BYTES {
                return;
            }
            before = lowest;
        }
    }

    /// Keeps the rendering of `m`, shown with `status`, as loaded after `data_version` was read.
    fn put(&self, m: &Market, status: MarketStatus, data_version: i64, json: Bytes) {
        let mut inner = self.lock();
        if inner.bytes + json.len() > MAX_RENDERED_BYTES {
            *inner = Inner::default();
        }
        inner.bytes += json.len();
        let rendered = Rendered {
            revision: m.revision,
            status,
            status_until: if status == MarketStatus::Active { m.ends_at } else { Micros::MAX },
            checked: data_version,
            json,
        };
        if let Some(old) = inner.entries.insert(m.id.as_str().into(), rendered) {
            inner.bytes -= old.json.len();
        }
        let metrics = crate::metrics::metrics();
        metrics.rendered_markets.set(inner.entries.len() as i64);
        metrics.rendered_bytes.set(inner.bytes as i64);
    }
}

impl Renderings for RenderedMarkets {
    type Item = Bytes;

    fn kept(&self, ids: &[Arc<str>], data_version: i64, now: Micros) -> Vec<Kept<Bytes>> {
        let inner = self.lock();
        ids.iter()
            .map(|id| match inner.entries.get(id) {
                Some(r) if r.checked == data_version && now < r.status_until => Kept::Current(r.json.clone()),
                Some(_) => Kept::Unverified,
                None => Kept::Nothing,
            })
            .collect()
    }

    fn at_revision(&self, id: &str, revision: i64, status: MarketStatus, data_version: i64) -> Option<Bytes> {
        let mut inner = self.lock();
        let r = inner.entries.get_mut(id).filter(|r| r.revision == revision && r.status == status)?;
        r.checked = data_version;
        Some(r.json.clone())
    }
}
