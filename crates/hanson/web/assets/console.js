// Provider console: the provider's API key (this tab's sessionStorage only), its markets
// (create, update, add outcomes, pause, resolve, cancel: `settle.js`), its treasury, and its
// webhooks.
import { call, errorText, newIdempotencyKey, urlFor } from './client.js';
import { h, $, clear, notify, busy, submitting, statusBadge, formatDate, field } from './ui.js';
import { toWei, fromWei, formatUnits, formatPercent } from './money.js';
import { mountWebhooks } from './webhooks.js';
import { pauseCard, pendingNote, resolveForm, cancelForm } from './settle.js';

const KEY_STORE = 'hanson.console.apiKey';
const root = $('#console-root');
const state = { key: null, providerId: null, tokens: [], markets: [], page: 1, totalPages: 0, selected: null, treasury: [] };
const el = {};
let uid = 0;
const id = (name) => `${name}-${++uid}`;

function input(attrs) {
  return h('input', { id: attrs.id || id(attrs.name || 'f'), ...attrs });
}

function errorLine(testid) {
  return h('p', { class: 'error-text', testid, role: 'alert', hidden: true });
}

/** Shows `err` in `node` (amounts in `token`'s units when given), or hides it. */
function showError(node, err, token) {
  node.textContent = err ? errorText(err, token) : '';
  node.hidden = !err;
}

function localInput(date) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function isoFromLocal(value, label) {
  const d = new Date(value);
  if (!value || Number.isNaN(d.getTime())) throw new Error(`${label}: enter a date and time.`);
  return d.toISOString();
}

function tokenById(tokenId) {
  return state.tokens.find((t) => t.id === tokenId);
}

// ---- API key ----------------------------------------------------------------------------

function keyCard() {
  el.keyInput = input({ id: 'console-api-key', type: 'password', testid: 'console-api-key', autocomplete: 'off', spellcheck: 'false', placeholder: 'hk_…' });
  el.keyError = errorLine('console-key-error');
  el.provider = h('p', { class: 'muted', testid: 'console-provider' });
  const form = h('form', {
    class: 'card', 'aria-labelledby': 'key-title',
    onsubmit: (e) => {
      e.preventDefault();
      useKey(el.keyInput.value.trim(), e.submitter || form.querySelector('button[type=submit]'));
    },
  },
  h('h2', { id: 'key-title' }, 'API key'),
  h('p', { class: 'muted' }, 'Your provider API key stays in this browser tab only (session storage) and is sent only to this server.'),
  field('Provider API key', el.keyInput),
  h('div', { class: 'row-actions' },
    h('button', { type: 'submit', class: 'btn btn-primary', testid: 'console-connect' }, 'Use key'),
    h('button', {
      type: 'button', class: 'btn btn-ghost', testid: 'console-forget',
      onclick: () => {
        sessionStorage.removeItem(KEY_STORE);
        el.keyInput.value = '';
        state.key = null;
        renderWork();
      },
    }, 'Forget key')),
  el.keyError, el.provider);
  return form;
}

async function useKey(key, button) {
  showError(el.keyError, null);
  if (!key) {
    showError(el.keyError, new Error('Enter your API key.'));
    return;
  }
  const run = async () => {
    try {
      const treasury = await call('treasury', { apiKey: key });
      state.key = key;
      state.providerId = treasury.provider_id;
      state.treasury = treasury.balances || [];
      sessionStorage.setItem(KEY_STORE, key);
      el.provider.textContent = `Provider ${treasury.provider_id}`;
      renderWork();
    } catch (e) {
      state.key = null;
      showError(el.keyError, e);
      renderWork();
    }
  };
  if (button) await busy(button, run);
  else await run();
}

// ---- Work area --------------------------------------------------------------------------

function renderWork() {
  clear(el.work);
  if (!state.key) return;
  el.marketsList = h('ul', { class: 'list', testid: 'console-markets' });
  el.moreMarkets = h('button', { type: 'button', class: 'btn btn-small', hidden: true, onclick: () => loadMarkets(true) }, 'Load more');
  el.statusFilter = h('select', { id: 'console-status', testid: 'console-status-filter', onchange: () => loadMarkets() },
    h('option', { value: '' }, 'All'), ...['active', 'closed', 'resolved', 'cancelled'].map((s) => h('option', { value: s }, s[0].toUpperCase() + s.slice(1))));
  el.manage = h('section', { class: 'card wide', testid: 'console-manage', 'aria-labelledby': 'manage-title', hidden: true });
  el.treasury = h('div', { testid: 'treasury-balances' });
  el.webhooks = h('section', { class: 'card wide', 'aria-labelledby': 'webhooks-title' });
  el.work.append(
    h('section', { class: 'card', 'aria-labelledby': 'markets-title' },
      h('div', { class: 'card-title' }, h('h2', { id: 'markets-title' }, 'Your markets'),
        h('div', { class: 'row-actions' },
          h('label', { for: 'console-status', class: 'sr-only' }, 'Status'), el.statusFilter,
          h('button', { type: 'button', class: 'btn btn-small', testid: 'console-refresh', onclick: () => loadMarkets() }, 'Refresh'))),
      el.marketsList, el.moreMarkets),
    createCard(),
    el.manage,
    treasuryCard(),
    exportsCard(),
    el.webhooks);
  mountWebhooks(el.webhooks, { apiKey: () => state.key });
  loadMarkets();
  renderTreasury();
}

async function loadMarkets(more = false) {
  const page = more ? state.page + 1 : 1;
  try {
    const filters = { provider_id: state.providerId };
    if (el.statusFilter.value) filters.status = el.statusFilter.value;
    const r = await call('search_markets', { body: { filters, pagination: { page, per_page: 25 }, sort: { field: 'created_at', direction: 'desc' } } });
    state.page = page;
    state.totalPages = r.pagination.total_pages;
    state.markets = more ? [...state.markets, ...r.data] : r.data;
    renderMarketList();
  } catch (e) {
    notify(errorText(e), 'error');
  }
}

function renderMarketList() {
  clear(el.marketsList);
  if (!state.markets.length) el.marketsList.append(h('li', { class: 'muted' }, 'No markets yet. Create one below.'));
  for (const m of state.markets) {
    el.marketsList.append(h('li', { testid: 'console-market', dataset: { marketId: m.id, status: m.status }, 'aria-current': String(state.selected?.id === m.id) },
      h('button', { type: 'button', class: 'selectable', onclick: () => selectMarket(m.id) },
        h('div', {}, m.question),
        h('div', { class: 'card-meta' }, statusBadge(m.status, 'console-market-status'), m.category ? h('span', { class: 'chip' }, m.category) : null, `closes ${formatDate(m.closes_at)}`)),
      h('a', { href: `/markets/${encodeURIComponent(m.id)}`, class: 'btn btn-small btn-ghost' }, 'View')));
  }
  el.moreMarkets.hidden = state.page >= state.totalPages;
}

// ---- Create -----------------------------------------------------------------------------

function outcomeInputs(initial) {
  const box = h('div', { class: 'outcome-inputs', testid: 'create-outcomes' });
  const add = (title = '') => {
    const inp = input({ name: 'outcome', value: title, testid: 'create-outcome-title', placeholder: `Outcome ${box.children.length + 1}`, maxlength: 200, 'aria-label': 'Outcome title' });
    const pair = h('div', { class: 'pair' }, inp,
      h('button', { type: 'button', class: 'btn btn-small btn-ghost', 'aria-label': 'Remove outcome', onclick: () => { if (box.children.length > 2) pair.remove(); } }, '✕'));
    box.append(pair);
    return inp;
  };
  initial.forEach((t) => add(t));
  return { box, add, titles: () => [...box.querySelectorAll('input')].map((i) => i.value.trim()) };
}

function createCard() {
  const f = {
    question: input({ id: 'create-question', testid: 'create-question', required: true, maxlength: 500 }),
    description: h('textarea', { id: 'create-description', testid: 'create-description', maxlength: 4000 }),
    category: input({ id: 'create-category', testid: 'create-category', maxlength: 100 }),
    source: input({ id: 'create-source', testid: 'create-resolution-source', maxlength: 1000 }),
    token: h('select', { id: 'create-token', testid: 'create-token', required: true }),
    liquidity: input({ id: 'create-liquidity', testid: 'create-liquidity', inputmode: 'decimal', required: true, value: '1000' }),
    minBet: input({ id: 'create-min-bet', testid: 'create-min-bet', inputmode: 'decimal' }),
    maxBet: input({ id: 'create-max-bet', testid: 'create-max-bet', inputmode: 'decimal' }),
    startsAt: input({ id: 'create-starts-at', testid: 'create-starts-at', type: 'datetime-local' }),
    endsAt: input({ id: 'create-ends-at', testid: 'create-ends-at', type: 'datetime-local', required: true, value: localInput(new Date(Date.now() + 7 * 864e5)) }),
    creator: input({ id: 'create-creator', testid: 'create-creator-wallet', required: true, placeholder: '0x… address or wallet id', value: sessionStorage.getItem('hanson.console.creator') || '' }),
    creatorFee: input({ id: 'create-creator-fee', testid: 'create-creator-fee', inputmode: 'decimal', value: '0' }),
    platformFee: input({ id: 'create-platform-fee', testid: 'create-platform-fee', inputmode: 'decimal', value: '0' }),
  };
  const outcomes = outcomeInputs(['Yes', 'No']);
  const error = errorLine('create-market-error');
  for (const t of state.tokens) f.token.append(h('option', { value: t.id }, `${t.symbol} · ${t.name}`));
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'create-market-submit' }, 'Create market');
  const form = h('form', {
    class: 'card', testid: 'create-market-form', 'aria-labelledby': 'create-title', novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      showError(error, null);
      await busy(submit, async () => {
        try {
          const body = await createBody(f, outcomes.titles());
          const r = await call('create_market', { body, apiKey: state.key, idempotencyKey: newIdempotencyKey() });
          sessionStorage.setItem('hanson.console.creator', f.creator.value.trim());
          notify(`Market created: ${r.market.question}`, 'success');
          f.question.value = '';
          f.description.value = '';
          await loadMarkets();
          await selectMarket(r.market.id);
          el.manage.scrollIntoView({ block: 'start' });
        } catch (err) {
          showError(error, err, tokenById(f.token.value));
        }
      });
    },
  },
  h('h2', { id: 'create-title' }, 'Create a market'),
  field('Question', f.question),
  field('Description', f.description, 'how it resolves'),
  h('div', { class: 'form-grid' },
    field('Category', f.category),
    field('Resolution source', f.source),
    field('Token', f.token),
    field('Liquidity', f.liquidity, 'token units, from the treasury'),
    field('Minimum bet', f.minBet, 'optional'),
    field('Maximum bet', f.maxBet, 'optional'),
    field('Trading starts', f.startsAt, 'optional, default now'),
    field('Trading ends', f.endsAt),
    field('Creator fee %', f.creatorFee),
    field('Platform fee %', f.platformFee),
    field('Creator wallet', f.creator, 'earns the creator fee', 'field span2')),
  h('fieldset', {}, h('legend', {}, 'Outcomes'), outcomes.box,
    h('button', { type: 'button', class: 'btn btn-small', testid: 'create-add-outcome', onclick: () => outcomes.add().focus() }, 'Add outcome')),
  error,
  submit);
  return form;
}

function feeNumber(text, label) {
  const s = String(text || '0').trim();
  if (!/^[0-9]+(\.[0-9]{1,4})?$/.test(s)) throw new Error(`${label}: a percentage with at most 4 decimals, like 1.5.`);
  return Number(s); // a percentage with at most 4 decimals is exact as a JSON number
}

async function creatorWalletId(text) {
  const v = text.trim();
  if (!v) throw new Error('Creator wallet: enter a wallet address or id.');
  if (!/^0x[0-9a-fA-F]{40}$|^0x[0-9a-fA-F]{16}$/.test(v)) return v;
  try {
    const w = await call('wallet', { path: { wallet_address: v }, apiKey: state.key });
    return w.wallet_id;
  } catch (e) {
    if (e.status === 404) throw new Error('Creator wallet: no wallet with this address in your tenant yet (a deposit creates it).');
    throw e;
  }
}

async function createBody(f, titles) {
  const token = tokenById(f.token.value);
  if (!token) throw new Error('Token: choose one.');
  const amount = (input, label, required) => {
    const v = input.value.trim();
    if (!v && !required) return undefined;
    try {
      return toWei(v, token.decimals);
    } catch (e) {
      throw new Error(`${label}: ${e.message}`);
    }
  };
  if (titles.some((t) => !t)) throw new Error('Outcomes: every outcome needs a title.');
  const metadata = {};
  if (f.category.value.trim()) metadata.category = f.category.value.trim();
  if (f.source.value.trim()) metadata.resolution_source = f.source.value.trim();
  const body = {
    question: f.question.value.trim(),
    description: f.description.value.trim(),
    pricing_method: 'lmsr',
    token_id: token.id,
    liquidity: amount(f.liquidity, 'Liquidity', true),
    min_bet_amount: amount(f.minBet, 'Minimum bet', false),
    max_bet_amount: amount(f.maxBet, 'Maximum bet', false),
    starts_at: f.startsAt.value ? isoFromLocal(f.startsAt.value, 'Trading starts') : undefined,
    ends_at: isoFromLocal(f.endsAt.value, 'Trading ends'),
    creator_fee_percentage: feeNumber(f.creatorFee.value, 'Creator fee'),
    platform_fee_percentage: feeNumber(f.platformFee.value, 'Platform fee'),
    metadata,
    outcomes: titles.map((title, i) => ({ title, outcome_index: i })),
  };
  body.creator_wallet_id = await creatorWalletId(f.creator.value);
  return body;
}

// ---- Manage one market ------------------------------------------------------------------

async function selectMarket(marketId) {
  try {
    const m = await call('market_detail', { path: { market_id: marketId } });
    m.outcomes.sort((a, b) => a.outcome_index - b.outcome_index);
    state.selected = m;
    renderManage();
    renderMarketList();
  } catch (e) {
    notify(errorText(e), 'error');
  }
}

async function refreshSelected() {
  if (!state.selected) return;
  await selectMarket(state.selected.id);
  const i = state.markets.findIndex((x) => x.id === state.selected.id);
  if (i >= 0) {
    state.markets[i] = { ...state.markets[i], status: state.selected.status, question: state.selected.question, category: state.selected.category, closes_at: state.selected.closes_at };
    renderMarketList();
  }
}

function renderManage() {
  const m = state.selected;
  const d = m.token.decimals;
  // A resolution inside its dispute window may still be replaced or cancelled.
  const pending = m.resolution_pending === true;
  const settled = (m.status === 'resolved' || m.status === 'cancelled') && !pending;
  const ops = { key: state.key, notify, refresh: async () => { await refreshSelected(); await refreshTreasury(); } };
  clear(el.manage).hidden = false;
  el.manage.dataset.marketId = m.id;
  // The parts left out are dropped: Element.append would write them as "null".
  el.manage.append(...[
    h('div', { class: 'card-title' },
      h('h2', { id: 'manage-title' }, 'Manage market'),
      h('div', { class: 'row-actions' }, statusBadge(m.status, 'console-selected-status'), h('a', { class: 'btn btn-small btn-ghost', href: `/markets/${encodeURIComponent(m.id)}` }, 'Open market page'))),
    h('p', {}, h('b', { testid: 'console-selected-question' }, m.question)),
    h('p', { class: 'muted' }, `Id ${m.id} · pool ${formatUnits(m.total_pool, d)} ${m.token.symbol} · volume ${formatUnits(m.total_volume, d)} ${m.token.symbol} · ends ${formatDate(m.ends_at)}`),
    settled ? h('p', { class: 'muted' }, `This market is ${m.status}; it can no longer change.`) : null,
    pendingNote(m),
    h('div', { class: 'console-grid' },
      settled || pending ? null : updateForm(m),
      outcomesBox(m, settled || pending),
      settled || pending ? null : pauseCard(m, ops),
      settled ? null : resolveForm(m, ops),
      settled ? null : cancelForm(m, ops),
      embedCard(m)),
  ].filter(Boolean));
}

const escapeAttr = (text) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The iframe any site can paste to show the market's live card (`/embed/markets/{id}`). */
export function embedSnippet(m, theme = 'light') {
  const src = `${location.origin}/embed/markets/${encodeURIComponent(m.id)}${theme === 'dark' ? '?theme=dark' : ''}`;
  return `<iframe src="${escapeAttr(src)}" title="${escapeAttr(m.question)}" width="400" height="320" style="border:0;max-width:100%" loading="lazy"></iframe>`;
}

function embedCard(m) {
  const snippet = h('textarea', { id: 'embed-snippet', testid: 'embed-snippet', readonly: true, rows: 4, spellcheck: 'false' });
  const theme = h('select', { id: 'embed-theme', testid: 'embed-theme', onchange: () => { snippet.value = embedSnippet(m, theme.value); } },
    h('option', { value: 'light' }, 'Light'), h('option', { value: 'dark' }, 'Dark'));
  snippet.value = embedSnippet(m);
  const copy = h('button', {
    type: 'button', class: 'btn btn-small', testid: 'embed-copy',
    onclick: async () => {
      snippet.select();
      try {
        await navigator.clipboard.writeText(snippet.value);
        notify('Embed code copied.', 'success');
      } catch {
        notify('Select the code and copy it.', 'info');
      }
    },
  }, 'Copy');
  return h('div', { class: 'card', 'aria-labelledby': 'embed-title', testid: 'console-embed' },
    h('h3', { id: 'embed-title' }, 'Embed'),
    h('p', { class: 'muted' }, 'Paste this into any web page to show the market\'s live prices, with a link to it.'),
    field('Theme', theme),
    field('Embed code', snippet),
    h('div', { class: 'row-actions' }, copy, h('a', { class: 'btn btn-small btn-ghost', href: `/embed/markets/${encodeURIComponent(m.id)}`, target: '_blank', rel: 'noopener' }, 'Preview')));
}

function updateForm(m) {
  const d = m.token.decimals;
  const f = {
    question: input({ id: 'update-question', testid: 'update-question', value: m.question, maxlength: 500 }),
    description: h('textarea', { id: 'update-description', testid: 'update-description', maxlength: 4000 }, m.description || ''),
    category: input({ id: 'update-category', testid: 'update-category', value: m.category || '' }),
    source: input({ id: 'update-source', testid: 'update-resolution-source', value: m.resolution_source || '' }),
    minBet: input({ id: 'update-min-bet', testid: 'update-min-bet', inputmode: 'decimal', value: fromWei(m.min_bet_amount ?? m.minimum_bet, d) }),
    maxBet: input({ id: 'update-max-bet', testid: 'update-max-bet', inputmode: 'decimal', value: fromWei(m.max_bet_amount, d) }),
    endsAt: input({ id: 'update-ends-at', testid: 'update-ends-at', type: 'datetime-local', value: localInput(new Date(m.ends_at)) }),
    creatorFee: input({ id: 'update-creator-fee', testid: 'update-creator-fee', inputmode: 'decimal', value: String(m.creator_fee_percentage ?? 0) }),
  };
  const error = errorLine('update-market-error');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'update-market-submit' }, 'Save changes');
  return h('form', {
    class: 'card', 'aria-labelledby': 'update-title', novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      showError(error, null);
      await busy(submit, async () => {
        try {
          // Partial update: only what changed is sent.
          const body = {};
          if (f.question.value.trim() !== m.question) body.question = f.question.value.trim();
          if (f.description.value !== (m.description || '')) body.description = f.description.value;
          const cat = f.category.value.trim();
          const src = f.source.value.trim();
          if (cat !== (m.category || '') || src !== (m.resolution_source || '')) {
            const metadata = { ...(m.metadata || {}) };
            if (cat) metadata.category = cat; else delete metadata.category;
            if (src) metadata.resolution_source = src; else delete metadata.resolution_source;
            body.metadata = metadata;
          }
          const min = toWei(f.minBet.value, d);
          if (min !== (m.min_bet_amount ?? m.minimum_bet)) body.min_bet_amount = min;
          const max = toWei(f.maxBet.value, d);
          if (max !== m.max_bet_amount) body.max_bet_amount = max;
          const ends = isoFromLocal(f.endsAt.value, 'Trading ends');
          if (localInput(new Date(ends)) !== localInput(new Date(m.ends_at))) body.ends_at = ends;
          const fee = feeNumber(f.creatorFee.value, 'Creator fee');
          if (fee !== Number(m.creator_fee_percentage ?? 0)) body.creator_fee_percentage = fee;
          if (!Object.keys(body).length) {
            notify('Nothing changed.');
            return;
          }
          await call('update_market', { path: { market_id: m.id }, body, apiKey: state.key });
          notify('Market updated.', 'success');
          await refreshSelected();
        } catch (err) {
          showError(error, err);
        }
      });
    },
  },
  h('h3', { id: 'update-title' }, 'Details'),
  field('Question', f.question),
  field('Description', f.description),
  h('div', { class: 'form-grid' },
    field('Category', f.category), field('Resolution source', f.source),
    field(`Minimum bet (${m.token.symbol})`, f.minBet), field(`Maximum bet (${m.token.symbol})`, f.maxBet),
    field('Trading ends', f.endsAt), field('Creator fee %', f.creatorFee)),
  error, submit);
}

function outcomesBox(m, settled) {
  const list = h('ul', { class: 'list', testid: 'console-outcomes' });
  for (const o of m.outcomes) {
    const title = input({ id: id('outcome-title'), value: o.title, maxlength: 200, 'aria-label': `Title of outcome ${o.outcome_index}`, disabled: settled });
    const err = errorLine('outcome-error');
    list.append(h('li', { testid: 'console-outcome', dataset: { outcomeId: o.id } },
      h('div', { class: 'pair' }, title),
      m.winning_outcome_id === o.id ? h('span', { class: 'badge badge-active', testid: 'console-winner' }, 'Winner') : null,
      h('span', { class: 'num' }, formatPercent(o.current_price)),
      settled ? null : h('button', {
        type: 'button', class: 'btn btn-small',
        onclick: async (e) => {
          showError(err, null);
          await busy(e.currentTarget, async () => {
            try {
              await call('update_outcome', { path: { market_id: m.id, outcome_id: o.id }, body: { title: title.value.trim() }, apiKey: state.key });
              notify('Outcome renamed.', 'success');
              await refreshSelected();
            } catch (x) {
              showError(err, x);
            }
          });
        },
      }, 'Rename'),
      err));
  }
  const newTitle = input({ id: 'add-outcome-title', testid: 'add-outcome-title', maxlength: 200 });
  const newDesc = input({ id: 'add-outcome-description', testid: 'add-outcome-description', maxlength: 4000 });
  const error = errorLine('add-outcome-error');
  const submit = h('button', { type: 'submit', class: 'btn', testid: 'add-outcome-submit' }, 'Add outcome');
  return h('div', { class: 'card', 'aria-labelledby': 'outcomes-title' },
    h('h3', { id: 'outcomes-title' }, 'Outcomes'),
    list,
    settled ? null : h('form', {
      novalidate: true,
      onsubmit: submitting(submit, error, async () => {
        if (!newTitle.value.trim()) throw new Error('Title: enter the new outcome.');
        const index = Math.max(-1, ...m.outcomes.map((o) => o.outcome_index)) + 1;
        await call('create_outcome', { path: { market_id: m.id }, body: { title: newTitle.value.trim(), description: newDesc.value.trim(), outcome_index: index }, apiKey: state.key });
        notify('Outcome added.', 'success');
        await refreshSelected();
      }),
    },
    h('p', { class: 'muted' }, 'After trades have started, the treasury funds the extra liquidity a new outcome needs.'),
    h('div', { class: 'form-grid' }, field('New outcome', newTitle), field('Description', newDesc, 'optional')),
    error, submit));
}

// ---- Treasury ---------------------------------------------------------------------------

function treasuryCard() {
  const token = h('select', { id: 'deposit-token', testid: 'deposit-token' }, state.tokens.map((t) => h('option', { value: t.id }, t.symbol)));
  const amount = input({ id: 'deposit-amount', testid: 'deposit-amount', inputmode: 'decimal' });
  const address = input({ id: 'deposit-address', testid: 'deposit-address', placeholder: 'empty: the treasury; or a wallet 0x…' });
  const error = errorLine('deposit-error');
  const submit = h('button', { type: 'submit', class: 'btn', testid: 'deposit-submit' }, 'Deposit');
  return h('section', { class: 'card', 'aria-labelledby': 'treasury-title' },
    h('h2', { id: 'treasury-title' }, 'Treasury'),
    el.treasury,
    h('form', {
      novalidate: true,
      onsubmit: submitting(submit, error, async () => {
        const t = tokenById(token.value);
        if (!t) throw new Error('Token: choose one.');
        const wei = toWei(amount.value, t.decimals);
        // The reference is the external transfer's id; a fresh one per deposit made here.
        const reference = `console-${newIdempotencyKey()}`;
        const to = address.value.trim();
        const r = to
          ? await call('wallet_deposit', { body: { wallet_address: to, token_id: t.id, amount: wei, reference }, apiKey: state.key })
          : await call('treasury_deposit', { body: { token_id: t.id, amount: wei, reference }, apiKey: state.key });
        notify(`Deposited ${formatUnits(r.amount, t.decimals)} ${t.symbol}${to ? ` to ${to}` : ''}.`, 'success');
        amount.value = '';
        await refreshTreasury();
      }),
    },
    h('h3', {}, 'Deposit'),
    h('p', { class: 'muted' }, 'Records a transfer received outside Hanson: into the treasury, or into a user wallet.'),
    h('div', { class: 'form-grid' }, field('Token', token), field('Amount', amount), field('Wallet address', address, 'optional', 'field span2')),
    error, submit));
}

async function refreshTreasury() {
  try {
    const t = await call('treasury', { apiKey: state.key });
    state.treasury = t.balances || [];
    renderTreasury();
  } catch {
    // Shown again on the next change.
  }
}

function renderTreasury() {
  clear(el.treasury);
  if (!state.treasury.length) {
    el.treasury.append(h('p', { class: 'muted' }, 'The treasury is empty. Deposit before creating a market: its liquidity comes from here.'));
    return;
  }
  el.treasury.append(h('ul', { class: 'list' }, state.treasury.map((b) =>
    h('li', { dataset: { tokenId: b.token_id, balance: b.balance } }, h('span', {}, b.symbol), h('b', { class: 'num' }, formatUnits(b.balance, b.decimals))))));
}

// ---- Exports ----------------------------------------------------------------------------

/** Downloads an export (`export_trades`, `export_ledger`) with the key, as the server names it. */
async function download(operationId, format, button, error) {
  error.textContent = '';
  button.disabled = true;
  try {
    const res = await fetch(urlFor(operationId, { query: { format } }), { headers: { Authorization: `Bearer ${state.key}` } });
    if (!res.ok) {
      const problem = await res.json().catch(() => ({}));
      throw new Error(problem.detail || `The export failed (${res.status}).`);
    }
    const blob = await res.blob();
    const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') || '')?.[1] || `export.${format}`;
    const link = h('a', { href: URL.createObjectURL(blob), download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  } catch (e) {
    error.textContent = e.message || String(e);
  } finally {
    button.disabled = false;
  }
}

function exportsCard() {
  const format = h('select', { id: 'export-format', testid: 'export-format' },
    h('option', { value: 'csv' }, 'CSV'), h('option', { value: 'ndjson' }, 'NDJSON'));
  const error = h('p', { class: 'error', testid: 'export-error', role: 'alert' });
  const button = (testid, label, operationId) => {
    const b = h('button', { type: 'button', class: 'btn btn-small', testid }, label);
    b.addEventListener('click', () => download(operationId, format.value, b, error));
    return b;
  };
  return h('section', { class: 'card', 'aria-labelledby': 'exports-title' },
    h('div', { class: 'card-title' }, h('h2', { id: 'exports-title' }, 'Exports')),
    h('p', { class: 'muted' }, 'Every trade of your markets, or every transfer of your treasury, pools and wallets, in the order they were applied.'),
    field('Format', format),
    h('div', { class: 'row-actions' },
      button('export-trades', 'Download trades', 'export_trades'),
      button('export-ledger', 'Download ledger', 'export_ledger')),
    error);
}

// ---- Start ------------------------------------------------------------------------------

async function start() {
  el.work = h('div', { class: 'console-grid' });
  el.work.classList.add('console-work');
  clear(root).append(keyCard(), el.work);
  try {
    state.tokens = (await call('list_tokens')).data || [];
  } catch (e) {
    notify(errorText(e), 'error');
  }
  const saved = sessionStorage.getItem(KEY_STORE);
  if (saved) {
    el.keyInput.value = saved;
    await useKey(saved);
  }
}

start();
