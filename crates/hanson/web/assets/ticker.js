// Tickers over one WebSocket: `{"op":"subscribe","market_id":ID,"channel":"ticker"}` per
// market, each tick handed to `onTick` (the market's state at most every ticker interval,
// conflated by the server). Reconnects with backoff and subscribes again; every tick carries
// the whole state, so nothing needs replaying. For pages that show many markets at once
// (market cards, embeds) without opening one stream each.
import { hasOperation, urlFor } from './client.js';

export class TickerSocket {
  constructor(onTick) {
    this.onTick = onTick;
    this.markets = new Set();
    this.retry = 1000;
    this.closed = false;
    this.ws = null;
  }

  connect() {
    if (this.closed || this.ws) return;
    const path = hasOperation('websocket') ? urlFor('websocket') : '/v1/ws';
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${path}`);
    this.ws = ws;
    ws.addEventListener('open', () => {
      this.retry = 1000;
      for (const id of this.markets) this.send(ws, { op: 'subscribe', market_id: id, channel: 'ticker' });
    });
    ws.addEventListener('message', (e) => {
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (msg.type === 'ticker' && this.markets.has(msg.market_id)) this.onTick(msg);
    });
    ws.addEventListener('close', () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed || !this.markets.size) return;
      setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 15000);
    });
  }

  send(ws, msg) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  }

  /** Follows exactly these markets. */
  follow(ids) {
    const wanted = new Set(ids);
    for (const id of this.markets) {
      if (!wanted.has(id)) {
        this.markets.delete(id);
        this.send(this.ws, { op: 'unsubscribe', market_id: id, channel: 'ticker' });
      }
    }
    for (const id of wanted) {
      if (!this.markets.has(id)) {
        this.markets.add(id);
        this.send(this.ws, { op: 'subscribe', market_id: id, channel: 'ticker' });
      }
    }
    if (this.markets.size) this.connect();
  }

  close() {
    this.closed = true;
    if (this.ws) this.ws.close();
  }
}

/**
 * One market's ticker over Server-Sent Events: `onTick(data)` for each tick (the state now
 * first, on every (re)connection), `onState('live'|'reconnecting')`. The browser reconnects
 * by itself; after an HTTP error it gives up and this retries with backoff.
 */
export class TickerStream {
  constructor(marketId, { onTick, onState }) {
    this.marketId = marketId;
    this.onTick = onTick;
    this.onState = onState || (() => {});
    this.closed = false;
    this.retry = 1000;
    this.open();
    // A tab woken from sleep may hold a dead connection: reopen when it becomes visible.
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && !this.closed && this.es && this.es.readyState === EventSource.CLOSED) this.open();
    });
  }

  open() {
    if (this.es) this.es.close();
    const es = new EventSource(urlFor('market_ticker', { path: [this.marketId] }));
    this.es = es;
    es.addEventListener('open', () => {
      this.retry = 1000;
      this.onState('live');
    });
    es.addEventListener('ticker', (e) => {
      let tick;
      try {
        tick = JSON.parse(e.data);
      } catch {
        return;
      }
      this.onTick(tick);
    });
    es.addEventListener('error', () => {
      if (this.closed || this.es !== es) return;
      this.onState('reconnecting');
      if (es.readyState === EventSource.CLOSED) {
        setTimeout(() => !this.closed && this.es === es && this.open(), this.retry);
        this.retry = Math.min(this.retry * 2, 15000);
      }
    });
  }

  close() {
    this.closed = true;
    if (this.es) this.es.close();
  }
}
