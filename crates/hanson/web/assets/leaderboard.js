// Leaderboards: a market's, or a provider's in one token, ranked by profit or volume (the
// server's board, which may lag trades by a few seconds), a page at a time.
import { call, errorText } from './client.js';
import { h, clear, shortAddress } from './ui.js';
import { formatUnits, formatSignedUnits } from './money.js';

const PER_PAGE = 50;

/**
 * Mounts a board in `container`. `scope`: `{ marketId }` or `{ providerId, tokenId }`;
 * `token`: `{ symbol, decimals }` for the amounts.
 */
export function mountLeaderboard(container, scope, token) {
  const state = { by: 'profit', page: 1, rows: [], totalPages: 0 };
  const body = h('tbody', {});
  const empty = h('p', { class: 'muted', testid: 'leaderboard-empty', hidden: true }, 'No trades yet.');
  const error = h('p', { class: 'error-text', role: 'alert', hidden: true });
  const more = h('button', { type: 'button', class: 'btn btn-small', hidden: true, onclick: () => load(state.page + 1) }, 'Load more');
  const byButton = (by, label) => h('button', { type: 'button', class: 'btn btn-small', 'aria-pressed': String(by === state.by), dataset: { by }, onclick: () => {
    state.by = by;
    switcher.querySelectorAll('button').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.by === by)));
    load(1);
  } }, label);
  const switcher = h('div', { class: 'row-actions', role: 'group', 'aria-label': 'Rank by' }, byButton('profit', 'Profit'), byButton('volume', 'Volume'));
  clear(container).append(
    switcher,
    h('div', { class: 'table-wrap' },
      h('table', { class: 'trades', testid: 'leaderboard' },
        h('thead', {}, h('tr', {},
          h('th', { class: 'r' }, '#'), h('th', {}, 'Trader'),
          h('th', { class: 'r' }, `Profit (${token.symbol})`), h('th', { class: 'r' }, `Volume (${token.symbol})`), h('th', { class: 'r hide-sm' }, 'Trades'))),
        body)),
    empty, error, more);

  const row = (r) => h('tr', { testid: 'leaderboard-row', dataset: { walletId: r.wallet_id, rank: r.rank, profit: r.profit, volume: r.volume } },
    h('td', { class: 'r num' }, String(r.rank)),
    h('td', { title: r.wallet_address }, shortAddress(r.wallet_address)),
    h('td', { class: `r num ${r.profit.startsWith('-') ? 'down' : 'up'}` }, formatSignedUnits(r.profit, token.decimals)),
    h('td', { class: 'r num' }, formatUnits(r.volume, token.decimals)),
    h('td', { class: 'r num hide-sm' }, String(r.trades)));

  async function load(page) {
    error.hidden = true;
    const query = { by: state.by, page, per_page: PER_PAGE };
    try {
      const answer = scope.marketId
        ? await call('market_leaderboard', { path: { market_id: scope.marketId }, query })
        : await call('provider_leaderboard', { path: { provider_id: scope.providerId }, query: { ...query, token_id: scope.tokenId } });
      if (page === 1) clear(body);
      body.append(...answer.data.map(row));
      state.page = page;
      state.totalPages = answer.pagination.total_pages;
      empty.hidden = body.children.length > 0;
      more.hidden = state.page >= state.totalPages;
    } catch (e) {
      error.textContent = errorText(e);
      error.hidden = false;
    }
  }
  load(1);
  return { reload: () => load(1) };
}
