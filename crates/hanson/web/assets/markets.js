// Markets page: search (debounced), status and category filters, sort, one card per market.
import { call, errorText } from './client.js';
import { h, $, clear, debounce, statusBadge, relativeTime, outcomeColor } from './ui.js';
import { formatPercent, formatUnits, parseDecimal } from './money.js';
import { mountAccount } from './account.js';
import { lastProvider, discoverProvider } from './session.js';
import { TickerSocket } from './ticker.js';

const PER_PAGE = 24;
const params = new URLSearchParams(location.search);
const els = {
  search: $('#market-search'),
  status: $('#filter-status'),
  category: $('#filter-category'),
  categories: $('#category-options'),
  sort: $('#sort'),
  list: $('#market-list'),
  more: $('#load-more'),
  count: $('#result-count'),
  error: $('#markets-error'),
};
const state = { page: 1, totalPages: 0, request: 0, tokens: new Map(), categories: new Set(), firstProvider: null, soleProvider: null };

// The filters live in the URL, so a search can be shared and survives a reload.
els.search.value = params.get('q') || '';
if (params.has('status')) els.status.value = params.get('status');
els.category.value = params.get('category') || '';
if (params.get('sort')) els.sort.value = params.get('sort');

const providerId = () => params.get('provider_id') || lastProvider() || state.soleProvider || state.firstProvider;
// Without a provider named or remembered, the install's only provider names it (whatever the
// filters show), else the first market listed: a connect-wallet press before either is known
// waits for it.
let firstLoaded;
const account = mountAccount({ providerId, providerReady: new Promise((resolve) => (firstLoaded = resolve)) });
const soleReady = params.get('provider_id') || lastProvider() ? Promise.resolve() : discoverProvider().then(({ id }) => {
  state.soleProvider = id;
  if (id) account.reload();
});

const tokensReady = call('list_tokens').then(
  (r) => {
    for (const t of r.data || []) state.tokens.set(t.id, t);
  },
  () => {},
);

function filters() {
  const f = {};
  const q = els.search.value.trim();
  if (q) f.search_query = q;
  if (els.status.value) f.status = els.status.value;
  const c = els.category.value.trim();
  if (c) f.category = c;
  if (params.get('provider_id')) f.provider_id = params.get('provider_id');
  return f;
}

function syncUrl() {
  const u = new URLSearchParams();
  if (els.search.value.trim()) u.set('q', els.search.value.trim());
  if (els.status.value !== 'active') u.set('status', els.status.value);
  if (els.category.value.trim()) u.set('category', els.category.value.trim());
  if (els.sort.value !== 'created_at:desc') u.set('sort', els.sort.value);
  if (params.get('provider_id')) u.set('provider_id', params.get('provider_id'));
  const s = u.toString();
  history.replaceState(null, '', s ? `?${s}` : location.pathname);
}

// Cards follow their markets' tickers: prices, bars and volume move without a reload.
const tickers = new TickerSocket(applyTick);

function applyTick(t) {
  const card = els.list.querySelector(`[data-testid=market-card][data-market-id="${CSS.escape(t.market_id)}"]`);
  if (!card) return;
  // A settled market's card shows no prices (its page shows the result).
  const settled = t.status === 'resolved' || t.status === 'cancelled';
  for (const p of settled ? [] : t.prices) {
    const price = card.querySelector(`[data-testid=card-outcome-price][data-outcome-id="${CSS.escape(p.outcome_id)}"]`);
    if (!price || price.dataset.price === p.price) continue;
    price.dataset.price = p.price;
    price.textContent = formatPercent(p.price, 0);
    const bar = price.closest('.card-outcome')?.nextElementSibling?.firstElementChild;
    if (bar) bar.style.width = `${Math.max(1, Math.min(100, Number(parseDecimal(p.price, 4)) / 100))}%`;
  }
  const token = state.tokens.get(card.dataset.tokenId);
  const volume = card.querySelector('[data-testid=card-volume]');
  if (token && volume) volume.textContent = `${formatUnits(t.total_volume, token.decimals, 2)} ${token.symbol || ''} vol.`;
}

async function load({ append = false } = {}) {
  const request = ++state.request;
  const page = append ? state.page + 1 : 1;
  const [field, direction] = els.sort.value.split(':');
  els.list.setAttribute('aria-busy', 'true');
  els.error.hidden = true;
  try {
    const [result] = await Promise.all([
      call('search_markets', { body: { filters: filters(), pagination: { page, per_page: PER_PAGE }, sort: { field, direction } } }),
      tokensReady,
    ]);
    if (request !== state.request) return; // a newer search has started
    state.page = page;
    state.totalPages = result.pagination.total_pages;
    if (!append) clear(els.list);
    for (const m of result.data) {
      if (!state.firstProvider && m.provider) {
        state.firstProvider = m.provider.id;
        account.reload();
      }
      if (m.category && !state.categories.has(m.category)) {
        state.categories.add(m.category);
        els.categories.append(h('option', { value: m.category }));
      }
      els.list.append(card(m));
    }
    const total = result.pagination.total;
    els.count.textContent = `${total.toLocaleString()} market${total === 1 ? '' : 's'}`;
    if (!total) {
      const { providers } = await discoverProvider();
      if (request !== state.request) return;
      els.list.append(providers === 0 ? firstRun() : h('p', { class: 'empty', testid: 'markets-empty' }, 'No markets match. Try another search or filter.'));
    }
    els.more.hidden = state.page >= state.totalPages;
    tickers.follow([...els.list.querySelectorAll('[data-testid=market-card]')].map((c) => c.dataset.marketId));
  } catch (e) {
    if (request !== state.request) return;
    els.error.textContent = errorText(e);
    els.error.hidden = false;
  } finally {
    if (request === state.request) els.list.setAttribute('aria-busy', 'false');
  }
}

function card(m) {
  const token = state.tokens.get(m.token?.id);
  const decimals = token ? token.decimals : null;
  // Few outcomes keep their order (Yes, No); many show the likeliest first.
  const outcomes = m.outcomes.length <= 3 ? m.outcomes : [...m.outcomes].sort((a, b) => {
    const d = parseDecimal(b.current_price) - parseDecimal(a.current_price);
    return d > 0n ? 1 : d < 0n ? -1 : 0;
  });
  const shown = outcomes.slice(0, 3);
  const volume = decimals === null ? '—' : formatUnits(m.total_volume, decimals, 2);
  // A settled market's last prices mean nothing any more: its page shows the result.
  const settled = m.status === 'resolved' || m.status === 'cancelled';
  return h('a', { class: 'market-card', href: `/markets/${encodeURIComponent(m.id)}`, testid: 'market-card', dataset: { marketId: m.id, tokenId: m.token?.id || '' } },
    h('div', { class: 'card-meta' }, statusBadge(m.status), m.category ? h('span', { class: 'chip' }, m.category) : null, h('span', {}, m.provider?.name || '')),
    h('h2', {}, m.question),
    h('div', { class: 'card-outcomes' },
      shown.map((o) => {
        const pct = Number(parseDecimal(o.current_price, 4)) / 100; // a bar width, not money
        const bar = h('span');
        bar.style.width = settled ? '0' : `${Math.max(1, Math.min(100, pct))}%`;
        bar.style.background = outcomeColor(m.outcomes.indexOf(o));
        return h('div', {},
          h('div', { class: 'card-outcome' },
            h('span', { class: 'title' }, o.title),
            h('span', { class: 'price', testid: 'card-outcome-price', dataset: { outcomeId: o.id, price: o.current_price } }, settled ? '' : formatPercent(o.current_price, 0))),
          h('div', { class: 'bar', 'aria-hidden': 'true' }, bar));
      }),
      outcomes.length > 3 ? h('span', { class: 'muted' }, `+${outcomes.length - 3} more outcomes`) : null),
    h('div', { class: 'card-foot' },
      h('span', { testid: 'card-volume' }, `${volume} ${m.token?.symbol || ''} vol.`),
      h('span', {}, m.status === 'active' ? `Closes ${relativeTime(m.closes_at)}` : settled ? `${m.status === 'resolved' ? 'Resolved' : 'Cancelled'}: open for the result` : `Closed ${relativeTime(m.closes_at)}`)));
}

/** A server with no market at all: what its operator does next. */
function firstRun() {
  const code = (text) => h('code', {}, text);
  return h('section', { class: 'card first-run', testid: 'markets-first-run', 'aria-labelledby': 'first-run-title' },
    h('h2', { id: 'first-run-title' }, 'No markets yet'),
    h('p', {}, 'This server is running, but nothing is listed. If you run it, open it for trading:'),
    h('ol', {},
      h('li', {}, 'Create a market provider, and keep the API key it prints: ', code('hanson provider create --name "Acme Games"')),
      h('li', {}, 'Create the token markets trade in: ', code('hanson token create --symbol USDC --name "USD Coin" --decimals 18')),
      h('li', {}, 'Open the ', h('a', { href: '/console' }, 'Console'), ' with that API key, deposit into the treasury, and create a market.')),
    h('p', { class: 'muted' }, 'Each command takes the same --database-url as hanson serve. ', h('a', { href: '/docs' }, 'API reference')));
}

const reload = debounce(() => {
  syncUrl();
  load();
}, 250);

els.search.addEventListener('input', reload);
els.category.addEventListener('input', reload);
els.status.addEventListener('change', reload.now);
els.sort.addEventListener('change', reload.now);
$('#filters').addEventListener('submit', (e) => {
  e.preventDefault();
  reload.now();
});
els.more.addEventListener('click', () => load({ append: true }));

Promise.allSettled([load(), soleReady]).then(() => firstLoaded(providerId()));
