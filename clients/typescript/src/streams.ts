// Live event streams (Server-Sent Events) with reconnection: the market stream resumes after a
// dropped connection with `Last-Event-ID` (the last `id:` seen), so nothing is missed or seen
// twice; the user stream starts again with a fresh snapshot; any other stream of the service
// (e.g. a market's ticker) fits `subscribe` as it is.

import { HansonError } from './errors.js';
import { readEvents } from './sse.js';
import type { Session } from './session.js';

/** One event: its SSE `event:` name, its `id:` (a market event's seq) and its parsed data. */
export interface StreamEvent<T = any> {
  type: string;
  id?: string;
  data: T;
}

export interface SubscribeOptions {
  /** After a dropped connection, send `Last-Event-ID` with the last id seen (default true). */
  resume?: boolean;
  /** Start after this id: sent as `Last-Event-ID` on the first connection (`"0"` replays a
   *  market's events from its creation). */
  lastEventId?: string;
  /** Headers for each connection, asked again at every reconnection (a fresh access token). */
  headers?: () => Record<string, string> | Promise<Record<string, string>>;
  /** Whether an event is the stream's last: the subscription ends after handing it over. */
  isLast?: (event: StreamEvent) => boolean;
  /** Milliseconds to wait before reconnecting (default 1000; a `retry:` field replaces it). */
  retryMs?: number;
  /** Told of each dropped connection, before the reconnection. */
  onDisconnect?: (error: unknown) => void;
  /** Told of the error that ended the subscription (as `done` rejects with it). */
  onError?: (error: unknown) => void;
  signal?: AbortSignal;
  fetch?: typeof globalThis.fetch;
}

export interface Subscription {
  /** Ends the subscription and its connection. */
  close(): void;
  /** Settles when the subscription ends: resolved after `close()` or the last event, rejected
   *  with a HansonError when the service refuses the stream (an unknown market: 404; an
   *  ended session: 401), or with the error `onEvent` threw (also handed to `onError`). */
  readonly done: Promise<void>;
  /** The last event id seen. */
  readonly lastEventId: string | undefined;
}

export type EventHandler = (event: StreamEvent) => void | Promise<void>;

/** Statuses worth another try: the service is busy, restarting or briefly unavailable. */
const TRANSIENT = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Follows the stream at `path` (e.g. `/v1/markets/{id}/events`), handing each event to
 * `onEvent` in order, and reconnects whenever the connection drops or ends, until `close()`,
 * an `isLast` event, or a refusal.
 */
export function subscribe(baseUrl: string, path: string, onEvent: EventHandler, options: SubscribeOptions = {}): Subscription {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const url = baseUrl.replace(/\/+$/, '') + path;
  const resume = options.resume ?? true;
  let retryMs = options.retryMs ?? 1000;
  let lastEventId = options.lastEventId;
  let closed = false;
  let connection: AbortController | undefined;
  let wake: (() => void) | undefined;

  const close = () => {
    closed = true;
    connection?.abort();
    wake?.();
  };
  options.signal?.addEventListener('abort', close, { once: true });
  if (options.signal?.aborted) closed = true;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const run = async () => {
    let first = true;
    while (!closed) {
      connection = new AbortController();
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', ...(await options.headers?.()) };
        if (lastEventId !== undefined && (first || resume)) headers['last-event-id'] = lastEventId;
        first = false;
        const response = await fetchImpl(url, { headers, signal: connection.signal });
        if (!response.ok || !response.body) {
          const error = await HansonError.of(response);
          if (!TRANSIENT.has(response.status)) throw error;
          throw new Disconnected(error);
        }
        for await (const raw of readEvents(response.body)) {
          if (raw.retry !== undefined) retryMs = raw.retry;
          if (raw.id !== undefined) lastEventId = raw.id;
          const event: StreamEvent = { type: raw.event, id: raw.id, data: parse(raw.data) };
          await handOver(onEvent, event);
          if (options.isLast?.(event)) return;
          if (closed) return;
        }
        options.onDisconnect?.(new Error('the stream ended'));
      } catch (error) {
        if (closed) return;
        if (error instanceof Disconnected) options.onDisconnect?.(error.cause);
        else if (error instanceof HandlerError || error instanceof HansonError) throw error instanceof HandlerError ? error.cause : error;
        else options.onDisconnect?.(error);
      } finally {
        connection.abort();
      }
      if (!closed) await pause(retryMs);
    }
  };

  const done = run().finally(() => {
    closed = true;
    options.signal?.removeEventListener('abort', close);
  });
  // Handled here, so a subscription nobody awaits cannot end the process with an unhandled
  // rejection; awaiting `done` still sees the error.
  done.catch((error) => options.onError?.(error));
  return {
    close,
    done,
    get lastEventId() {
      return lastEventId;
    },
  };
}

/** A market's events (`GET /v1/markets/{market_id}/events`): first a `snapshot` (or, with
 *  `lastEventId`, every event after that seq), then each event live, resuming by seq after a
 *  dropped connection. Ends by itself after the market's final event. */
export function marketEvents(baseUrl: string, marketId: string, onEvent: EventHandler, options: SubscribeOptions = {}): Subscription {
  return subscribe(baseUrl, `/v1/markets/${encodeURIComponent(marketId)}/events`, onEvent, { isLast: endsMarketStream, ...options, resume: true });
}

/** The logged-in wallet's own changes (`GET /v1/auth/events`): a `snapshot` of balances and
 *  positions, then balance, position, trade and claim events. A reconnection starts with a
 *  new snapshot (this stream has no resume point). */
export function userEvents(baseUrl: string, session: Session, onEvent: EventHandler, options: SubscribeOptions = {}): Subscription {
  const headers = async () => ({ ...(await options.headers?.()), authorization: `Bearer ${await session.accessToken()}` });
  return subscribe(baseUrl, '/v1/auth/events', onEvent, { ...options, headers, resume: false });
}

/** A market's ticker (`GET /v1/markets/{market_id}/ticker`, on services that offer it): its
 *  first event is the state now, so a reconnection needs no resume point. */
export function tickerEvents(baseUrl: string, marketId: string, onEvent: EventHandler, options: SubscribeOptions = {}): Subscription {
  return subscribe(baseUrl, `/v1/markets/${encodeURIComponent(marketId)}/ticker`, onEvent, { resume: false, isLast: settledTick, ...options });
}

/** A tick of a resolved or cancelled market: the ticker helper ends after it (a resolution
 *  still in its dispute window may change; subscribe again to follow it). */
export function settledTick(event: StreamEvent): boolean {
  return event.type === 'ticker' && (event.data?.status === 'resolved' || event.data?.status === 'cancelled');
}

/** A market's last event: its cancellation, its finalization, or a resolution that is final at
 *  once (no dispute window: no `final_at` after `resolved_at`). */
export function endsMarketStream(event: StreamEvent): boolean {
  if (event.type === 'market.cancelled' || event.type === 'market.finalized') return true;
  if (event.type !== 'market.resolved') return false;
  const resolution = event.data?.data ?? {};
  const finalAt = Date.parse(resolution.final_at ?? '');
  return !(finalAt > Date.parse(resolution.resolved_at ?? ''));
}

async function handOver(onEvent: EventHandler, event: StreamEvent): Promise<void> {
  try {
    await onEvent(event);
  } catch (error) {
    throw new HandlerError(error);
  }
}

function parse(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

class Disconnected extends Error {
  constructor(readonly cause: unknown) {
    super('disconnected');
  }
}

class HandlerError extends Error {
  constructor(readonly cause: unknown) {
    super('the event handler failed');
  }
}
