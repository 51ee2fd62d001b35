// Live data. MarketStream follows one market over Server-Sent Events (the browser resends
// Last-Event-ID on reconnect; a new snapshot means "replace your state"). LiveSocket is the
// WebSocket: the logged-in user's channel (EventSource cannot send an Authorization header)
// plus any market subscriptions.
import { urlFor, hasOperation } from './client.js';

/** Whether the server ends a market's stream after this event: a cancellation, a
 *  finalization, or a resolution without a dispute window (one with a window may still be
 *  replaced, and ends with market.finalized). */
function endsStream(env) {
  if (env.type === 'market.cancelled' || env.type === 'market.finalized') return true;
  return env.type === 'market.resolved' && !(env.data && env.data.dispute_window_seconds > 0);
}

/**
 * Follows `GET /v1/markets/{id}/events`. Handlers: onSnapshot({seq, market}), onEvent(envelope),
 * onState('live'|'reconnecting'|'closed'). Events are applied in seq order, each once.
 */
export class MarketStream {
  constructor(marketId, { onSnapshot, onEvent, onState }) {
    this.marketId = marketId;
    this.onSnapshot = onSnapshot;
    this.onEvent = onEvent;
    this.onState = onState || (() => {});
    this.seq = null;
    this.closed = false;
    this.retry = 1000;
    this.open();
    // A tab woken from sleep may hold a dead connection: reopen when it becomes visible.
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && !this.closed && this.es && this.es.readyState === EventSource.CLOSED) this.open();
    });
  }

  url() {
    const query = this.seq !== null ? { after_seq: this.seq } : undefined;
    return urlFor('market_events', { path: [this.marketId], query });
  }

  open() {
    if (this.es) this.es.close();
    const es = new EventSource(this.url());
    this.es = es;
    es.addEventListener('open', () => {
      this.retry = 1000;
      this.onState('live');
    });
    es.addEventListener('snapshot', (e) => {
      const snap = JSON.parse(e.data);
      this.seq = Number(snap.seq);
      this.onSnapshot(snap);
    });
    es.onmessage = (e) => this.handle(e); // events without an `event:` name (none expected)
    for (const type of ['market.created', 'market.updated', 'outcome.created', 'outcome.updated', 'trade.created', 'market.closed', 'market.resolved', 'market.cancelled', 'market.finalized']) {
      es.addEventListener(type, (e) => this.handle(e));
    }
    es.addEventListener('error', () => {
      if (this.closed) return;
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (an HTTP error such as 429 or 503): retry ourselves, resuming
        // from the last seq we applied.
        this.onState('reconnecting');
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.open(), this.retry);
        this.retry = Math.min(this.retry * 2, 30000);
      } else {
        this.onState('reconnecting');
      }
    });
  }

  handle(e) {
    let env;
    try {
      env = JSON.parse(e.data);
    } catch {
      return;
    }
    const seq = env.seq === null || env.seq === undefined ? null : Number(env.seq);
    if (seq !== null && this.seq !== null) {
      if (seq <= this.seq) return; // already applied
      if (seq > this.seq + 1) {
        // A gap should not happen; start over from what we have.
        this.open();
        return;
      }
    }
    if (seq !== null) this.seq = seq;
    this.onEvent(env);
    if (endsStream(env)) {
      // The server ends a settled market's stream: nothing more will come.
      this.close();
      this.onState('closed');
    }
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.es) this.es.close();
  }
}

/**
 * One WebSocket to `/v1/ws`. `getToken()` resolves to the access token for the user channel
 * (or null). Handlers: onUser(message) for the user channel (snapshot and envelopes with
 * seq null), onMarket(marketId, message) for market subscriptions, onState(state).
 */
export class LiveSocket {
  constructor({ getToken, onUser, onMarket, onState }) {
    this.getToken = getToken;
    this.onUser = onUser || (() => {});
    this.onMarket = onMarket || (() => {});
    this.onState = onState || (() => {});
    this.markets = new Map(); // market id -> last seq
    this.wantUser = !!getToken;
    this.closed = false;
    this.retry = 1000;
    this.connect();
  }

  connect() {
    if (this.closed) return;
    const path = hasOperation('websocket') ? urlFor('websocket') : '/v1/ws';
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${path}`);
    this.ws = ws;
    ws.addEventListener('open', async () => {
      this.retry = 1000;
      this.onState('live');
      if (this.wantUser) await this.auth();
      for (const [id, seq] of this.markets) this.send({ op: 'subscribe', market_id: id, ...(seq !== null ? { after_seq: seq } : {}) });
    });
    ws.addEventListener('message', (e) => this.handle(e.data));
    ws.addEventListener('close', () => {
      if (this.ws !== ws || this.closed) return;
      this.onState('reconnecting');
      setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 15000);
    });
  }

  async auth() {
    const token = await this.getToken().catch(() => null);
    if (!token) {
      this.wantUser = false;
      this.onUser({ type: 'error', code: 'unauthenticated', detail: 'Not logged in.' });
      return;
    }
    this.send({ op: 'auth', access_token: token });
  }

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  subscribeMarket(marketId) {
    if (this.markets.has(marketId)) return;
    this.markets.set(marketId, null);
    this.send({ op: 'subscribe', market_id: marketId });
  }

  unsubscribeMarket(marketId) {
    if (!this.markets.delete(marketId)) return;
    this.send({ op: 'unsubscribe', market_id: marketId });
  }

  handle(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    switch (msg.type) {
      case 'ping':
      case 'subscribed':
      case 'unsubscribed':
        return;
      case 'authenticated':
        this.send({ op: 'subscribe', channel: 'user' });
        return;
      case 'snapshot':
        if (msg.channel === 'user') this.onUser(msg);
        else if (msg.market_id) {
          this.markets.set(msg.market_id, Number(msg.seq));
          this.onMarket(msg.market_id, msg);
        }
        return;
      case 'error':
        if (msg.market_id) {
          if (msg.code === 'lagged') this.send({ op: 'subscribe', market_id: msg.market_id, after_seq: this.markets.get(msg.market_id) ?? undefined });
          else this.onMarket(msg.market_id, msg);
        } else if (msg.code === 'unauthenticated' || msg.code === 'session_ended') {
          this.onUser(msg);
        }
        return;
      default:
        if (msg.seq === null || msg.seq === undefined) {
          this.onUser(msg);
        } else if (msg.market_id && this.markets.has(msg.market_id)) {
          const last = this.markets.get(msg.market_id);
          if (last !== null && Number(msg.seq) <= last) return;
          this.markets.set(msg.market_id, Number(msg.seq));
          this.onMarket(msg.market_id, msg);
        }
    }
  }

  close() {
    this.closed = true;
    if (this.ws) this.ws.close();
  }
}
