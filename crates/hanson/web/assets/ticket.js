// The trade ticket: outcome, side, amount in token units (or shares), a slippage tolerance
// and an optional limit price, a live preview from the preview endpoints, and buy / sell
// with an Idempotency-Key per submission. A trade carries bounds from the preview it was
// confirmed on (min_shares / min_proceeds / max_shares, less the tolerance), so it never
// trades beyond the tolerance: if the price moved past it, the server refuses (409
// price_moved), the ticket shows the new quote and the user confirms again.
import { call, errorText, newIdempotencyKey, ApiError } from './client.js';
import { h, clear, debounce } from './ui.js';
import {
  toWei, fromWei, formatUnits, formatPercent, formatSignedPercent, parseTolerance, lessTolerance, plusTolerance, parseLimitPrice,
} from './money.js';
import { getAuth, withAuth } from './session.js';

/**
 * mountTicket(root, {market: () => detail, account, onTraded(kind, receipt)}).
 * Returns {update() (market changed), refreshPreview() (prices moved), selectOutcome(id), loadHoldings()}.
 */
export function mountTicket(root, ctx) {
  // `quote`: the preview on screen, with the request it answers (the bounds come from it).
  const state = { side: 'buy', mode: 'shares', previewId: 0, abort: null, holdings: new Map(), busy: false, quote: null };
  const m = () => ctx.market();
  const token = () => m().token;

  const outcomeSelect = h('select', { id: 'ticket-outcome', testid: 'ticket-outcome', onchange: () => changed() });
  const sideInputs = ['buy', 'sell'].map((side) =>
    h('input', { type: 'radio', name: 'ticket-side', value: side, checked: side === 'buy', testid: `ticket-side-${side}`, onchange: (e) => setSide(e.target.value) }));
  const modeInputs = [['shares', 'Shares'], ['proceeds', 'Target proceeds']].map(([mode]) =>
    h('input', { type: 'radio', name: 'ticket-sell-mode', value: mode, checked: mode === 'shares', testid: `ticket-sell-mode-${mode}`, onchange: (e) => setMode(e.target.value) }));
  const amountInput = h('input', {
    id: 'ticket-amount', testid: 'ticket-amount', type: 'text', inputmode: 'decimal', autocomplete: 'off',
    placeholder: '0', spellcheck: 'false', 'aria-describedby': 'ticket-error',
    oninput: () => changed(),
    onkeydown: (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        submit(state.side);
      }
    },
  });
  const slippageInput = h('input', {
    id: 'ticket-slippage', testid: 'ticket-slippage', type: 'text', inputmode: 'decimal', autocomplete: 'off', value: '1',
    spellcheck: 'false', 'aria-describedby': 'ticket-error', oninput: () => changed(),
  });
  const limitInput = h('input', {
    id: 'ticket-limit', testid: 'ticket-limit', type: 'text', inputmode: 'decimal', autocomplete: 'off', placeholder: 'none',
    spellcheck: 'false', 'aria-describedby': 'ticket-error', oninput: () => changed(),
  });
  const limitLabel = h('label', { for: 'ticket-limit' }, 'Limit price (%, optional)');
  const limitField = h('div', { class: 'field' }, limitLabel,
    h('div', { class: 'input-unit' }, limitInput, h('span', { class: 'unit', 'aria-hidden': 'true' }, '%')));
  const unit = h('span', { class: 'unit', 'aria-hidden': 'true' });
  const amountLabel = h('label', { for: 'ticket-amount' });
  const error = h('p', { id: 'ticket-error', class: 'ticket-error', testid: 'ticket-error', role: 'alert', hidden: true });
  const holding = h('div', { class: 'holding-line', testid: 'ticket-holding', hidden: true });
  const preview = h('div', { class: 'preview', testid: 'ticket-preview', 'aria-live': 'polite', dataset: { state: 'empty' } });
  const warning = h('p', { class: 'ticket-warning', testid: 'ticket-warning', role: 'status', hidden: true });
  const buyButton = h('button', { type: 'button', class: 'btn btn-buy', testid: 'ticket-buy', onclick: () => submit('buy') }, 'Buy');
  const sellButton = h('button', { type: 'button', class: 'btn btn-outline-sell', testid: 'ticket-sell', onclick: () => submit('sell') }, 'Sell');
  const result = h('p', { class: 'ticket-result', testid: 'ticket-result', role: 'status' });
  const closedNote = h('p', { class: 'closed-note', testid: 'ticket-closed', hidden: true });
  const modeBox = h('fieldset', { class: 'segmented', hidden: true },
    h('legend', {}, 'Sell by'),
    modeInputs.map((input, i) => h('label', {}, input, h('span', {}, i === 0 ? 'Shares' : 'Target proceeds'))));

  const body = h('div', {},
    h('fieldset', { class: 'segmented side' }, h('legend', {}, 'Side'),
      sideInputs.map((input) => h('label', {}, input, h('span', {}, input.value === 'buy' ? 'Buy' : 'Sell')))),
    h('div', { class: 'field' }, h('label', { for: 'ticket-outcome' }, 'Outcome'), outcomeSelect),
    modeBox,
    h('div', { class: 'field' }, amountLabel, h('div', { class: 'input-unit' }, amountInput, unit), error),
    h('div', { class: 'field-row' },
      h('div', { class: 'field' }, h('label', { for: 'ticket-slippage' }, 'Slippage tolerance'),
        h('div', { class: 'input-unit' }, slippageInput, h('span', { class: 'unit', 'aria-hidden': 'true' }, '%'))),
      limitField),
    holding,
    warning,
    preview,
    h('div', { class: 'ticket-buttons' }, buyButton, sellButton));
  clear(root).append(
    h('section', { class: 'card ticket', 'aria-labelledby': 'ticket-title' },
      h('h2', { id: 'ticket-title' }, 'Trade'),
      closedNote,
      body,
      result));

  function setSide(side) {
    state.side = side;
    for (const i of sideInputs) i.checked = i.value === side;
    labels();
    changed();
  }

  function setMode(mode) {
    state.mode = mode;
    for (const i of modeInputs) i.checked = i.value === mode;
    labels();
    changed();
  }

  function selectedOutcome() {
    return m().outcomes.find((o) => o.id === outcomeSelect.value) || m().outcomes[0];
  }

  function labels() {
    const sym = token().symbol;
    const sell = state.side === 'sell';
    modeBox.hidden = !sell;
    if (!sell) {
      amountLabel.textContent = `Amount to spend (${sym})`;
      unit.textContent = sym;
    } else if (state.mode === 'shares') {
      amountLabel.textContent = 'Shares to sell';
      unit.textContent = 'shares';
    } else {
      amountLabel.textContent = `Proceeds to receive (${sym}, after fees)`;
      unit.textContent = sym;
    }
    // A limit is a bet's highest price after it, or a sale's lowest; a sale by target has none.
    limitField.hidden = sell && state.mode !== 'shares';
    limitLabel.textContent = sell ? 'Lowest price (%, optional)' : 'Limit price (%, optional)';
    const o = selectedOutcome();
    const title = o ? o.title : '';
    buyButton.textContent = `Buy ${title}`;
    sellButton.textContent = `Sell ${title}`;
    buyButton.className = `btn ${sell ? 'btn-outline-buy' : 'btn-buy'}`;
    sellButton.className = `btn ${sell ? 'btn-sell' : 'btn-outline-sell'}`;
    renderHolding();
  }

  function renderHolding() {
    const o = selectedOutcome();
    const shares = o && state.holdings.get(o.id);
    clear(holding);
    holding.hidden = !shares || shares === '0';
    if (holding.hidden) return;
    holding.append(h('span', {}, `You hold ${formatUnits(shares, token().decimals)} ${o.title} shares`));
    if (state.side === 'sell' && state.mode === 'shares') {
      holding.append(h('button', {
        type: 'button', class: 'link-btn', testid: 'ticket-max',
        onclick: () => {
          amountInput.value = fromWei(shares, token().decimals);
          changed();
        },
      }, 'Max'));
    }
  }

  function showError(text) {
    error.textContent = text;
    error.hidden = !text;
    amountInput.setAttribute('aria-invalid', text ? 'true' : 'false');
  }

  function open() {
    const market = m();
    return market.status === 'active' && market.trading_paused !== true
      && Date.now() < new Date(market.closes_at).getTime() && Date.now() >= new Date(market.starts_at || 0).getTime();
  }

  /** The request body for the current side and amount, or null (error shown). */
  function amountBody(side) {
    const text = amountInput.value.trim();
    if (!text) return null;
    let wei;
    try {
      wei = toWei(text, token().decimals);
    } catch (e) {
      showError(e.message);
      return null;
    }
    if (wei === '0') {
      showError('Enter an amount greater than zero.');
      return null;
    }
    let limit = null;
    if (limitInput.value.trim() && !limitField.hidden) {
      try {
        limit = parseLimitPrice(limitInput.value);
      } catch (e) {
        showError(e.message);
        return null;
      }
    }
    const outcome_id = selectedOutcome().id;
    if (side === 'buy') return limit ? { outcome_id, amount: wei, max_price: limit } : { outcome_id, amount: wei };
    if (state.mode !== 'shares') return { outcome_id, target_proceeds: wei };
    return limit ? { outcome_id, shares_amount: wei, min_price: limit } : { outcome_id, shares_amount: wei };
  }

  /** The tolerance in basis points, or null (error shown). */
  function tolerance() {
    try {
      return parseTolerance(slippageInput.value);
    } catch (e) {
      showError(e.message);
      return null;
    }
  }

  /** The bounds a trade carries from the quote it was confirmed on, less the tolerance. */
  function boundsFrom(side, body, quote, bps) {
    if (side === 'buy') return { min_shares: lessTolerance(quote.estimated_shares, bps) };
    if (body.shares_amount !== undefined) return { min_proceeds: lessTolerance(quote.estimated_net_proceeds, bps) };
    return { max_shares: plusTolerance(quote.estimated_shares, bps) };
  }

  function row(label, value, cls) {
    return [h('dt', {}, label), h('dd', { class: cls || '' }, value)];
  }

  function previewEmpty(text) {
    preview.dataset.state = 'empty';
    clear(preview).append(h('span', { class: 'muted' }, text));
  }

  /** What the logged-in wallet lacks for `body`: a bet over its balance, a sale of more shares
   *  than it holds (the preview itself knows no wallet). */
  function shortfall(side, body) {
    const d = token().decimals;
    if (side === 'buy') {
      const b = ctx.account.state.balances.find((x) => x.token_id === token().id);
      if (!getAuth(m().provider.id) || !b || BigInt(body.amount) <= BigInt(b.balance)) return '';
      return `This is more than your balance of ${formatUnits(b.balance, d)} ${token().symbol}.`;
    }
    if (body.shares_amount === undefined || !getAuth(m().provider.id)) return '';
    const held = state.holdings.get(body.outcome_id) || '0';
    return BigInt(body.shares_amount) > BigInt(held) ? `You hold ${formatUnits(held, d)} of these shares, fewer than that.` : '';
  }

  function showWarning(text) {
    warning.textContent = text;
    warning.hidden = !text;
  }

  async function runPreview() {
    const id = ++state.previewId;
    if (state.abort) state.abort.abort();
    showError('');
    showWarning('');
    if (!amountInput.value.trim()) {
      previewEmpty(state.side === 'buy' ? 'Enter an amount to see shares, price and fee.' : 'Enter shares or proceeds to see what you get.');
      return;
    }
    const side = state.side;
    const body = amountBody(side);
    if (!body) {
      previewEmpty('—');
      preview.dataset.state = 'error';
      return;
    }
    showWarning(shortfall(side, body));
    const abort = new AbortController();
    state.abort = abort;
    state.quote = null;
    preview.dataset.state = 'loading';
    preview.setAttribute('aria-busy', 'true');
    try {
      const p = await call(side === 'buy' ? 'bet_preview' : 'sell_preview', { body, signal: abort.signal });
      if (id !== state.previewId) return;
      showQuote(side, body, p);
    } catch (e) {
      if (e.name === 'AbortError' || id !== state.previewId) return;
      previewEmpty('No preview.');
      preview.dataset.state = 'error';
      showError(errorText(e, token()));
    } finally {
      if (id === state.previewId) preview.removeAttribute('aria-busy');
    }
  }

  /** Shows a preview `p` of the request `body`, and keeps it as the quote to trade on. */
  function showQuote(side, body, p) {
    state.quote = { side, key: JSON.stringify(body), p };
    const d = token().decimals;
    const sym = token().symbol;
    const impactCls = p.price_impact.startsWith('-') ? 'down' : 'up';
    const dl = side === 'buy'
      ? h('dl', {},
        row('Shares', formatUnits(p.estimated_shares, d)),
        row('Average price', formatPercent(p.average_price)),
        row('Fee', `${formatUnits(p.estimated_fee, d)} ${sym}`),
        row('Price impact', formatSignedPercent(p.price_impact), impactCls),
        row('New price', formatPercent(p.new_outcome_price)),
        row('Payout if it wins', `${formatUnits(p.estimated_shares, d)} ${sym}`),
        p.unfilled_amount !== '0' ? row('Filled within the limit', `${formatUnits(p.amount, d)} ${sym} (${formatUnits(p.unfilled_amount, d)} unfilled)`) : [])
      : h('dl', {},
        row('Shares sold', formatUnits(p.estimated_shares, d)),
        row('Proceeds', `${formatUnits(p.estimated_proceeds, d)} ${sym}`),
        row('Fee', `${formatUnits(p.estimated_fee, d)} ${sym}`),
        row('You receive', `${formatUnits(p.estimated_net_proceeds, d)} ${sym}`),
        row('Average price', formatPercent(p.average_price)),
        row('Price impact', formatSignedPercent(p.price_impact), impactCls),
        p.unfilled_shares !== '0' ? row('Unsold below the limit', `${formatUnits(p.unfilled_shares, d)} shares`) : []);
    preview.dataset.state = 'ready';
    preview.dataset.side = side;
    clear(preview).append(dl);
  }

  const previewSoon = debounce(runPreview, 200);

  function changed() {
    result.textContent = '';
    labels();
    previewSoon();
  }

  async function submit(side) {
    if (state.busy) return;
    if (side !== state.side) setSide(side);
    previewSoon.cancel();
    result.textContent = '';
    showError('');
    if (!open()) {
      showError('This market is not open for trading.');
      return;
    }
    if (!amountInput.value.trim()) {
      showError(side === 'buy' ? 'Enter an amount to spend.' : 'Enter what to sell.');
      amountInput.focus();
      return;
    }
    const body = amountBody(side);
    if (!body) return;
    const bps = tolerance();
    if (bps === null) return;
    const market = m();
    const pid = market.provider.id;
    if (!getAuth(pid)) {
      const ok = await ctx.account.connect();
      if (!ok || !getAuth(pid)) {
        showError('Connect your wallet to trade.');
        return;
      }
    }
    state.busy = true;
    buyButton.disabled = sellButton.disabled = true;
    buyButton.setAttribute('aria-busy', String(side === 'buy'));
    sellButton.setAttribute('aria-busy', String(side === 'sell'));
    const key = newIdempotencyKey();
    const outcome = selectedOutcome();
    try {
      // The quote confirmed is the one on screen for this very request; without one, a fresh one.
      let quote = state.quote && state.quote.side === side && state.quote.key === JSON.stringify(body) ? state.quote.p : null;
      if (!quote) {
        quote = await call(side === 'buy' ? 'bet_preview' : 'sell_preview', { body });
        showQuote(side, body, quote);
      }
      const bounds = boundsFrom(side, body, quote, bps);
      const receipt = await withAuth(pid, (auth) =>
        call(side === 'buy' ? 'place_bet' : 'sell', {
          path: { market_id: market.id },
          body: { session_id: auth.session_id, ...body, ...bounds },
          token: auth.access_token,
          idempotencyKey: key,
        }));
      const d = token().decimals;
      const sym = token().symbol;
      ctx.onTraded(side, receipt);
      result.className = 'ticket-result ok-text';
      const unfilled = side === 'buy' ? receipt.unfilled_amount : receipt.unfilled_shares;
      const rest = unfilled && unfilled !== '0'
        ? ` ${formatUnits(unfilled, d)} ${side === 'buy' ? sym : 'shares'} did not fill within the limit.`
        : '';
      result.textContent = (side === 'buy'
        ? `Bought ${formatUnits(receipt.shares_purchased, d)} ${outcome.title} shares for ${formatUnits(receipt.amount, d)} ${sym}.`
        : `Sold ${formatUnits(receipt.shares_sold, d)} ${outcome.title} shares for ${formatUnits(receipt.net_proceeds, d)} ${sym}.`) + rest;
      amountInput.value = '';
      state.quote = null;
      previewEmpty('Enter an amount to see shares, price and fee.');
      loadHoldings();
    } catch (e) {
      if (e instanceof ApiError && e.code === 'price_moved') {
        // Beyond the tolerance: nothing traded. Show the new quote and ask again.
        const now = e.problem.current_price ? ` (now ${formatPercent(e.problem.current_price)})` : '';
        await runPreview();
        showError(`The price moved${now} beyond your tolerance; nothing was traded. Check the new quote and confirm again.`);
        result.className = 'ticket-result';
        result.dataset.state = 'requote';
      } else {
        showError(e instanceof ApiError || e instanceof Error ? errorText(e, token()) : String(e));
      }
    } finally {
      state.busy = false;
      buyButton.removeAttribute('aria-busy');
      sellButton.removeAttribute('aria-busy');
      update();
    }
  }

  async function loadHoldings() {
    const market = m();
    const pid = market.provider.id;
    if (!getAuth(pid)) {
      state.holdings = new Map();
      renderHolding();
      return;
    }
    try {
      const page = await withAuth(pid, (auth) =>
        call('holdings', { token: auth.access_token, body: { filters: { market_id: market.id, status: 'active' }, pagination: { page: 1, per_page: 100 } } }));
      state.holdings = new Map(page.data.map((p) => [p.outcome_id, p.shares]));
    } catch {
      state.holdings = new Map();
    }
    renderHolding();
  }

  /** Re-reads the market: outcome options, open or closed. */
  function update() {
    const market = m();
    const chosen = outcomeSelect.value;
    const same = outcomeSelect.options.length === market.outcomes.length && market.outcomes.every((o, i) => outcomeSelect.options[i].value === o.id);
    if (!same) {
      clear(outcomeSelect);
      for (const o of market.outcomes) outcomeSelect.append(h('option', { value: o.id }, o.title));
      if (market.outcomes.some((o) => o.id === chosen)) outcomeSelect.value = chosen;
    }
    market.outcomes.forEach((o, i) => {
      if (outcomeSelect.options[i].textContent !== o.title) outcomeSelect.options[i].textContent = o.title;
    });
    const paused = market.trading_paused === true;
    const isOpen = open();
    closedNote.hidden = isOpen;
    // A settled market has nothing left to trade: only the note stays.
    body.hidden = market.status === 'resolved' || market.status === 'cancelled';
    closedNote.textContent = isOpen ? '' : paused && market.status === 'active'
      ? `Trading is paused by the market's provider: ${market.paused_reason || 'no reason given'}.`
      : market.status === 'resolved'
      ? 'This market is resolved. Winning shares can be claimed in your portfolio.'
      : market.status === 'cancelled'
        ? 'This market was cancelled. Positions were refunded.'
        : Date.now() < new Date(market.starts_at || 0).getTime() ? 'Trading has not started yet.' : 'Trading has closed; the market awaits resolution.';
    buyButton.disabled = sellButton.disabled = !isOpen || state.busy;
    amountInput.disabled = !isOpen;
    labels();
  }

  update();
  previewEmpty('Enter an amount to see shares, price and fee.');
  return {
    update,
    loadHoldings,
    refreshPreview: () => {
      if (amountInput.value.trim() && !state.busy) previewSoon();
    },
    selectOutcome(id, side) {
      outcomeSelect.value = id;
      if (side) setSide(side);
      else changed();
      amountInput.focus();
    },
    setHolding(outcomeId, shares) {
      state.holdings.set(outcomeId, shares);
      renderHolding();
    },
  };
}
