// The embeddable market card: question, prices, a small chart and a link to the market page,
// live from the market's ticker (conflated state, meant for crowds of watchers). Any site may
// frame it (`?theme=light|dark`).
import { call, errorText, operationFor, urlFor } from './client.js';
import { formatPercent, formatUnits, priceToNumber } from './money.js';
import { h, clear, outcomeColor } from './ui.js';

const marketId = decodeURIComponent(location.pathname.split('/').filter(Boolean)[2] || '');
const theme = new URLSearchParams(location.search).get('theme') === 'dark' ? 'dark' : 'light';
document.documentElement.dataset.theme = theme;
const root = document.getElementById('embed-root');
const POINTS = 100;
const state = { market: null, history: new Map() }; // outcome id -> [[t (ms), price number]]
const el = {};

function sortOutcomes(m) {
  m.outcomes.sort((a, b) => (a.outcome_index ?? 0) - (b.outcome_index ?? 0));
  return m;
}

async function start() {
  let market;
  try {
    market = await call('market_detail', { path: { market_id: marketId } });
  } catch (e) {
    clear(root).append(h('p', { class: 'muted', testid: 'embed-error' }, e.status === 404 ? 'Market not found.' : errorText(e)));
    root.setAttribute('aria-busy', 'false');
    return;
  }
  state.market = sortOutcomes(market);
  document.title = `${market.question} · Hanson`;
  const link = `${location.origin}/markets/${encodeURIComponent(market.id)}`;
  el.live = h('span', { class: 'live', testid: 'embed-live', dataset: { state: 'connecting' } }, 'Live');
  el.status = h('span', { class: 'status', testid: 'embed-status' });
  el.outcomes = h('ul', { class: 'outcomes' });
  el.chart = h('div', { testid: 'embed-chart' });
  el.result = h('p', { class: 'result', testid: 'embed-result', hidden: true });
  el.volume = h('span', { testid: 'embed-volume' });
  clear(root).append(
    h('div', { class: 'meta' }, el.status, h('span', {}, market.provider.name), el.live),
    h('h1', {}, h('a', { href: link, target: '_blank', rel: 'noopener', testid: 'embed-question' }, market.question)),
    el.result,
    el.outcomes,
    el.chart,
    h('div', { class: 'foot' }, el.volume, h('a', { href: link, target: '_blank', rel: 'noopener', testid: 'embed-link' }, 'Trade on Hanson →')));
  render();
  root.setAttribute('aria-busy', 'false');
  loadHistory();
  if (isFinal(market)) settle();
  else follow();
}

const isFinal = (m) => m.status === 'cancelled' || (m.status === 'resolved' && !m.resolution_pending);

/** Nothing will change any more: stop following, and say so. */
function settle() {
  state.done = true;
  if (state.es) state.es.close();
  el.live.dataset.state = 'closed';
  el.live.textContent = 'Settled';
}

/** Follows `GET /v1/markets/{id}/ticker`; the browser reconnects by itself, and after an HTTP
 *  error (429, 503) the card retries with a backoff. A settled market's ticker is left. */
function follow(retry = 1000) {
  const id = operationFor('GET', '/v1/markets/{market_id}/ticker');
  if (!id) return; // a server without a ticker: the card stays as loaded
  const es = new EventSource(urlFor(id, { path: [marketId] }));
  state.es = es;
  es.addEventListener('open', () => {
    el.live.dataset.state = 'live';
    retry = 1000;
  });
  es.addEventListener('ticker', (e) => {
    let tick;
    try {
      tick = JSON.parse(e.data);
    } catch {
      return;
    }
    onTick(tick);
  });
  es.addEventListener('error', () => {
    el.live.dataset.state = 'reconnecting';
    if (es.readyState === EventSource.CLOSED && !state.done) setTimeout(() => follow(Math.min(retry * 2, 30000)), retry);
  });
}

function render() {
  const m = state.market;
  el.status.textContent = m.status === 'active' && m.trading_paused ? 'paused' : m.status === 'active' ? 'open' : m.status;
  el.volume.textContent = `${formatUnits(m.total_volume, m.token.decimals, 2)} ${m.token.symbol} volume`;
  const winner = m.status === 'resolved' && m.outcomes.find((o) => o.id === m.winning_outcome_id);
  el.result.hidden = !(winner || m.status === 'cancelled');
  el.result.textContent = winner ? `${winner.title} won.` : m.status === 'cancelled' ? 'Cancelled: positions refunded.' : '';
  clear(el.outcomes).append(...m.outcomes.map((o, i) => {
    const bar = h('span');
    bar.style.width = `${Math.max(0, Math.min(100, priceToNumber(o.current_price) * 100))}%`;
    bar.style.background = outcomeColor(i);
    const shown = m.status === 'resolved' ? (o.id === m.winning_outcome_id ? 'Won' : 'Lost') : m.status === 'cancelled' ? 'Refunded' : formatPercent(o.current_price);
    return h('li', { class: 'outcome' },
      h('span', { class: 'title', title: o.title }, o.title),
      h('span', { class: 'price', testid: 'embed-price', dataset: { outcomeId: o.id, price: o.current_price } }, shown),
      h('div', { class: 'bar', 'aria-hidden': 'true' }, bar));
  }));
  drawChart();
}

/** The last few raw price points of each outcome, oldest first. */
async function loadHistory() {
  try {
    const r = await call('price_history', {
      body: { filters: { market_id: marketId }, pagination: { page: 1, per_page: POINTS }, sort: { field: 'timestamp', direction: 'desc' } },
    });
    for (const p of [...r.data].reverse()) addPoint(p.outcome_id, new Date(p.timestamp).getTime(), p.price);
    drawChart();
  } catch {
    // The card stands without its chart.
  }
}

function addPoint(outcomeId, t, price) {
  const list = state.history.get(outcomeId) || [];
  list.push([t, priceToNumber(price)]);
  if (list.length > POINTS) list.shift();
  state.history.set(outcomeId, list);
}

/** A sparkline per outcome, in SVG: a picture of the prices, never money. */
function drawChart() {
  const m = state.market;
  const series = m.outcomes.map((o, i) => {
    const list = [...(state.history.get(o.id) || [])];
    list.push([Date.now(), priceToNumber(o.current_price)]);
    return { color: outcomeColor(i), list };
  });
  const times = series.flatMap((s) => s.list.map(([t]) => t));
  const t0 = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - t0);
  // The y axis spans the prices drawn (at least 10 points), so small moves show.
  const values = series.flatMap((s) => s.list.map(([, v]) => v));
  const mid = (Math.min(...values) + Math.max(...values)) / 2;
  const half = Math.max(0.05, (Math.max(...values) - Math.min(...values)) / 2 + 0.01);
  const lo = Math.max(0, mid - half), hi = Math.min(1, mid + half);
  const W = 300, H = 64;
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'Recent prices');
  for (const s of series) {
    // A step line: a price holds until the next point.
    let d = '';
    s.list.forEach(([t, v], k) => {
      const x = ((t - t0) / span) * W;
      const y = H - 2 - ((v - lo) / (hi - lo || 1)) * (H - 4);
      d += k === 0 ? `M${x.toFixed(1)} ${y.toFixed(1)}` : `H${x.toFixed(1)}V${y.toFixed(1)}`;
    });
    const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    path.setAttribute('d', d);
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', s.color);
    path.setAttribute('stroke-width', '2');
    path.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.append(path);
  }
  clear(el.chart).append(svg);
}

/** Applies a tick `{status, trading_paused, prices, total_volume, trades, ...}`. */
function onTick(tick) {
  const m = state.market;
  const t = Date.now();
  let unknown = false;
  for (const p of tick.prices || []) {
    const o = m.outcomes.find((x) => x.id === p.outcome_id);
    if (!o) unknown = true;
    else if (o.current_price !== p.price) {
      o.current_price = p.price;
      addPoint(p.outcome_id, t, p.price);
    }
  }
  m.total_volume = tick.total_volume ?? m.total_volume;
  m.trading_paused = tick.trading_paused ?? m.trading_paused;
  const settledNow = tick.status !== m.status && (tick.status === 'resolved' || tick.status === 'cancelled');
  m.status = tick.status ?? m.status;
  render();
  // A new outcome, or a settlement (the winner): the detail has what the tick does not.
  if (unknown || settledNow) {
    call('market_detail', { path: { market_id: marketId } }).then((fresh) => {
      state.market = sortOutcomes(fresh);
      render();
      // Settled for good (no dispute window left): the ticker has ended; do not reconnect.
      if (isFinal(fresh)) settle();
    }, () => {});
  }
}

start();
