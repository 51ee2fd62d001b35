// The leaderboard page: `?market_id=` shows a market's board; otherwise the board of the
// provider named by `?provider_id=` (or of the last market viewed) in the token chosen.
import { call, errorText } from './client.js';
import { h, $, clear, field } from './ui.js';
import { lastProvider } from './session.js';
import { mountLeaderboard } from './leaderboard.js';

const root = $('#leaderboard-root');

async function start() {
  const params = new URLSearchParams(location.search);
  try {
    const marketId = params.get('market_id');
    if (marketId) {
      const m = await call('market_detail', { path: { market_id: marketId } });
      const board = h('div', {});
      clear(root).append(h('h2', {}, h('a', { href: `/markets/${encodeURIComponent(m.id)}` }, m.question)), board);
      mountLeaderboard(board, { marketId: m.id }, m.token);
      return;
    }
    const providerId = params.get('provider_id') || lastProvider();
    if (!providerId) {
      clear(root).append(h('p', { class: 'muted' }, "Open a market first: its provider's leaderboard shows here."));
      return;
    }
    const tokens = (await call('list_tokens')).data || [];
    const select = h('select', { id: 'leaderboard-token', testid: 'leaderboard-token' }, tokens.map((t) => h('option', { value: t.id }, t.symbol)));
    const board = h('div', {});
    const show = () => {
      const token = tokens.find((t) => t.id === select.value);
      if (token) mountLeaderboard(board, { providerId, tokenId: token.id }, token);
    };
    select.addEventListener('change', show);
    clear(root).append(field('Token', select), board);
    show();
  } catch (e) {
    clear(root).append(h('p', { class: 'error-text', role: 'alert' }, errorText(e)));
  }
}

start();
