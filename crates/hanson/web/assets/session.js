// Wallet login per provider: tokens kept in localStorage (so a login holds across pages and
// reloads), the access token refreshed before it expires, one refresh at a time across tabs
// (a spent refresh token presented twice would revoke the session).
import { call, ApiError } from './client.js';

const AUTH_PREFIX = 'hanson.auth.';
const LAST_PROVIDER = 'hanson.lastProvider';
const events = new EventTarget();
const timers = new Map();

function read(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || 'null');
  } catch {
    return null;
  }
}

export function rememberProvider(providerId) {
  if (providerId) localStorage.setItem(LAST_PROVIDER, providerId);
}

export function lastProvider() {
  return localStorage.getItem(LAST_PROVIDER);
}

let soleProvider = null;

/** `{id, providers}`: how many providers the markets listed have, and their id when they all
 *  have the same one (a one-provider install), else null: a page that names no market can
 *  then still log in. Asked once. */
export function discoverProvider() {
  soleProvider ??= call('search_markets', { body: { pagination: { page: 1, per_page: 100 } } }).then(
    (r) => {
      const ids = [...new Set((r.data || []).map((m) => m.provider && m.provider.id).filter(Boolean))];
      return { id: ids.length === 1 ? ids[0] : null, providers: ids.length };
    },
    () => ({ id: null, providers: 0 }),
  );
  return soleProvider;
}

/** The stored login of a provider: {provider_id, access_token, refresh_token, session_id,
 *  expires_at (ms), wallet_address, wallet_id}, or null. */
export function getAuth(providerId) {
  if (!providerId) return null;
  const a = read(AUTH_PREFIX + providerId);
  return a && a.access_token && a.refresh_token ? a : null;
}

function save(providerId, auth) {
  if (auth) localStorage.setItem(AUTH_PREFIX + providerId, JSON.stringify(auth));
  else localStorage.removeItem(AUTH_PREFIX + providerId);
  events.dispatchEvent(new CustomEvent('change', { detail: { providerId } }));
  schedule(providerId);
}

/** Calls `fn({providerId})` whenever a login changes, in this tab or another. */
export function onAuthChange(fn) {
  events.addEventListener('change', (e) => fn(e.detail));
  window.addEventListener('storage', (e) => {
    if (e.key && e.key.startsWith(AUTH_PREFIX)) {
      const providerId = e.key.slice(AUTH_PREFIX.length);
      schedule(providerId);
      fn({ providerId });
    }
  });
}

function grantToAuth(providerId, grant, previous) {
  return {
    ...(previous || {}),
    provider_id: providerId,
    access_token: grant.access_token,
    refresh_token: grant.refresh_token,
    session_id: grant.session_id || previous?.session_id,
    expires_at: Date.now() + Number(grant.expires_in) * 1000,
  };
}

function utf8Hex(text) {
  return '0x' + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The wallet's chain as a number (EIP-155), or 1 when it does not say. */
async function chainId(eth) {
  try {
    const id = Number.parseInt(await eth.request({ method: 'eth_chainId' }), 16);
    return Number.isSafeInteger(id) && id > 0 ? id : 1;
  } catch {
    return 1;
  }
}

/** A login nonce with a Sign-In with Ethereum message, so the wallet shows which site asks;
 *  a server without a public URL offers only the spec's message, asked for then. */
async function requestNonce(eth, address, providerId) {
  const body = { wallet_address: address, provider_id: providerId };
  try {
    return await call('nonce', { body: { ...body, message_format: 'siwe', chain_id: await chainId(eth) } });
  } catch (e) {
    const noSiwe = e instanceof ApiError && e.status === 422 && e.errors.some((x) => x && x.field === 'message_format');
    if (!noSiwe) throw e;
    return call('nonce', { body });
  }
}

/** Logs in to `providerId` with the browser wallet (EIP-1193): account, nonce,
 *  personal_sign, login. Resolves to the stored auth. */
export async function login(providerId) {
  const eth = window.ethereum;
  if (!eth || typeof eth.request !== 'function') {
    throw new Error('No browser wallet found. Install a wallet extension (such as MetaMask) and reload the page.');
  }
  if (!providerId) throw new Error('Open a market first: a login belongs to the provider of the markets you trade, and this server has several.');
  let accounts;
  try {
    accounts = await eth.request({ method: 'eth_requestAccounts' });
  } catch (e) {
    throw new Error(e && e.code === 4001 ? 'The wallet request was rejected.' : `The wallet did not connect: ${e?.message || e}`);
  }
  const address = accounts && accounts[0];
  if (!address) throw new Error('The wallet shared no account.');
  const grant = await requestNonce(eth, address, providerId);
  const message = grant.message || `Sign this message to authenticate with nonce: ${grant.nonce}`;
  let signature;
  try {
    signature = await eth.request({ method: 'personal_sign', params: [utf8Hex(message), address] });
  } catch (e) {
    throw new Error(e && e.code === 4001 ? 'The signature request was rejected.' : `The wallet did not sign: ${e?.message || e}`);
  }
  const tokens = await call('login', {
    body: { provider_id: providerId, wallet_address: address, signature, nonce: grant.nonce, message },
  });
  const auth = grantToAuth(providerId, tokens, { wallet_address: address });
  try {
    const profile = await call('profile', { token: auth.access_token });
    auth.wallet_address = profile.wallet_address;
    auth.wallet_id = profile.wallet_id;
    auth.session_id = profile.session_id || auth.session_id;
  } catch {
    // The login stands without the profile; the header loads it again.
  }
  save(providerId, auth);
  rememberProvider(providerId);
  return auth;
}

/** Ends the session on the server (best effort) and forgets it here. */
export async function logout(providerId) {
  const auth = getAuth(providerId);
  // The session ends on the server first, so that once the page shows "logged out" the
  // tokens no longer work anywhere.
  if (auth) {
    try {
      await call('logout', { token: auth.access_token });
    } catch {
      // Already ended, or unreachable: the tokens are gone from this browser either way.
    }
  }
  save(providerId, null);
}

async function withLock(name, fn) {
  if (navigator.locks && navigator.locks.request) return navigator.locks.request(name, fn);
  return fn();
}

/** Refreshes the access token (rotating the refresh token); clears the login when the
 *  session has ended. Resolves to the auth or null. */
export async function refresh(providerId) {
  const before = getAuth(providerId);
  if (!before) return null;
  return withLock(`hanson-refresh-${providerId}`, async () => {
    // Another tab may have refreshed while we waited for the lock.
    const current = getAuth(providerId);
    if (!current) return null;
    if (current.refresh_token !== before.refresh_token && !nearExpiry(current)) return current;
    try {
      const grant = await call('refresh', { body: { refresh_token: current.refresh_token, provider_id: providerId } });
      const auth = grantToAuth(providerId, grant, current);
      save(providerId, auth);
      return auth;
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 403 || e.status === 422)) {
        save(providerId, null);
        return null;
      }
      throw e;
    }
  });
}

function refreshMargin(auth) {
  return Math.min(5 * 60_000, Math.max(10_000, (auth.expires_at - Date.now()) / 10));
}

function nearExpiry(auth) {
  return auth.expires_at - Date.now() < 30_000;
}

function schedule(providerId) {
  clearTimeout(timers.get(providerId));
  const auth = getAuth(providerId);
  if (!auth) return;
  const delay = Math.max(0, auth.expires_at - Date.now() - refreshMargin(auth));
  timers.set(
    providerId,
    setTimeout(() => {
      refresh(providerId).catch(() => setTimeout(() => schedule(providerId), 30_000));
    }, Math.min(delay, 2 ** 31 - 1)),
  );
}

/** A valid access token for the provider (refreshed first if it is about to expire), or null. */
export async function accessToken(providerId) {
  let auth = getAuth(providerId);
  if (!auth) return null;
  if (nearExpiry(auth)) auth = await refresh(providerId);
  if (auth && !timers.has(providerId)) schedule(providerId);
  return auth ? auth.access_token : null;
}

/** Runs `fn(auth)` with a fresh token; on a 401 refreshes once and retries, and on a second
 *  401 forgets the login. */
export async function withAuth(providerId, fn) {
  const token = await accessToken(providerId);
  if (!token) throw new Error('Connect your wallet first.');
  try {
    return await fn(getAuth(providerId));
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) throw e;
    const auth = await refresh(providerId);
    if (!auth) throw new ApiError({ status: 401, code: 'unauthenticated', detail: 'Your session has ended. Connect your wallet again.' }, 401);
    return fn(auth);
  }
}

/** Starts the refresh timer of a stored login (on page load). */
export function resume(providerId) {
  const auth = getAuth(providerId);
  if (!auth) return;
  if (nearExpiry(auth)) refresh(providerId).catch(() => {});
  else schedule(providerId);
}
