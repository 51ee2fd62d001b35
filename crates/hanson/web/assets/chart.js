// The price chart: the market's candles (open, high, low, close per outcome per bucket, every
// bucket filled, in one request), drawn with uPlot as a line of closes with each bucket's
// candle over it, extended live by the market's updates.
import uPlot from './vendor/uPlot.min.js';
import { call } from './client.js';
import { priceToNumber } from './money.js';
import { formatDate, outcomeColor } from './ui.js';

/** Interval buttons: the candle width and how far back each looks (null: the whole life). */
export const INTERVALS = [
  { id: '1m', seconds: 60, window: 3 * 3600, label: '1m', title: '1-minute candles, last 3 hours' },
  { id: '5m', seconds: 300, window: 24 * 3600, label: '5m', title: '5-minute candles, last 24 hours' },
  { id: '1h', seconds: 3600, window: 7 * 86400, label: '1h', title: 'Hourly candles, last 7 days' },
  { id: '4h', seconds: 14400, window: 30 * 86400, label: '4h', title: '4-hour candles, last 30 days' },
  { id: '1d', seconds: 86400, window: null, label: '1d', title: 'Daily candles, all time' },
];

// The most buckets one candles request may cover.
const MAX_BUCKETS = 1000;

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

/** The viewer's time zone, as the chart's times are shown in it ("UTC", "GMT+1", "CET"). */
function localZone() {
  const part = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(new Date()).find((p) => p.type === 'timeZoneName');
  return part ? `Time (${part.value})` : 'Time';
}

export class PriceChart {
  /** market: the market detail (id, outcomes, created_at). */
  constructor(container, market) {
    this.container = container;
    this.market = market;
    this.interval = INTERVALS.find((i) => i.id === defaultInterval(market.created_at));
    this.buckets = new Map(); // bucket start (s) -> Map(outcome id -> price number)
    this.ohlc = new Map(); // bucket start (s) -> Map(outcome id -> {open, high, low, close, trades})
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

  /** Loads the candles of `intervalId` (one request: every bucket, empty ones filled) and draws them. */
  async load(intervalId = this.interval.id) {
    this.interval = INTERVALS.find((i) => i.id === intervalId) || this.interval;
    const id = ++this.loadId;
    const iv = this.interval;
    this.pending = []; // live prices that arrive while the candles load
    const nowSec = Date.now() / 1000;
    const createdAt = Math.floor(new Date(this.market.created_at).getTime() / 1000);
    // The server answers at most 1,000 buckets; older ones are left out of "all time".
    const startSec = Math.max(iv.window ? nowSec - iv.window : createdAt, nowSec - (MAX_BUCKETS - 1) * iv.seconds);
    let answer;
    try {
      answer = await call('market_candles', { path: { market_id: this.market.id }, query: { interval: iv.id, start: new Date(startSec * 1000).toISOString() } });
      performance.mark('hanson:chart-data');
    } catch (e) {
      if (id === this.loadId) {
        this.pending = null;
        this.draw(true);
      }
      throw e;
    }
    if (id !== this.loadId) return; // another interval was chosen meanwhile
    this.buckets = new Map();
    this.ohlc = new Map();
    this.start = null;
    const opens = new Map();
    let first = null;
    for (const o of answer.outcomes) {
      for (const c of o.candles) {
        const t = Math.floor(new Date(c.start).getTime() / 1000);
        if (!opens.has(o.outcome_id)) opens.set(o.outcome_id, priceToNumber(c.open));
        first = first === null ? t : Math.min(first, t);
        this.put(c.start, o.outcome_id, c.close);
        if (!this.ohlc.has(t)) this.ohlc.set(t, new Map());
        this.ohlc.get(t).set(o.outcome_id, { open: priceToNumber(c.open), high: priceToNumber(c.high), low: priceToNumber(c.low), close: priceToNumber(c.close), trades: c.trades });
      }
    }
    // The line starts at the first bucket's open.
    if (first !== null) this.start = { t: first, values: opens };
    for (const [timestamp, prices] of this.pending) for (const p of prices) this.put(timestamp, p.outcome_id, p.price);
    this.pending = null;
    this.draw(true);
    performance.mark('hanson:chart-drawn');
  }

  /** Candle bodies (open to close) and wicks (low to high), one thin candle per outcome per bucket. */
  drawCandles(u) {
    if (!this.ohlc || !this.ohlc.size) return;
    const ctx = u.ctx;
    const outcomes = this.market.outcomes;
    const span = u.valToPos(this.interval.seconds, 'x', true) - u.valToPos(0, 'x', true);
    const slot = Math.max(1, Math.min(10, (span * 0.7) / outcomes.length));
    ctx.save();
    for (const [t, row] of this.ohlc) {
      outcomes.forEach((o, i) => {
        const c = row.get(o.id);
        if (!c || (c.trades === 0 && c.high === c.low)) return; // a flat bucket: the line shows it
        const x = u.valToPos(t, 'x', true) + span * 0.15 + i * slot;
        const [yo, yc, yh, yl] = [c.open, c.close, c.high, c.low].map((v) => u.valToPos(v, 'y', true));
        ctx.strokeStyle = outcomeColor(i);
        ctx.fillStyle = outcomeColor(i);
        ctx.globalAlpha = 0.55;
        ctx.beginPath();
        ctx.moveTo(x + slot / 2, yh);
        ctx.lineTo(x + slot / 2, yl);
        ctx.stroke();
        ctx.fillRect(x, Math.min(yo, yc), Math.max(1, slot - 1), Math.max(1, Math.abs(yc - yo)));
      });
    }
    ctx.restore();
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
      hooks: { draw: [(u) => this.drawCandles(u)] },
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
        // The axis's times are local: its label names the zone.
        { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, label: localZone(), labelSize: 16, labelFont: '11px system-ui, sans-serif' },
        { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { show: false }, size: 48, values: (u, ticks) => ticks.map((v) => `${Math.round(v * 100)}%`) },
      ],
      series: [
        // With no cursor on the chart, the legend shows the current prices.
        { value: (u, v, si, idx) => (idx === null || v === null ? 'Now' : formatDate(new Date(v * 1000).toISOString())) },
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
    this.empty.textContent = this.buckets.size ? '' : this.pending ? 'Loading…' : 'No prices in this period yet.';
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
