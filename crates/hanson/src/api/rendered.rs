//! Market search results rendered once per market revision and status: a page of cached
//! markets is assembled from their JSON without loading or serializing them again.

use std::collections::HashMap;
use std::sync::Mutex;

use bytes::Bytes;

/// Rendered bytes kept at most; the whole cache starts over when a rendering would pass it.
const MAX_RENDERED_BYTES: usize = 256 << 20;

#[derive(Default)]
pub struct RenderedMarkets {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Rendered>,
    bytes: usize,
}

struct Rendered {
    revision: i64,
    status: String,
    json: Bytes,
}

impl RenderedMarkets {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every update leaves the map whole; a panicking holder breaks nothing.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The market's rendering if it was made at this revision with this status.
    pub fn get(&self, id: &str, revision: i64, status: &str) -> Option<Bytes> {
        let inner = self.lock();
        inner.entries.get(id).filter(|r| r.revision == revision && r.status == status).map(|r| r.json.clone())
    }

    pub fn put(&self, id: String, revision: i64, status: &str, json: Bytes) {
        let mut inner = self.lock();
        if inner.bytes + json.len() > MAX_RENDERED_BYTES {
            *inner = Inner::default();
        }
        inner.bytes += json.len();
        let rendered = Rendered { revision, status: status.to_string(), json };
        if let Some(old) = inner.entries.insert(id, rendered) {
            inner.bytes -= old.json.len();
        }
    }
}
