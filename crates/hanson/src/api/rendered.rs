//! Market search results rendered once per market revision and status: a page of cached
//! markets is assembled from their JSON without loading or serializing them again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::domain::time::Micros;
use crate::domain::market::{Market, MarketStatus};
use crate::store::markets::{Kept, Renderings};

/// Rendered bytes kept at most; the whole cache starts over when a rendering would pass it.
const MAX_RENDERED_BYTES: usize = 256 << 20;

#[derive(Default)]
pub struct RenderedMarkets {
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

    /// Keeps the rendering of `m`, shown with `status`, as loaded after `data_version` was read.
    pub fn put(&self, m: &Market, status: MarketStatus, data_version: i64, json: Bytes) {
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
