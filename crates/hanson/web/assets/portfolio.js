// Portfolio: the logged-in wallet's balance and positions, live over the WebSocket (user
// channel for balances and positions, market subscriptions for the prices that value them).
import { call, errorText, newIdempotencyKey } from './client.js';
import { h, $, clear, notify, busy, debounce } from './ui.js';
import { formatUnits, formatSignedUnits, formatPercent, mulPrice } from './money.js';
import { mountAccount } from './account.js';
import { getAuth, lastProvider, rememberProvider, withAuth, onAuthChange, discoverProvider } from './session.js';

const params = new URLSearchParams(location.search);
// The provider named, else the last market's, else (found below) the install's only one.
let providerId = params.get('provider_id') || lastProvider();
if (params.get('provider_id')) rememberProvider(params.get('provider_id'));
const root = $('#portfolio-root');
const liveState = $('#live-state');
// `fees`: market id -> the fees (wei, BigInt) this wallet paid on its trades there.
const state = { balances: [], positions: new Map(), markets: new Map(), snapshot: false, loading: new Map(), fees: new Map() };
const STATUS_LABEL = { active: 'Open', closed: 'Sold', won: 'Won', lost: 'Lost', claimed: 'Claimed', refunded: 'Refunded' };

let providers = null;
const providerReady = providerId ? Promise.resolve(providerId) : discoverProvider().then((found) => {
  providerId = found.id;
  providers = found.providers;
  return found.id;
});
const account = mountAccount({ providerId: () => providerId, providerReady, onUser, onMarket });
const el = {};

function layout() {
  clear(root);
  if (!providerId && providers === 0) {
    root.append(h('div', { class: 'card empty', testid: 'portfolio-no-markets' },
      h('h2', {}, 'No markets yet'),
      h('p', {}, 'Nothing can be traded on this server yet, so there is nothing to log in to.'),
      h('a', { href: '/' }, 'See how to create a market')));
    return;
  }
  if (!providerId) {
    root.append(h('div', { class: 'card empty' },
      h('h2', {}, 'Which market provider?'),
      h('p', {}, 'This server runs markets for several providers, and a login belongs to one of them. Open a market of the provider you trade with, then come back here.'),
      h('a', { href: '/' }, 'Browse markets')));
    return;
  }
  if (!getAuth(providerId)) {
    liveState.hidden = true;
    root.append(h('div', { class: 'card empty', testid: 'portfolio-logged-out' },
      h('h2', {}, 'Connect your wallet'),
      h('p', {}, 'Use “Connect wallet” at the top of the page to see your balance and positions.')));
    return;
  }
  liveState.hidden = false;
  el.balance = h('div', { class: 'value', testid: 'balance' }, '—');
  el.value = h('div', { class: 'value', testid: 'portfolio-value' }, '—');
  el.pnl = h('div', { class: 'value', testid: 'portfolio-pnl' }, '—');
  el.claimable = h('div', { class: 'value', testid: 'portfolio-claimable' }, '—');
  el.fees = h('div', { class: 'value', testid: 'portfolio-fees' }, '—');
  el.rows = h('tbody', {});
  el.empty = h('p', { class: 'empty', testid: 'no-positions', hidden: true }, 'No positions yet. ', h('a', { href: '/' }, 'Find a market to trade.'));
  root.append(
    h('div', { class: 'summary' },
      h('div', { class: 'card' }, h('div', { class: 'label' }, 'Balance'), el.balance),
      h('div', { class: 'card' }, h('div', { class: 'label' }, 'Open positions value'), el.value),
      h('div', { class: 'card' }, h('div', { class: 'label' }, 'Unrealized P&L'), el.pnl,
        h('div', { class: 'label-note', testid: 'portfolio-pnl-note' }, 'Open positions: value now minus cost. Fees are not included.')),
      h('div', { class: 'card' }, h('div', { class: 'label' }, 'To claim'), el.claimable),
      h('div', { class: 'card' }, h('div', { class: 'label' }, 'Fees paid'), el.fees,
        h('div', { class: 'label-note' }, 'On every trade of this wallet, bets and sells.'))),
    h('section', { class: 'card', 'aria-labelledby': 'positions-title' },
      h('h2', { id: 'positions-title' }, 'Positions'),
      h('div', { class: 'table-wrap' },
        h('table', { class: 'positions' },
          h('thead', {}, h('tr', {},
            h('th', {}, 'Market'), h('th', {}, 'Status'), h('th', { class: 'r' }, 'Shares'), h('th', { class: 'r hide-sm' }, 'Avg cost'),
            h('th', { class: 'r' }, 'Value'), h('th', { class: 'r', title: 'Value now minus cost, fees not included' }, 'P&L before fees'), h('th', { class: 'r' }, h('span', { class: 'sr-only' }, 'Actions')))),
          el.rows)),
      el.empty));
  loadFees();
  // The socket's snapshot normally arrives at once; read the REST routes if it does not.
  state.snapshot = false;
  setTimeout(() => {
    if (!state.snapshot && getAuth(providerId)) loadRest();
  }, 2000);
}

async function loadRest() {
  try {
    const [profile, positions] = await withAuth(providerId, async (auth) => {
      const profileReq = call('profile', { token: auth.access_token });
      const all = [];
      for (let page = 1; page <= 10; page++) {
        const r = await call('holdings', { token: auth.access_token, body: { pagination: { page, per_page: 100 }, sort: { field: 'updated_at', direction: 'desc' } } });
        all.push(...r.data);
        if (page >= r.pagination.total_pages) break;
      }
      return [await profileReq, all];
    });
    if (state.snapshot) return;
    state.balances = profile.balances || [];
    setPositions(positions);
  } catch (e) {
    notify(errorText(e), 'error');
  }
}

function onUser(msg) {
  if (!el.rows) return;
  switch (msg.type) {
    case 'snapshot':
      state.snapshot = true;
      state.balances = msg.balances || [];
      setPositions(msg.positions || []);
      break;
    case 'balance.updated': {
      const b = state.balances.find((x) => x.token_id === msg.data.token_id);
      if (b) b.balance = msg.data.balance;
      else loadBalances();
      renderSummary();
      break;
    }
    case 'position.updated':
      upsert(msg.data.position);
      loadFeesSoon();
      break;
    case 'error':
      if (msg.code === 'session_ended' || msg.code === 'unauthenticated') liveState.dataset.state = 'reconnecting';
      break;
    default:
      break;
  }
}

/** Sums the fees of every trade this wallet made (public trade records), per market. */
async function loadFees() {
  const address = getAuth(providerId)?.wallet_address;
  if (!address) return;
  try {
    const fees = new Map();
    for (let page = 1; page <= 20; page++) {
      const r = await call('trade_records', { body: { filters: { wallet_address: address }, pagination: { page, per_page: 100 } } });
      for (const t of r.data) fees.set(t.market_id, (fees.get(t.market_id) || 0n) + BigInt(t.fee));
      if (page >= r.pagination.total_pages) break;
    }
    state.fees = fees;
    for (const id of fees.keys()) ensureMarket(id);
    renderSummary();
  } catch {
    // Shown on the next trade or reload.
  }
}
const loadFeesSoon = debounce(loadFees, 500);

async function loadBalances() {
  try {
    const profile = await withAuth(providerId, (auth) => call('profile', { token: auth.access_token }));
    state.balances = profile.balances || [];
    renderSummary();
  } catch {
    // The next balance event or reload brings it.
  }
}

function onMarket(marketId, msg) {
  const market = state.markets.get(marketId);
  if (msg.type === 'snapshot' && msg.market) {
    state.markets.set(marketId, msg.market);
    revalue(marketId, msg.market.outcomes.map((o) => ({ outcome_id: o.id, price: o.current_price })));
  } else if (msg.type === 'trade.created' || msg.type === 'outcome.created' || msg.type === 'outcome.updated') {
    const prices = msg.data?.prices || [];
    if (market) for (const p of prices) {
      const o = market.outcomes.find((x) => x.id === p.outcome_id);
      if (o) o.current_price = p.price;
    }
    revalue(marketId, prices);
  } else if (msg.type === 'market.resolved' || msg.type === 'market.cancelled') {
    if (market) market.status = msg.type === 'market.resolved' ? 'resolved' : 'cancelled';
    account.socket?.unsubscribeMarket(marketId);
  }
  liveState.dataset.state = 'live';
}

/** Values open positions of a market at new prices: floor(shares x price), as the API does. */
function revalue(marketId, prices) {
  const byOutcome = new Map(prices.map((p) => [p.outcome_id, p.price]));
  for (const p of state.positions.values()) {
    if (p.market_id !== marketId || p.status !== 'active' || !byOutcome.has(p.outcome_id)) continue;
    p.current_price = byOutcome.get(p.outcome_id);
    const value = mulPrice(p.shares, p.current_price);
    p.current_value = value.toString();
    p.unrealized_pnl = (value - BigInt(p.total_invested)).toString();
    renderRow(p);
  }
  renderSummary();
}

function setPositions(list) {
  state.positions = new Map(list.map((p) => [p.id, p]));
  renderAll();
  for (const p of list) ensureMarket(p.market_id);
}

function upsert(p) {
  const had = state.positions.has(p.id);
  state.positions.set(p.id, { ...(state.positions.get(p.id) || {}), ...p });
  ensureMarket(p.market_id);
  if (had) renderRow(state.positions.get(p.id));
  else renderAll();
  renderSummary();
}

async function ensureMarket(marketId) {
  if (state.markets.has(marketId) || state.loading.has(marketId)) return;
  const req = call('market_detail', { path: { market_id: marketId } }).then(
    (m) => {
      state.markets.set(marketId, m);
      for (const p of state.positions.values()) if (p.market_id === marketId) renderRow(p);
      renderSummary();
      if (m.status === 'active' || m.status === 'closed') account.socket?.subscribeMarket(marketId);
    },
    () => {},
  );
  state.loading.set(marketId, req);
}

function order(a, b) {
  const rank = (p) => (p.is_claimable ? 0 : p.status === 'active' ? 1 : 2);
  return rank(a) - rank(b) || (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0);
}

function renderAll() {
  if (!el.rows) return;
  clear(el.rows);
  const list = [...state.positions.values()].sort(order);
  for (const p of list) el.rows.append(h('tr', { testid: 'position-row', dataset: { positionId: p.id } }));
  for (const p of list) renderRow(p);
  el.empty.hidden = list.length > 0;
  renderSummary();
}

function renderRow(p) {
  const row = el.rows && el.rows.querySelector(`tr[data-position-id="${CSS.escape(p.id)}"]`);
  if (!row) return;
  const m = state.markets.get(p.market_id);
  const outcome = m && m.outcomes.find((o) => o.id === p.outcome_id);
  const d = m ? m.token.decimals : null;
  const sym = m ? m.token.symbol : '';
  const units = (wei) => (d === null ? '…' : formatUnits(wei, d));
  const pnl = BigInt(p.unrealized_pnl || '0');
  Object.assign(row.dataset, { marketId: p.market_id, outcomeId: p.outcome_id, status: p.status, claimable: String(!!p.is_claimable) });
  const claim = p.is_claimable
    ? h('button', { type: 'button', class: 'btn btn-small btn-primary', testid: 'claim-button', onclick: (e) => claimPosition(p, e.currentTarget) }, 'Claim')
    : null;
  clear(row).append(
    h('td', { class: 'pos-main' },
      h('a', { class: 'pos-market', href: `/markets/${encodeURIComponent(p.market_id)}` }, m ? m.question : 'Loading…'),
      h('div', { class: 'pos-outcome' }, outcome ? outcome.title : '', p.status === 'active' && p.current_price ? ` · ${formatPercent(p.current_price)}` : '')),
    h('td', { 'data-label': 'Status' }, h('span', { class: `badge badge-pos-${p.status}` }, STATUS_LABEL[p.status] || p.status)),
    h('td', { class: 'r', testid: 'position-shares', 'data-label': 'Shares' }, units(p.shares)),
    h('td', { class: 'r hide-sm', testid: 'position-average-cost', 'data-label': 'Avg cost' }, p.average_cost ? formatPercent(p.average_cost) : '—'),
    h('td', { class: 'r', testid: 'position-value', 'data-label': 'Value' }, d === null ? '…' : `${units(p.current_value)} ${sym}`),
    h('td', { class: `r ${pnl > 0n ? 'up' : pnl < 0n ? 'down' : ''}`, testid: 'position-pnl', 'data-label': 'P&L' }, d === null ? '…' : formatSignedUnits(p.unrealized_pnl || '0', d)),
    h('td', { class: 'r pos-action' }, claim));
}

async function claimPosition(p, button) {
  await busy(button, async () => {
    const key = newIdempotencyKey();
    try {
      const receipt = await withAuth(providerId, (auth) =>
        call('claim', { path: { position_id: p.id }, body: { session_id: auth.session_id }, token: auth.access_token, idempotencyKey: key }));
      const m = state.markets.get(p.market_id);
      upsert({ ...p, status: 'claimed', is_claimable: false, claimed_amount: receipt.claimed_amount, current_value: '0' });
      const b = m && state.balances.find((x) => x.token_id === m.token.id);
      if (b) b.balance = receipt.balance_after;
      if (m) account.setBalance(m.token.id, receipt.balance_after);
      renderSummary();
      notify(m ? `Claimed ${formatUnits(receipt.claimed_amount, m.token.decimals)} ${m.token.symbol}.` : 'Claimed.', 'success');
    } catch (e) {
      notify(errorText(e), 'error');
    }
  });
}

/** Sums per token (a provider may run markets in several tokens). */
function renderSummary() {
  if (!el.balance) return;
  const tokens = new Map();
  const add = (m, key, wei) => {
    const t = tokens.get(m.token.id) || { token: m.token, value: 0n, pnl: 0n, claim: 0n, fees: 0n };
    t[key] += BigInt(wei);
    tokens.set(m.token.id, t);
  };
  for (const p of state.positions.values()) {
    const m = state.markets.get(p.market_id);
    if (!m) continue;
    if (p.status === 'active') {
      add(m, 'value', p.current_value || '0');
      add(m, 'pnl', p.unrealized_pnl || '0');
    }
    if (p.is_claimable) add(m, 'claim', p.current_value || '0');
  }
  for (const [marketId, fee] of state.fees) {
    const m = state.markets.get(marketId);
    if (m) add(m, 'fees', fee);
  }
  clear(el.balance).append(...(state.balances.length
    ? state.balances.map((b, i) => h('div', { dataset: { tokenId: b.token_id, balance: b.balance } }, i ? '' : '', formatUnits(b.balance, b.decimals), ' ', h('span', { class: 'muted' }, b.symbol)))
    : ['0']));
  const list = [...tokens.values()];
  const show = (key, signed) => (list.length
    ? list.map((t) => h('div', { class: signed ? (t[key] > 0n ? 'up' : t[key] < 0n ? 'down' : '') : '' }, (signed ? formatSignedUnits : formatUnits)(t[key], t.token.decimals), ' ', h('span', { class: 'muted' }, t.token.symbol)))
    : ['0']);
  clear(el.value).append(...show('value', false));
  clear(el.pnl).append(...show('pnl', true));
  clear(el.claimable).append(...show('claim', false));
  clear(el.fees).append(...show('fees', false));
}

onAuthChange(({ providerId: changed }) => {
  if (changed !== providerId) return;
  const wasIn = !!el.rows;
  if (!!getAuth(providerId) !== wasIn) {
    el.rows = null;
    state.positions = new Map();
    layout();
  }
});

providerReady.then(() => {
  layout();
  account.reload();
});
