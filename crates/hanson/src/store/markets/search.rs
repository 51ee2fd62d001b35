//! Market search: filtered, sorted pages of markets, served from caches of id lists that
//! hold while the markets' stored versions do.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{markets_by_id, stored_status};
use crate::domain::market::{derived_status, Market, MarketStatus};
use crate::domain::market_input::SearchMarkets;
use crate::domain::page::{Direction, Page, PageRequest};
use crate::domain::time::Micros;
use crate::error::{Error, Result};
use crate::store::shared_read::SharedRead;
use crate::store::sql::{id_list, Conn, Dialect, Param};
use crate::store::Store;

/// Escapes LIKE wildcards so a search query matches literally.
fn like_pattern(query: &str) -> String {
    let mut out = String::with_capacity(query.len() + 2);
    out.push('%');
    for ch in query.to_lowercase().chars() {
        if matches!(ch, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('%');
    out
}

/// The versions a cached search list is valid under, read from the database so that a change
/// made through any node invalidates every node's cache.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Versions {
    /// Bumped when a market is added or removed or a filtered column changes.
    set: i64,
    /// Bumped when any market's revision changes; `None` in a cached value that no such
    /// change can alter (lists in an order trades do not move, the catalog).
    data: Option<i64>,
}

/// The versions a search reads before anything it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MarketVersions {
    /// The market set's version.
    pub(crate) set: i64,
    /// The data version.
    pub(crate) data: i64,
}

pub(crate) fn versions(c: &mut dyn Conn) -> Result<MarketVersions> {
    let row = c.query_one("SELECT version, data_version FROM market_set_version", &[])?;
    Ok(MarketVersions { set: row.int(0)?, data: row.int(1)? })
}

/// Up to `limit` markets whose ids sort below `before` (from the last when `None`), with the
/// versions read before them and the lowest id read (the next call's `before`; `None` when
/// none was left).
pub(crate) fn markets_before(c: &mut dyn Conn, before: Option<&str>, limit: i64) -> Result<(MarketVersions, Vec<Market>, Option<String>)> {
    let current = versions(c)?;
    let rows = match before {
        Some(id) => c.query("SELECT id FROM markets WHERE id < $1 ORDER BY id DESC LIMIT $2", &[Param::Text(id), Param::Int(limit)])?,
        None => c.query("SELECT id FROM markets ORDER BY id DESC LIMIT $1", &[Param::Int(limit)])?,
    };
    let ids = rows.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
    let markets = markets_by_id(c, &ids.iter().map(String::as_str).collect::<Vec<_>>(), false)?;
    Ok((current, markets, ids.last().cloned()))
}

struct Cached<T> {
    versions: Versions,
    /// A list filtered by active or closed also lapses when the next active market ends.
    valid_until: Micros,
    value: T,
}

/// Search results kept per node: the ordered market ids of each (filters, sort), valid while
/// the versions they were read under are current. A page and its total are then a slice and
/// the length of a list. A filtered list is derived in memory from the unfiltered
/// list of its sort and a catalog of every market's filtered columns; only a text query is
/// matched in SQL, once per filter set.
#[derive(Default)]
pub(crate) struct SearchCache {
    inner: Mutex<CacheInner>,
    /// One gate per list key: concurrent misses of one list build it once.
    gates: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// The versions, read once for all the searches that arrive while the last read runs.
    versions: SharedRead<MarketVersions>,
}

#[derive(Default)]
struct CacheInner {
    lists: HashMap<String, Cached<Arc<Vec<u32>>>>,
    /// Market ids interned once for all lists, which hold their numbers.
    ids: Vec<Arc<str>>,
    numbers: HashMap<Arc<str>, u32>,
    listed: usize,
    /// What the filters read of every market, by number: a filtered list is derived from the
    /// unfiltered list of its sort in memory instead of read row by row.
    catalog: Option<Cached<Arc<Vec<Option<Filtered>>>>>,
    /// The markets each filter set with a text query matches, whatever the sort.
    matches: HashMap<String, Cached<Arc<std::collections::HashSet<u32>>>>,
}

/// The columns of a market that search filters other than the text query read.
struct Filtered {
    provider_id: Arc<str>,
    token_id: Arc<str>,
    category: Option<Arc<str>>,
    stored_status: Arc<str>,
    ends_at: Micros,
}

impl Filtered {
    /// Whether the market passes the query's filters at `now`, as the SQL filters decide.
    fn admits(&self, q: &SearchMarkets, now: Micros) -> bool {
        let status_holds = match q.status.as_deref() {
            None => true,
            Some("active") => &*self.stored_status == "active" && self.ends_at > now,
            Some("closed") => &*self.stored_status == "active" && self.ends_at <= now,
            Some(other) => &*self.stored_status == other,
        };
        status_holds
            && q.provider_id.as_deref().is_none_or(|v| &*self.provider_id == v)
            && q.token_id.as_deref().is_none_or(|v| &*self.token_id == v)
            && q.category.as_deref().is_none_or(|v| self.category.as_deref() == Some(v))
    }
}

/// Ids all lists hold together at most; the whole cache starts over when a list would pass it.
const MAX_LISTED_IDS: usize = 8_000_000;

/// The gate of the catalog's build (no list key looks like it).
const CATALOG_GATE: &str = "catalog";

/// Filter sets whose text matches (and list keys whose gates) are kept at most.
const MAX_CACHED_FILTER_SETS: usize = 4096;

impl<T: Clone> Cached<T> {
    fn current(&self, versions: Versions, now: Micros) -> Option<T> {
        (self.versions == versions && now < self.valid_until).then(|| self.value.clone())
    }
}

impl CacheInner {
    fn page_of(&self, list: &[u32], window: Window) -> Vec<Arc<str>> {
        window.of(list).map(|&n| self.ids[n as usize].clone()).collect()
    }

    fn intern(&mut self, id: String) -> u32 {
        if let Some(&n) = self.numbers.get(id.as_str()) {
            return n;
        }
        let n = self.ids.len() as u32;
        let id: Arc<str> = id.into();
        self.ids.push(id.clone());
        self.numbers.insert(id, n);
        n
    }
}

impl SearchCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, CacheInner> {
        // The cache holds no invariant a panicking holder could break halfway.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps what the filters read of every market, as loaded under `versions` (the set
    /// version alone: no filter reads a column a trade changes).
    fn put_catalog(&self, versions: Versions, rows: Vec<(String, Filtered)>) {
        let mut inner = self.lock();
        if inner.listed + rows.len() > MAX_LISTED_IDS {
            *inner = CacheInner::default();
        }
        let mut catalog: Vec<Option<Filtered>> = Vec::new();
        for (id, filtered) in rows {
            let n = inner.intern(id) as usize;
            if catalog.len() <= n {
                catalog.resize_with(n + 1, || None);
            }
            catalog[n] = Some(filtered);
        }
        inner.catalog = Some(Cached { versions, valid_until: Micros::MAX, value: Arc::new(catalog) });
    }

    fn has_catalog(&self, versions: Versions) -> bool {
        self.lock().catalog.as_ref().is_some_and(|c| c.versions == versions)
    }

    fn has_matches(&self, filters_key: &str, versions: Versions, now: Micros) -> bool {
        self.lock().matches.get(filters_key).is_some_and(|m| m.current(versions, now).is_some())
    }

    fn put_matches(&self, filters_key: String, versions: Versions, valid_until: Micros, ids: Vec<String>) {
        let mut inner = self.lock();
        if inner.matches.len() >= MAX_CACHED_FILTER_SETS {
            inner.matches.clear();
        }
        let numbers = ids.into_iter().map(|id| inner.intern(id)).collect();
        inner.matches.insert(filters_key, Cached { versions, valid_until, value: Arc::new(numbers) });
    }

    /// Derives the list of `q` under `key` from the current list under `base_key` and the
    /// catalog: the markets `q`'s filters admit, and with a text query only those it matches.
    /// None when the base list, the catalog or the matches are no longer current.
    #[allow(clippy::too_many_arguments)]
    fn derive_list(
        &self,
        key: String,
        versions: Versions,
        valid_until: Micros,
        base_key: &str,
        filters_key: &str,
        set_versions: Versions,
        q: &SearchMarkets,
        now: Micros,
        window: Window,
    ) -> Option<(Vec<Arc<str>>, i64)> {
        let (base, catalog, matching) = {
            let inner = self.lock();
            let base = inner.lists.get(base_key)?.current(versions, now)?;
            let catalog = inner.catalog.as_ref().filter(|c| c.versions == set_versions)?.value.clone();
            let matching = match q.search_query {
                Some(_) => Some(inner.matches.get(filters_key)?.current(set_versions, now)?),
                None => None,
            };
            (base, catalog, matching)
        };
        // Filtered without the lock: searches served from the cache need it meanwhile.
        let numbers: Vec<u32> = base
            .iter()
            .copied()
            .filter(|&n| catalog.get(n as usize).and_then(Option::as_ref).is_some_and(|f| f.admits(q, now)))
            .filter(|n| matching.as_ref().is_none_or(|m| m.contains(n)))
            .collect();
        let mut inner = self.lock();
        // A cache started over meanwhile numbers markets anew.
        if !inner.catalog.as_ref().is_some_and(|c| Arc::ptr_eq(&c.value, &catalog)) || inner.listed + numbers.len() > MAX_LISTED_IDS {
            return None;
        }
        inner.listed += numbers.len();
        let page = (inner.page_of(&numbers, window), numbers.len() as i64);
        if let Some(old) = inner.lists.insert(key, Cached { versions, valid_until, value: Arc::new(numbers) }) {
            inner.listed -= old.value.len();
        }
        Some(page)
    }

    fn gate(&self, key: &str) -> Arc<Mutex<()>> {
        let mut gates = self.gates.lock().unwrap_or_else(|e| e.into_inner());
        if gates.len() >= MAX_CACHED_FILTER_SETS && !gates.contains_key(key) {
            gates.clear();
        }
        gates.entry(key.to_string()).or_default().clone()
    }

    /// The ids of one page of a cached list, read from its end for a descending sort, and the
    /// list's length.
    fn page(&self, key: &str, versions: Versions, now: Micros, window: Window) -> Option<(Vec<Arc<str>>, i64)> {
        let inner = self.lock();
        let list = inner.lists.get(key)?.current(versions, now)?;
        Some((inner.page_of(&list, window), list.len() as i64))
    }

    /// Keeps a list and returns one page of it, as `page` would.
    fn put_list(&self, key: String, versions: Versions, valid_until: Micros, ids: Vec<String>, window: Window) -> (Vec<Arc<str>>, i64) {
        let mut inner = self.lock();
        if inner.listed + ids.len() > MAX_LISTED_IDS {
            *inner = CacheInner::default();
        }
        inner.listed += ids.len();
        let numbers: Vec<u32> = ids.into_iter().map(|id| inner.intern(id)).collect();
        let page = (inner.page_of(&numbers, window), numbers.len() as i64);
        if let Some(old) = inner.lists.insert(key, Cached { versions, valid_until, value: Arc::new(numbers) }) {
            inner.listed -= old.value.len();
        }
        page
    }
}

/// A page's place in an ascending list.
#[derive(Clone, Copy)]
struct Window {
    offset: usize,
    limit: usize,
    descending: bool,
}

impl Window {
    fn of<'a, T>(&self, ascending: &'a [T]) -> Box<dyn Iterator<Item = &'a T> + 'a> {
        if self.descending {
            Box::new(ascending.iter().rev().skip(self.offset).take(self.limit))
        } else {
            Box::new(ascending.iter().skip(self.offset).take(self.limit))
        }
    }
}

/// One page of the list under `key`: from the cache, or built by `build` (which keeps it) once
/// across concurrent misses.
fn cached_list(
    cache: &SearchCache,
    key: &str,
    versions: Versions,
    now: Micros,
    window: Window,
    build: impl FnOnce(&SearchCache) -> Result<(Vec<Arc<str>>, i64)>,
) -> Result<(Vec<Arc<str>>, i64)> {
    if let Some(hit) = cache.page(key, versions, now, window) {
        return Ok(hit);
    }
    let gate = cache.gate(key);
    let _building = gate.lock().unwrap_or_else(|e| e.into_inner());
    // The request this one waited for may have built the list meanwhile.
    match cache.page(key, versions, now, window) {
        Some(hit) => Ok(hit),
        None => build(cache),
    }
}

/// Every market's filtered columns, for the catalog.
fn catalog_rows(c: &mut dyn Conn) -> Result<Vec<(String, Filtered)>> {
    let mut labels: HashMap<String, Arc<str>> = HashMap::new();
    let mut label = |text: String| labels.entry(text).or_insert_with_key(|t| Arc::from(t.as_str())).clone();
    c.query("SELECT id, provider_id, token_id, category, status, ends_at FROM markets", &[])?
        .iter()
        .map(|r| {
            let filtered = Filtered {
                provider_id: label(r.text(1)?),
                token_id: label(r.text(2)?),
                category: r.opt_text(3)?.map(&mut label),
                stored_status: label(r.text(4)?),
                ends_at: r.int(5)?,
            };
            Ok((r.text(0)?, filtered))
        })
        .collect()
}

/// Until when a search filtered by a time-derived status keeps its members: the next end of an
/// active market.
fn members_valid_until(c: &mut dyn Conn, q: &SearchMarkets, now: Micros) -> Result<Micros> {
    match q.status.as_deref() {
        Some("active" | "closed") => Ok(c
            .query_one("SELECT min(ends_at) FROM markets WHERE status = 'active' AND ends_at > $1", &[Param::Int(now)])?
            .opt_int(0)?
            .unwrap_or(Micros::MAX)),
        _ => Ok(Micros::MAX),
    }
}

/// Renderings of markets a caller keeps for search pages.
pub(crate) trait Renderings {
    type Item;
    /// For each id, what is kept of it: a rendering known current under `data_version` whose
    /// status still holds at `now`, one to be checked against its revision, or nothing.
    fn kept(&self, ids: &[Arc<str>], data_version: i64, now: Micros) -> Vec<Kept<Self::Item>>;
    /// A rendering made at this revision with this status; it becomes known current under
    /// `data_version`, which was read before the revision.
    fn at_revision(&self, id: &str, revision: i64, status: MarketStatus, data_version: i64) -> Option<Self::Item>;
}

/// What a caller keeps of one market of a search page.
pub(crate) enum Kept<T> {
    Current(T),
    /// A rendering that is current only if the market's revision and status are unchanged.
    Unverified,
    Nothing,
}

/// One market of a search page: a rendering the caller keeps, or the market loaded to be
/// rendered.
pub(crate) enum SearchHit<T> {
    Cached(T),
    Loaded(Box<Market>),
}

pub(crate) struct SearchPage<T> {
    pub(crate) page: Page<SearchHit<T>>,
    /// The data version read before any market of the page.
    pub(crate) data_version: i64,
}

/// A page of a market search at `now`. The versions it reads are shared with the searches
/// arriving at the same time, each still getting versions read after it arrived. A page whose
/// list and renderings are current under them is served from memory; the rest in one read.
pub(crate) async fn search<R>(
    store: &Store,
    cache: Arc<SearchCache>,
    q: SearchMarkets,
    now: Micros,
    renderings: Arc<R>,
) -> Result<SearchPage<R::Item>>
where
    R: Renderings + Send + Sync + 'static,
    R::Item: Send + 'static,
{
    let current = cache.versions.get(|| store.read(versions)).await?;
    if let Some(page) = cached_page(&cache, &q, now, renderings.as_ref(), current) {
        return Ok(page);
    }
    store.read(move |c| search_markets(c, &cache, &q, now, renderings.as_ref(), current)).await
}

/// Where a search's page lies in the cache.
struct ListAddress {
    /// The list of the search's filters and sort.
    key: String,
    /// The unfiltered list of the same sort.
    base_key: String,
    filters_key: String,
    window: Window,
    /// The list's order moves with trades.
    by_volume: bool,
}

impl ListAddress {
    fn of(q: &SearchMarkets) -> ListAddress {
        let PageRequest { page, per_page } = q.page;
        let descending = q.sort.direction == Direction::Desc;
        let window = Window { offset: ((page - 1) * per_page) as usize, limit: per_page as usize, descending };
        let filters_key = format!("{:?}", (&q.provider_id, &q.token_id, &q.category, &q.status, &q.search_query));
        // One ascending list serves both directions: a descending order is its reverse.
        let column = sort_column(&q.sort.field);
        ListAddress {
            key: format!("{filters_key} BY {column}"),
            base_key: format!("{:?} BY {column}", (None::<()>, None::<()>, None::<()>, None::<()>, None::<()>)),
            filters_key,
            window,
            by_volume: column == "total_volume",
        }
    }

    /// The versions its list is valid under.
    fn versions(&self, current: MarketVersions) -> Versions {
        Versions { set: current.set, data: self.by_volume.then_some(current.data) }
    }
}

/// The column a search sort field orders by.
fn sort_column(field: &str) -> &'static str {
    match field {
        "total_volume" => "total_volume",
        "closes_at" | "ends_at" => "ends_at",
        "question" => "question",
        _ => "created_at",
    }
}

/// A page served from the cache alone: its list and every rendering on it are current under
/// `current`.
fn cached_page<R: Renderings>(
    cache: &SearchCache,
    q: &SearchMarkets,
    now: Micros,
    renderings: &R,
    current: MarketVersions,
) -> Option<SearchPage<R::Item>> {
    let list = ListAddress::of(q);
    let (ids, total) = cache.page(&list.key, list.versions(current), now, list.window)?;
    let hits = renderings
        .kept(&ids, current.data, now)
        .into_iter()
        .map(|kept| match kept {
            Kept::Current(rendering) => Some(SearchHit::Cached(rendering)),
            Kept::Unverified | Kept::Nothing => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(SearchPage { page: Page::new(hits, q.page, total), data_version: current.data })
}

/// A page of a market search under versions read before it, reusing the caller's renderings
/// where they are current.
fn search_markets<R: Renderings>(
    c: &mut dyn Conn,
    cache: &SearchCache,
    q: &SearchMarkets,
    now: Micros,
    renderings: &R,
    current: MarketVersions,
) -> Result<SearchPage<R::Item>> {
    let mut clauses: Vec<String> = Vec::new();
    let mut params: Vec<Param<'_>> = Vec::new();
    let pattern = q.search_query.as_deref().map(like_pattern);
    // SQLite's trigram index needs at least three characters; PostgreSQL's trigram indexes
    // serve the LIKE itself.
    let fts_phrase = match (c.dialect(), q.search_query.as_deref()) {
        (Dialect::Sqlite, Some(query)) if query.chars().count() >= 3 => Some(format!("\"{}\"", query.to_lowercase().replace('"', "\"\""))),
        _ => None,
    };
    if let Some(v) = &q.provider_id {
        params.push(Param::Text(v));
        clauses.push(format!("m.provider_id = ${}", params.len()));
    }
    if let Some(v) = &q.token_id {
        params.push(Param::Text(v));
        clauses.push(format!("m.token_id = ${}", params.len()));
    }
    if let Some(v) = &q.category {
        params.push(Param::Text(v));
        clauses.push(format!("m.category = ${}", params.len()));
    }
    if let Some(status) = q.status.as_deref() {
        match status {
            "active" | "closed" => {
                params.push(Param::Int(now));
                let op = if status == "active" { ">" } else { "<=" };
                clauses.push(format!("m.status = 'active' AND m.ends_at {op} ${}", params.len()));
            }
            other => {
                params.push(Param::Text(other));
                clauses.push(format!("m.status = ${}", params.len()));
            }
        }
    }
    if let Some(p) = &pattern {
        params.push(Param::Text(p));
        let n = params.len();
        clauses.push(match &fts_phrase {
            // The trigram index finds the candidates; LIKE keeps the exact semantics.
            Some(_) => format!(
                "m.rowid IN (SELECT rowid FROM markets_search WHERE markets_search MATCH ${}) \
                 AND (m.question_lower LIKE ${n} ESCAPE '\\' OR m.description_lower LIKE ${n} ESCAPE '\\')",
                n + 1
            ),
            None => format!("(m.question_lower LIKE ${n} ESCAPE '\\' OR m.description_lower LIKE ${n} ESCAPE '\\')"),
        });
        if let Some(phrase) = &fts_phrase {
            params.push(Param::Text(phrase));
        }
    }
    let where_sql = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let order = match sort_column(&q.sort.field) {
        "total_volume" => format!("{}, m.id ASC", c.dialect().money_order("m.total_volume", "ASC")),
        column => format!("m.{column} ASC, m.id ASC"),
    };
    let list = ListAddress::of(q);
    let versions = list.versions(current);
    let ListAddress { key, base_key, filters_key, window, .. } = list;
    let data_version = current.data;

    // The versions were read before the data they guard: a change committed in between makes
    // the cached value newer than its versions, never older.
    let (ids, total) = {
        let filtered = key != base_key;
        cached_list(cache, &key, versions, now, window, |cache| {
            let valid_until = members_valid_until(c, q, now)?;
            if filtered {
                // Derived in memory from the unfiltered list and the catalog; the text
                // query alone is matched in SQL.
                let unfiltered = Window { offset: 0, limit: 0, descending: false };
                cached_list(cache, &base_key, versions, now, unfiltered, |cache| {
                    let sql = format!("SELECT m.id FROM markets m ORDER BY {order}");
                    let all = c.query(&sql, &[])?.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
                    Ok(cache.put_list(base_key.clone(), versions, Micros::MAX, all, unfiltered))
                })?;
                let catalog_versions = Versions { set: current.set, data: None };
                if !cache.has_catalog(catalog_versions) {
                    let gate = cache.gate(CATALOG_GATE);
                    let _building = gate.lock().unwrap_or_else(|e| e.into_inner());
                    if !cache.has_catalog(catalog_versions) {
                        cache.put_catalog(catalog_versions, catalog_rows(c)?);
                    }
                }
                if q.search_query.is_some() && !cache.has_matches(&filters_key, catalog_versions, now) {
                    let sql = format!("SELECT m.id FROM markets m {where_sql}");
                    let ids = c.query(&sql, &params)?.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
                    cache.put_matches(filters_key.clone(), catalog_versions, valid_until, ids);
                }
                if let Some(page) =
                    cache.derive_list(key.clone(), versions, valid_until, &base_key, &filters_key, catalog_versions, q, now, window)
                {
                    return Ok(page);
                }
            }
            let sql = format!("SELECT m.id FROM markets m {where_sql} ORDER BY {order}");
            let all = c.query(&sql, &params)?.iter().map(|r| r.text(0)).collect::<Result<Vec<_>>>()?;
            Ok(cache.put_list(key.clone(), versions, valid_until, all, window))
        })?
    };
    // Renderings known current under this data version need no read; the others kept are
    // checked against their markets' revisions in one narrow read; the rest are loaded.
    let mut hits: Vec<Option<R::Item>> = Vec::with_capacity(ids.len());
    let mut unverified: HashMap<&str, usize> = HashMap::new();
    let mut missing: HashMap<String, usize> = HashMap::new();
    for (position, kept) in renderings.kept(&ids, data_version, now).into_iter().enumerate() {
        hits.push(match kept {
            Kept::Current(rendering) => Some(rendering),
            Kept::Unverified => {
                unverified.insert(&ids[position], position);
                None
            }
            Kept::Nothing => {
                missing.insert(ids[position].to_string(), position);
                None
            }
        });
    }
    if !unverified.is_empty() {
        let unverified_ids: Vec<&str> = unverified.keys().copied().collect();
        let (list, params) = id_list(&unverified_ids);
        let sql = format!("SELECT id, revision, status, ends_at FROM markets WHERE id IN ({list})");
        for row in &c.query(&sql, &params)? {
            let (id, revision, stored, ends_at) = (row.text(0)?, row.int(1)?, stored_status(row, 2)?, row.int(3)?);
            let position = unverified[id.as_str()];
            match renderings.at_revision(&id, revision, derived_status(stored, ends_at, now), data_version) {
                Some(rendering) => hits[position] = Some(rendering),
                None => {
                    missing.insert(id, position);
                }
            }
        }
    }
    let mut data: Vec<Option<SearchHit<R::Item>>> = hits.into_iter().map(|hit| hit.map(SearchHit::Cached)).collect();
    if !missing.is_empty() {
        // The markets, their outcomes and pools in one round trip.
        let missing_ids: Vec<&str> = missing.keys().map(String::as_str).collect();
        for m in markets_by_id(c, &missing_ids, false)? {
            let position = missing[m.id.as_str()];
            data[position] = Some(SearchHit::Loaded(Box::new(m)));
        }
    }
    let data = data.into_iter().map(|hit| hit.ok_or_else(|| Error::internal("searched market vanished"))).collect::<Result<Vec<_>>>()?;
    Ok(SearchPage { page: Page::new(data, q.page, total), data_version })
}
