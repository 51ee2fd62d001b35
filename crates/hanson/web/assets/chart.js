// The price chart: candles from price history (never raw points, so a market with a million
// trades loads a few hundred buckets), drawn with uPlot, extended live by the market stream.
import uPlot from './vendor/uPlot.min.js';
import { call } from './client.js';
import { priceToNumber } from './money.js';
import { outcomeColor } from './ui.js';

/** Interval buttons: the candle width and how far back each looks (null: the whole life). */
export const INTERVALS = [
  { id: '1m', seconds: 60, window: 3 * 3600, label: '1m', title: '1-minute candles, last 3 hours' },
  { id: '5m', seconds: 300, window: 24 * 3600, label: '5m', title: '5-minute candles, last 24 hours' },
  { id: '1h', seconds: 3600, window: 7 * 86400, label: '1h', title: 'Hourly candles, last 7 days' },
  { id: '4h', seconds: 14400, window: 30 * 86400, label: '4h', title: '4-hour candles, last 30 days' },
  { id: '1d', seconds: 86400, window: null, label: '1d', title: 'Daily candles, all time' },
];

const PER_PAGE = 100;
// Each bucket is one point per outcome: aim for ~150 buckets, in at most 16 requests.
const maxPages = (outcomes) => Math.max(4, Math.min(16, Math.ceil((outcomes * 150) / PER_PAGE)));

/** The interval that suits a market of this age. */
export function defaultInterval(createdAtIso) {
  const age = (Date.now() - new Date(createdAtIso).getTime()) / 1000;
  if (age < 3 * 3600) return '1m';
  if (age < 24 * 3600) return '5m';
  if (age < 7 * 86400) return '1h';
  if (age < 30 * 86400) return '4h';
  return '1d';
}

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

const pct = (v) => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`);

export class PriceChart {
  /** market: the market detail (id, outcomes, created_at). */
  constructor(container, market) {
    this.container = container;
    this.market = market;
    this.interval = INTERVALS.find((i) => i.id === defaultInterval(market.created_at));
    this.buckets = new Map(); // bucket start (s) -> Map(outcome id -> price number)
    this.start = null; // {t, values: Map} the prices when the window opens
    this.current = new Map(market.outcomes.map((o) => [o.id, priceToNumber(o.current_price)]));
    this.loadId = 0;
    this.pending = null;
    this.plot = null;
    this.empty = document.createElement('div');
    this.empty.className = 'chart-empty';
    this.resize = new ResizeObserver(() => this.fit());
    this.resize.observe(container);
  }

  /** Loads the candles of `intervalId` and draws them. */
  async load(intervalId = this.interval.id) {
    this.interval = INTERVALS.find((i) => i.id === intervalId) || this.interval;
    const id = ++this.loadId;
    const iv = this.interval;
    this.pending = []; // live prices that arrive while the candles load
    const createdAt = Math.floor(new Date(this.market.created_at).getTime() / 1000);
    // The window opens on a whole hour: the server then answers from its hourly candles
    // alone, without counting raw points of a partial hour.
    const opensAt = iv.window ? Math.floor((Date.now() / 1000 - iv.window) / 3600) * 3600 : null;
    const fromSec = opensAt !== null && opensAt > createdAt ? opensAt : null;
    const from = fromSec !== null ? new Date(fromSec * 1000).toISOString() : null;
    const body = (page) => ({
      filters: { market_id: this.market.id, interval: iv.id, ...(from ? { from_date: from } : {}) },
      pagination: { page, per_page: PER_PAGE },
      sort: { field: 'timestamp', direction: 'desc' },
    });
    // The last raw points before the window give the line its starting level.
    const before = from
      ? call('price_history', {
          body: { filters: { market_id: this.market.id, to_date: from }, pagination: { page: 1, per_page: Math.min(100, this.market.outcomes.length) }, sort: { field: 'timestamp', direction: 'desc' } },
        }).catch(() => null)
      : Promise.resolve(null);
    // The newest page first, drawn at once; older pages follow and extend the line leftward.
    let first, prior;
    try {
      [first, prior] = await Promise.all([call('price_history', { body: body(1) }), before]);
      performance.mark('hanson:chart-data');
    } catch (e) {
      if (id === this.loadId) {
        this.pending = null;
        this.draw(true);
      }
      throw e;
    }
    if (id !== this.loadId) return; // another interval was chosen meanwhile
    const limit = maxPages(this.market.outcomes.length);
    const pages = Math.min(first.pagination.total_pages, limit);
    const complete = first.pagination.total_pages <= limit;
    this.buckets = new Map();
    this.add(first);
    for (const [timestamp, prices] of this.pending) for (const p of prices) this.put(timestamp, p.outcome_id, p.price);
    this.pending = null;
    const startT = fromSec !== null ? fromSec : createdAt;
    const setStart = (all) => {
      this.start = null;
      if (!all) return; // older candles exist beyond what is drawn: the line starts at the first
      if (prior && prior.data.length) {
        this.start = { t: startT, values: new Map(prior.data.map((p) => [p.outcome_id, priceToNumber(p.price)])) };
      } else {
        // No trade before the window: prices started even.
        const even = 1 / this.market.outcomes.length;
        this.start = { t: startT, values: new Map(this.market.outcomes.map((o) => [o.id, even])) };
      }
    };
    setStart(pages <= 1);
    this.draw(true);
    performance.mark('hanson:chart-drawn');
    if (pages <= 1) return;
    const rest = await Promise.all(Array.from({ length: pages - 1 }, (_, i) => call('price_history', { body: body(i + 2) })));
    if (id !== this.loadId) return;
    for (const page of rest) this.add(page);
    setStart(complete);
    this.draw(false);
  }

  add(page) {
    for (const p of page.data) this.put(p.timestamp, p.outcome_id, p.price, true);
  }

  put(timestamp, outcomeId, price, keepFirst = false) {
    const t = Math.floor(new Date(timestamp).getTime() / 1000);
    const b = Math.floor(t / this.interval.seconds) * this.interval.seconds;
    let row = this.buckets.get(b);
    if (!row) this.buckets.set(b, (row = new Map()));
    // Pages come newest first within the bucket order; a bucket holds one point per outcome.
    if (!(keepFirst && row.has(outcomeId))) row.set(outcomeId, priceToNumber(price));
  }

  /** A trade (or outcome change) moved the prices at `timestamp`. */
  addPrices(timestamp, prices) {
    if (this.pending) this.pending.push([timestamp, prices]);
    for (const p of prices) {
      this.current.set(p.outcome_id, priceToNumber(p.price));
      this.put(timestamp, p.outcome_id, p.price);
    }
    this.draw(false);
  }

  /** The market's outcomes changed (an outcome was added or renamed). */
  setMarket(market) {
    const rebuild = market.outcomes.length !== this.market.outcomes.length || market.outcomes.some((o, i) => o.title !== this.market.outcomes[i]?.title);
    this.market = market;
    this.current = new Map(market.outcomes.map((o) => [o.id, priceToNumber(o.current_price)]));
    if (rebuild && this.plot) {
      this.plot.destroy();
      this.plot = null;
    }
    this.draw(false);
  }

  data() {
    const outcomes = this.market.outcomes;
    const xs = [];
    const ys = outcomes.map(() => []);
    const last = outcomes.map((o) => (this.start ? this.start.values.get(o.id) ?? null : null));
    const push = (t, row) => {
      if (xs.length && t <= xs[xs.length - 1]) {
        // Same instant as the previous point (a window opening on a bucket): keep the later values.
        xs.pop();
        ys.forEach((y) => y.pop());
        t = Math.max(t, xs.length ? xs[xs.length - 1] + 1 : t);
      }
      xs.push(t);
      outcomes.forEach((o, i) => {
        const v = row ? row.get(o.id) : undefined;
        if (v !== undefined) last[i] = v;
        ys[i].push(last[i]);
      });
    };
    if (this.start) push(this.start.t, this.start.values);
    for (const t of [...this.buckets.keys()].sort((a, b) => a - b)) {
      // The market's first bucket may begin before the market itself: draw it just after.
      push(this.start && t <= this.start.t ? this.start.t + 1 : t, this.buckets.get(t));
    }
    const now = Math.floor(Date.now() / 1000);
    if (!xs.length || now > xs[xs.length - 1]) push(now, this.current);
    return [xs, ...ys];
  }

  options(width) {
    const muted = cssVar('--muted', '#64748b');
    const grid = cssVar('--border', '#e2e7ee');
    return {
      width,
      height: width < 500 ? 220 : 280,
      padding: [12, 8, 0, 0],
      cursor: { drag: { x: false, y: false }, points: { size: 7 } },
      legend: { show: true, live: true },
      scales: {
        x: { time: true },
        y: {
          range: (u, min, max) => {
            if (min === null || max === null) return [0, 1];
            const pad = Math.max(0.02, (max - min) * 0.15);
            let lo = Math.max(0, min - pad);
            let hi = Math.min(1, max + pad);
            if (hi - lo < 0.1) {
              const mid = (hi + lo) / 2;
              lo = Math.max(0, mid - 0.05);
              hi = Math.min(1, mid + 0.05);
            }
            return [lo, hi];
          },
        },
      },
      axes: [
        { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
        { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { show: false }, size: 48, values: (u, ticks) => ticks.map((v) => `${Math.round(v * 100)}%`) },
      ],
      series: [
        // With no cursor on the chart, the legend shows the current prices.
        { value: (u, v, si, idx) => (idx === null || v === null ? 'Now' : new Date(v * 1000).toLocaleString()) },
        ...this.market.outcomes.map((o, i) => ({
          label: o.title,
          stroke: outcomeColor(i),
          width: 2,
          paths: uPlot.paths.stepped({ align: 1 }),
          points: { show: false },
          value: (u, v, si, idx) => pct(idx === null ? this.current.get(o.id) : v),
        })),
      ],
    };
  }

  draw(reset) {
    const data = this.data();
    const width = Math.max(200, this.container.clientWidth);
    if (!this.plot) {
      this.plot = new uPlot(this.options(width), data, this.container);
      this.container.append(this.empty);
    } else {
      this.plot.setData(data, true);
    }
    this.empty.textContent = this.buckets.size ? '' : this.pending ? 'Loading…' : 'No trades in this period yet.';
    this.empty.hidden = this.buckets.size > 0;
    if (reset) this.container.dataset.interval = this.interval.id;
    const now = this.market.outcomes.map((o) => `${o.title} ${pct(this.current.get(o.id))}`).join(', ');
    this.container.setAttribute('aria-label', `Price chart, ${this.interval.title.toLowerCase()}. Now: ${now}.`);
    this.container.dataset.points = String(this.buckets.size);
  }

  fit() {
    if (!this.plot) return;
    const width = Math.max(200, this.container.clientWidth);
    if (Math.abs(width - this.plot.width) > 1) this.plot.setSize({ width, height: width < 500 ? 220 : 280 });
  }
}
