// The one API client. Routes come from api.js, which the server generates from its own
// OpenAPI document, so a call names an operationId and never spells a URL.
import { operations } from './api.js';
import { formatExactUnits } from './money.js';

/** A non-2xx answer, carrying the problem+json body (RFC 9457). */
export class ApiError extends Error {
  constructor(problem, status) {
    super(problem.detail || problem.title || 'The request failed.');
    this.name = 'ApiError';
    this.status = problem.status ?? status;
    this.code = problem.code ?? 'unknown';
    this.title = problem.title ?? '';
    this.detail = problem.detail ?? this.message;
    this.errors = Array.isArray(problem.errors) ? problem.errors : [];
    this.problem = problem;
  }

  /** What to show the user: the detail, plus field messages when they add something. */
  get userMessage() {
    const extra = this.errors
      .filter((e) => e && e.message && !this.detail.includes(e.message))
      .map((e) => (e.field ? `${e.field}: ${e.message}` : e.message));
    return extra.length ? `${this.detail} (${extra.join('; ')})` : this.detail;
  }
}

// Problem codes whose detail states amounts as the API does, in wei (or share units), and the
// unit each figure is in.
const AMOUNT_DETAILS = {
  bet_below_minimum: 'token',
  bet_above_maximum: 'token',
  insufficient_balance: 'token',
  insufficient_treasury: 'token',
  insufficient_shares: 'shares',
};

/** Any error as text for the user: a problem's detail, or the error's own message. Given the
 *  market's `token` ({decimals, symbol}), the wei figures in a detail are shown in token units
 *  ("the minimum bet is 1000" -> "The minimum bet is 0.000000000000001 USDC."). */
export function errorText(err, token) {
  if (!(err instanceof ApiError)) return (err && err.message) || String(err);
  const unit = AMOUNT_DETAILS[err.code];
  if (!unit || !token || !Number.isInteger(token.decimals)) return err.userMessage;
  const text = err.detail.replace(/\b[0-9]+\b/g, (wei) => {
    const amount = formatExactUnits(wei, token.decimals);
    return unit === 'shares' ? amount : `${amount} ${token.symbol}`;
  });
  return text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');
}

const shape = (path) => path.replace(/\{[^}]+\}/g, '{}');

/** The operationId serving `method path` (path params in any spelling), or null when the
 *  server does not offer it. */
export function operationFor(method, path) {
  const want = shape(path);
  for (const [id, [m, p]] of Object.entries(operations)) {
    if (m.toUpperCase() === method.toUpperCase() && shape(p) === want) return id;
  }
  return null;
}

export function hasOperation(id) {
  return Object.prototype.hasOwnProperty.call(operations, id);
}

/** The URL of an operation with its path params filled (`path`: an object by name, or an
 *  array in order) and its query string. */
export function urlFor(operationId, { path = {}, query } = {}) {
  const route = operations[operationId];
  if (!route) throw new ApiError({ status: 0, code: 'unknown_operation', detail: `This server does not offer ${operationId}.` }, 0);
  let i = 0;
  let url = route[1].replace(/\{([^}]+)\}/g, (_, name) => {
    const v = Array.isArray(path) ? path[i++] : path[name];
    if (v === undefined || v === null) throw new Error(`missing path parameter ${name} for ${operationId}`);
    return encodeURIComponent(String(v));
  });
  if (query) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
    const s = qs.toString();
    if (s) url += '?' + s;
  }
  return url;
}

/**
 * Calls an operation. `token` (a user's access token) or `apiKey` (a provider's key) becomes
 * the bearer; `idempotencyKey` the Idempotency-Key header. Resolves to the parsed JSON body;
 * rejects with an ApiError.
 */
export async function call(operationId, { path, query, body, token, apiKey, idempotencyKey, signal } = {}) {
  const method = operations[operationId]?.[0] ?? 'GET';
  const url = urlFor(operationId, { path, query });
  const headers = { accept: 'application/json' };
  const bearer = token || apiKey;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  let payload;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, { method, headers, body: payload, signal, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    if (e && e.name === 'AbortError') throw e;
    throw new ApiError({ status: 0, code: 'network_error', detail: 'Could not reach the server. Check your connection and try again.' }, 0);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const problem = data && typeof data === 'object' ? data : { detail: res.statusText || 'The request failed.' };
    throw new ApiError({ status: res.status, ...problem }, res.status);
  }
  return data;
}

/** A fresh Idempotency-Key. */
export function newIdempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
