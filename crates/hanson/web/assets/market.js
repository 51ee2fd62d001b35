// Market page: prices, chart, recent trades and the trade ticket, all following the market's
// ticker (its conflated state; the detail and trades are read again when a tick shows more).
import { call, errorText } from './client.js';
import { h, $, clear, statusBadge, formatDate, formatWhen, relativeTime, shortAddress, flash, outcomeColor } from './ui.js';
import { formatPercent, formatUnits, compareDecimal, fromWei, addPercentages } from './money.js';
import { mountAccount } from './account.js';
import { rememberProvider, getAuth, withAuth, onAuthChange } from './session.js';
import { PriceChart, INTERVALS } from './chart.js';
import { mountLeaderboard } from './leaderboard.js';
import { TickerStream } from './ticker.js';
import { mountTicket } from './ticket.js';

const MAX_TRADES = 50;
const marketId = decodeURIComponent(location.pathname.split('/').filter(Boolean)[1] || '');
const root = $('#market-root');
const state = { market: null, trades: [], tradeIds: new Set(), lastTradeAt: 0, snapshots: 0 };
const el = {};
let chart = null;
let ticket = null;
let stream = null;
// The market's provider, once its detail has arrived (null if it never does): a login
// belongs to it, and connect-wallet is on the page before then.
let providerKnown;
const providerReady = new Promise((resolve) => {
  providerKnown = resolve;
});

const account = mountAccount({
  providerId: () => state.market?.provider?.id ?? null,
  providerReady,
  tokenId: () => state.market?.token?.id ?? null,
  onUser: (msg) => {
    if (msg.type === 'position.updated' && msg.data?.position?.market_id === marketId && ticket) {
      const p = msg.data.position;
      ticket.setHolding(p.outcome_id, p.status === 'active' ? p.shares : '0');
    }
  },
});

function sortOutcomes(market) {
  market.outcomes.sort((a, b) => (a.outcome_index ?? 0) - (b.outcome_index ?? 0));
  return market;
}

async function start() {
  if (!marketId) {
    providerKnown(null);
    return notFound();
  }
  const tradesReq = call('trade_records', { body: { filters: { market_id: marketId }, pagination: { page: 1, per_page: 20 } } }).catch(() => null);
  let market;
  try {
    market = await call('market_detail', { path: { market_id: marketId } });
  } catch (e) {
    providerKnown(null);
    if (e.status === 404) return notFound();
    clear(root).append(h('p', { class: 'error-text', role: 'alert' }, errorText(e)));
    return;
  }
  state.market = sortOutcomes(market);
  performance.mark('hanson:market-detail');
  rememberProvider(market.provider.id);
  providerKnown(market.provider.id);
  // The candles are asked for before anything is drawn: they are the slowest answer.
  el.chart = h('div', { class: 'chart', testid: 'price-chart', role: 'img', 'aria-label': 'Price chart' });
  chart = new PriceChart(el.chart, state.market);
  const chartLoad = chart.load().catch((e) => showChartError(e));
  render();
  // uPlot is built while the candles are on their way; their arrival then only sets data.
  chart.draw(false);
  setIntervalButtons(chart.interval.id);
  account.reload();
  stream = new TickerStream(marketId, { onTick, onState: showStreamState });
  const trades = await tradesReq;
  if (trades) mergeTrades(trades.data);
  await chartLoad;
  root.setAttribute('aria-busy', 'false');
  root.dataset.ready = 'true';
  if (state.snapshots) loadTrades();
  ticket.loadHoldings();
  scheduleClose();
}

function showStreamState(s) {
  el.live.dataset.state = s;
  el.live.textContent = s === 'live' ? 'Live' : s === 'closed' ? 'Settled' : 'Reconnecting…';
}

function loadTrades() {
  return call('trade_records', { body: { filters: { market_id: marketId }, pagination: { page: 1, per_page: 20 } } }).then((r) => mergeTrades(r.data), () => {});
}

function notFound() {
  document.title = 'Market not found · Hanson';
  clear(root).append(h('div', { class: 'card empty' }, h('h1', {}, 'Market not found'), h('p', {}, 'It may have been removed, or the link is wrong.'), h('a', { href: '/' }, 'Browse markets')));
  root.setAttribute('aria-busy', 'false');
}

function render() {
  const m = state.market;
  document.title = `${m.question} · Hanson`;
  el.status = h('span', {});
  el.notice = h('p', { class: 'market-notice', testid: 'market-notice', role: 'status', hidden: true });
  el.result = h('div', { class: 'market-result', testid: 'market-result', role: 'status', hidden: true });
  el.live = h('span', { class: 'live-dot', testid: 'live-state', dataset: { state: 'connecting' } }, 'Connecting…');
  el.question = h('h1', { testid: 'market-question' });
  el.volume = h('b', { testid: 'market-volume' });
  el.pool = h('b', { testid: 'market-pool' });
  el.closes = h('b', { testid: 'market-closes' });
  el.closesLabel = h('span', { class: 'muted' }, 'Closes');
  el.outcomes = h('div', { class: 'outcome-list', role: 'list' });
  el.tools = h('div', { class: 'chart-tools', role: 'group', 'aria-label': 'Candle interval' },
    INTERVALS.map((iv) => h('button', {
      type: 'button', class: 'btn btn-small btn-ghost', testid: `chart-interval-${iv.id}`, title: iv.title, 'aria-label': iv.title, 'aria-pressed': 'false', dataset: { interval: iv.id },
      onclick: () => {
        setIntervalButtons(iv.id);
        chart.load(iv.id).catch((e) => showChartError(e));
      },
    }, iv.label)));
  el.chartError = h('p', { class: 'error-text', role: 'alert', hidden: true });
  el.trades = h('tbody', {});
  el.noTrades = h('p', { class: 'muted', testid: 'no-trades' }, 'No trades yet. Be the first.');
  el.description = h('p', { testid: 'market-description' });
  el.rules = h('dl', { class: 'stats' });
  const ticketRoot = h('div', {});
  // One grid: on a phone the ticket comes right after the outcomes, on a desktop it stays
  // beside everything.
  const grid = h('div', { class: 'market-layout' },
    h('section', { class: 'card market-head area-head' },
      h('div', { class: 'meta' }, el.status, m.category ? h('span', { class: 'chip', testid: 'market-category' }, m.category) : null, h('span', {}, m.provider.name), el.live),
      el.question,
      el.notice,
      el.result,
      h('div', { class: 'stats' },
        h('div', {}, h('span', { class: 'muted' }, 'Volume'), el.volume),
        h('div', {}, h('span', { class: 'muted' }, 'Pool'), el.pool),
        h('div', {}, el.closesLabel, el.closes))),
    h('section', { class: 'card area-outcomes', 'aria-labelledby': 'outcomes-title' }, h('h2', { id: 'outcomes-title' }, 'Outcomes'), el.outcomes),
    h('aside', { class: 'market-side area-side', 'aria-label': 'Trade ticket' }, ticketRoot),
    h('section', { class: 'card area-chart', 'aria-labelledby': 'chart-title' },
      h('div', { class: 'card-title' }, h('h2', { id: 'chart-title' }, 'Price'), el.tools),
      el.chart, el.chartError),
    h('section', { class: 'card area-trades', 'aria-labelledby': 'trades-title' },
      h('div', { class: 'card-title' }, h('h2', { id: 'trades-title' }, 'Recent trades'), tradesTabs(m)),
      el.tradesPanel = h('div', { id: 'trades-panel', role: 'tabpanel', 'aria-labelledby': 'tab-trades' },
        h('div', { class: 'table-wrap' },
          h('table', { class: 'trades' },
            h('thead', {}, h('tr', {},
              h('th', {}, 'Time'), h('th', {}, 'Trade'),
              h('th', { class: 'r' }, `Amount (${m.token.symbol})`), h('th', { class: 'r hide-sm' }, 'Shares'), h('th', { class: 'r' }, 'Price'), h('th', { class: 'hide-sm' }, 'Trader'))),
            el.trades)),
        el.noTrades),
      el.boardPanel = h('div', { id: 'leaderboard-panel', role: 'tabpanel', 'aria-labelledby': 'tab-leaderboard', testid: 'market-leaderboard', hidden: true })),
    h('section', { class: 'card area-about', 'aria-labelledby': 'about-title' }, h('h2', { id: 'about-title' }, 'About'), el.description, el.rules));
  clear(root).append(grid);
  ticket = mountTicket(ticketRoot, { market: () => state.market, account, onTraded });
  renderMarket();
}

function setIntervalButtons(id) {
  for (const b of el.tools.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.interval === id));
}

function showChartError(e) {
  el.chartError.textContent = `The chart could not load: ${errorText(e)}`;
  el.chartError.hidden = false;
}

/** Everything shown from the market detail. */
function renderMarket() {
  const m = state.market;
  const d = m.token.decimals;
  clear(el.status).append(statusBadge(m.status));
  el.question.textContent = m.question;
  el.volume.textContent = `${formatUnits(m.total_volume, d, 2)} ${m.token.symbol}`;
  el.pool.textContent = `${formatUnits(m.total_pool, d, 2)} ${m.token.symbol}`;
  const [label, at] = m.status === 'resolved' && m.resolved_at ? ['Resolved', m.resolved_at]
    : m.status === 'cancelled' && m.cancelled_at ? ['Cancelled', m.cancelled_at]
      : [new Date(m.closes_at).getTime() > Date.now() ? 'Closes' : 'Closed', m.closes_at];
  el.closesLabel.textContent = label;
  el.closes.textContent = formatDate(at);
  el.closes.title = relativeTime(at);
  // A pause and a resolution still inside its dispute window, in words, with their times.
  const notice = m.trading_paused && m.status !== 'resolved' && m.status !== 'cancelled'
    ? ['paused', `Trading is paused since ${formatDate(m.paused_at)}: ${m.paused_reason || 'no reason given'}.`]
    : m.status === 'resolved' && m.resolution_pending && m.final_at
      ? ['pending', `Resolution pending: final at ${formatDate(m.final_at)} (${relativeTime(m.final_at)}). Claims open then.`]
      : null;
  el.notice.hidden = !notice;
  el.notice.dataset.state = notice ? notice[0] : '';
  el.notice.textContent = notice ? notice[1] : '';
  el.description.textContent = m.description || 'No description.';
  clear(el.rules);
  const rule = (label, value, testid) => value && h('div', {}, h('span', { class: 'muted' }, label), h('b', { testid }, value));
  el.rules.append(...[
    rule('Resolution source', m.resolution_source),
    rule('Minimum bet', `${fromWei(m.minimum_bet ?? m.min_bet_amount ?? '0', d)} ${m.token.symbol}`),
    rule('Fees', `${addPercentages(m.creator_fee_percentage, m.platform_fee_percentage)}% (creator ${addPercentages(m.creator_fee_percentage)}%, platform ${addPercentages(m.platform_fee_percentage)}%)`, 'market-fees'),
    rule('Opened', formatDate(m.starts_at || m.created_at)),
    rule('Token', `${m.token.name} (${m.token.symbol})`),
  ].filter(Boolean));
  renderOutcomes();
  renderResult();
  if (ticket) ticket.update();
}

/** A settled market's result: the winner and what a share pays (one token per winning share,
 *  nothing for the others), or the refund; and, logged in, the wallet's own payout. */
function renderResult() {
  const m = state.market;
  const settled = m.status === 'resolved' || m.status === 'cancelled';
  el.result.hidden = !settled;
  if (!settled) return clear(el.result);
  const sym = m.token.symbol;
  const winner = m.outcomes.find((o) => o.id === m.winning_outcome_id);
  const line = m.status === 'resolved'
    ? [h('b', {}, `${winner ? winner.title : 'The winning outcome'} won.`), ` Each ${winner ? winner.title : 'winning'} share pays 1 ${sym}; the other outcomes' shares pay nothing.`]
    : [h('b', {}, 'Cancelled.'), ' Every position was refunded its cost (fees are not refunded).'];
  const own = h('span', { testid: 'market-payout' });
  clear(el.result).append(h('p', {}, ...line), own);
  loadPayout(own);
}

// A login or logout changes the wallet's own line.
onAuthChange(({ providerId }) => {
  if (state.market && el.result && providerId === state.market.provider.id) renderResult();
});

let payoutRequest = 0;
/** The logged-in wallet's payout in this settled market, from its positions. */
async function loadPayout(node) {
  const m = state.market;
  const pid = m.provider.id;
  const request = ++payoutRequest;
  if (!getAuth(pid)) return;
  try {
    const page = await withAuth(pid, (auth) =>
      call('holdings', { token: auth.access_token, body: { filters: { market_id: m.id }, pagination: { page: 1, per_page: 100 } } }));
    if (request !== payoutRequest || !page.data.length) return;
    let owed = 0n;
    let paid = 0n;
    for (const p of page.data) {
      if (p.status === 'won') owed += BigInt(p.current_value);
      if (p.status === 'claimed' || p.status === 'refunded') paid += BigInt(p.claimed_amount ?? '0');
    }
    const d = m.token.decimals;
    const sym = m.token.symbol;
    node.textContent = owed > 0n
      ? `Your payout: ${formatUnits(owed, d)} ${sym}, to claim in your portfolio.`
      : paid > 0n ? `You received ${formatUnits(paid, d)} ${sym}.` : `Your payout: 0 ${sym}.`;
  } catch {
    // The result stands without the wallet's own line.
  }
}

function renderOutcomes() {
  const m = state.market;
  const existing = new Map([...el.outcomes.children].map((row) => [row.dataset.outcomeId, row]));
  const ids = m.outcomes.map((o) => o.id).join(',');
  if ([...existing.keys()].join(',') !== ids) {
    clear(el.outcomes);
    m.outcomes.forEach((o, i) => {
      const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
      swatch.style.background = outcomeColor(i);
      el.outcomes.append(h('div', { class: 'outcome-row', role: 'listitem', testid: 'outcome-row', dataset: { outcomeId: o.id } },
        swatch,
        h('div', {}, h('div', { class: 'o-title' }), h('div', { class: 'o-sub' })),
        h('span', { class: 'outcome-price', testid: 'outcome-price', dataset: { outcomeId: o.id } }),
        h('button', { type: 'button', class: 'btn btn-small btn-outline-buy', testid: 'outcome-trade', 'aria-label': `Trade ${o.title}`, onclick: () => ticket.selectOutcome(o.id, 'buy') }, 'Trade')));
    });
  }
  for (const o of m.outcomes) {
    const row = el.outcomes.querySelector(`[data-outcome-id="${CSS.escape(o.id)}"]`);
    row.querySelector('.o-title').textContent = o.title;
    row.querySelector('.o-sub').textContent = `${formatUnits(o.total_volume ?? '0', m.token.decimals, 2)} ${m.token.symbol} vol.`;
    const won = m.status === 'resolved' && m.winning_outcome_id === o.id;
    row.classList.toggle('winner', won);
    row.querySelector('[data-testid="outcome-trade"]').hidden = m.status !== 'active';
    const price = row.querySelector('.outcome-price');
    setPriceEl(price, o.current_price);
    // Settled, a share is worth its payout, not its last price.
    price.classList.toggle('settled', m.status === 'resolved' || m.status === 'cancelled');
    if (m.status === 'resolved') {
      price.textContent = won ? `Won · 1 ${m.token.symbol}` : 'Lost · 0';
      price.title = won ? `Each share pays 1 ${m.token.symbol}` : 'These shares pay nothing';
    } else if (m.status === 'cancelled') {
      price.textContent = 'Refunded';
      price.title = 'Positions were refunded their cost';
    }
  }
}

function setPriceEl(node, price) {
  const before = node.dataset.price;
  if (before === price) return;
  node.dataset.price = price;
  node.textContent = formatPercent(price);
  node.title = formatPercent(price, 4);
  if (before) flash(node, compareDecimal(price, before));
}

/** Applies [{outcome_id, price}] to the state and the page. */
function applyPrices(prices) {
  for (const p of prices) {
    const o = state.market.outcomes.find((x) => x.id === p.outcome_id);
    if (o) o.current_price = p.price;
  }
  renderOutcomes();
  ticket.update();
  ticket.refreshPreview();
}

function tradeRow(t, fresh) {
  const m = state.market;
  const o = m.outcomes.find((x) => x.id === t.outcome_id);
  const d = m.token.decimals;
  return h('tr', { testid: 'trade-row', class: fresh ? 'new-row' : '', dataset: { tradeId: t.id, outcomeId: t.outcome_id, type: t.transaction_type } },
    h('td', { class: 'muted' }, h('time', { datetime: t.created_at }, formatWhen(t.created_at))),
    h('td', {}, h('span', { class: `trade-side ${t.transaction_type}` }, t.transaction_type === 'buy' ? 'Buy' : 'Sell'), ' ', o ? o.title : '—'),
    h('td', { class: 'r' }, formatUnits(t.amount, d, 2)),
    h('td', { class: 'r hide-sm' }, formatUnits(t.shares, d, 2)),
    h('td', { class: 'r' }, formatPercent(t.price)),
    h('td', { class: 'addr hide-sm', title: t.wallet_address }, shortAddress(t.wallet_address)));
}

/** Merges fetched trades with those the stream already added (newest first, each once). */
function mergeTrades(list) {
  const byId = new Map(state.trades.map((t) => [t.id, t]));
  for (const t of list) byId.set(t.id, t);
  state.trades = [...byId.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)).slice(0, MAX_TRADES);
  state.tradeIds = new Set(state.trades.map((t) => t.id));
  clear(el.trades).append(...state.trades.map((t) => tradeRow(t, false)));
  el.noTrades.hidden = state.trades.length > 0;
}

function addTrade(t) {
  if (state.tradeIds.has(t.id)) return;
  state.tradeIds.add(t.id);
  state.trades.unshift(t);
  el.trades.prepend(tradeRow(t, true));
  while (state.trades.length > MAX_TRADES) {
    state.tradeIds.delete(state.trades.pop().id);
    el.trades.lastElementChild.remove();
  }
  el.noTrades.hidden = true;
}

// Own trade: the response already says where the traded outcome's price went; the stream
// brings every outcome's price a moment later.
function onTraded(side, receipt) {
  const at = new Date(receipt.created_at).getTime();
  if (at >= state.lastTradeAt) {
    state.lastTradeAt = at;
    applyPrices([{ outcome_id: receipt.outcome_id, price: receipt.new_outcome_price }]);
  }
  account.setBalance(state.market.token.id, receipt.balance_after);
}

// The market follows its ticker (at most a few updates a second, whatever the trading): each
// tick's prices, totals and listed trades are applied; when it shows more than it lists
// (trades left out, an edit, a pause, a settlement, an added outcome, or what happened while
// disconnected) the detail and the recent trades are read again.
let lastSeq = null;
let refreshing = null;

function refreshMarket() {
  if (refreshing) return refreshing;
  refreshing = call('market_detail', { path: { market_id: marketId } }).then((fresh) => {
    state.market = sortOutcomes(fresh);
    renderMarket();
    chart.setMarket(state.market);
    scheduleClose();
    ticket.update();
    ticket.refreshPreview();
  }, () => {}).finally(() => {
    refreshing = null;
  });
  if (root.dataset.ready) loadTrades();
  return refreshing;
}

function onTick(t) {
  const m = state.market;
  const known = new Set(m.outcomes.map((o) => o.id));
  const reshaped = t.prices.length !== m.outcomes.length || t.prices.some((p) => !known.has(p.outcome_id));
  const restated = t.status !== m.status || t.trading_paused !== !!m.trading_paused;
  const missed = lastSeq === null ? false : t.seq - lastSeq > t.trades.length || t.trades_omitted > 0;
  const rejoined = lastSeq === null || t.seq < lastSeq;
  lastSeq = t.seq;
  for (const tr of t.trades) {
    const at = new Date(tr.created_at).getTime();
    if (at >= state.lastTradeAt) state.lastTradeAt = at;
    const o = m.outcomes.find((x) => x.id === tr.outcome_id);
    if (o && !state.tradeIds.has(tr.id)) o.total_volume = (BigInt(o.total_volume || '0') + BigInt(tr.amount)).toString();
    addTrade(tr);
  }
  m.total_volume = t.total_volume;
  m.total_pool = t.total_pool;
  el.volume.textContent = `${formatUnits(m.total_volume, m.token.decimals, 2)} ${m.token.symbol}`;
  el.pool.textContent = `${formatUnits(m.total_pool, m.token.decimals, 2)} ${m.token.symbol}`;
  if (!reshaped) {
    applyPrices(t.prices);
    const last = t.trades.length ? t.trades[t.trades.length - 1].created_at : new Date().toISOString();
    chart.addPrices(last, t.prices);
  }
  if (reshaped || restated || missed) refreshMarket();
  else if (rejoined && root.dataset.ready) loadTrades();
  if (rejoined) state.snapshots += 1;
}

// Trading stops at closes_at; the server announces market.closed a few seconds later.
let closeTimer = null;
function scheduleClose() {
  clearTimeout(closeTimer);
  const ms = new Date(state.market.closes_at).getTime() - Date.now();
  if (state.market.status === 'active' && ms > 0 && ms < 2 ** 31 - 1) {
    closeTimer = setTimeout(() => ticket.update(), ms + 50);
  }
}

start();

/** The trades card's tabs: the recent trades, or the market's leaderboard (loaded when first shown). */
function tradesTabs(m) {
  let board = null;
  const tab = (id, label, panel) => h('button', { type: 'button', role: 'tab', id, testid: id, class: 'btn btn-small', 'aria-selected': String(id === 'tab-trades'), 'aria-controls': panel, onclick: () => {
    const showBoard = id === 'tab-leaderboard';
    el.tradesPanel.hidden = showBoard;
    el.boardPanel.hidden = !showBoard;
    tabs.querySelectorAll('[role=tab]').forEach((t) => t.setAttribute('aria-selected', String(t.id === id)));
    if (showBoard) {
      if (board) board.reload();
      else board = mountLeaderboard(el.boardPanel, { marketId: m.id }, m.token);
    }
  } }, label);
  const tabs = h('div', { class: 'row-actions', role: 'tablist', 'aria-label': 'Trades or leaderboard' },
    tab('tab-trades', 'Trades', 'trades-panel'), tab('tab-leaderboard', 'Leaderboard', 'leaderboard-panel'));
  return tabs;
}
