// The header's account area: connect-wallet when logged out; address, balance and logout
// when logged in. Balances stay live over the WebSocket user channel, which pages can also
// listen to (the portfolio does).
import { call, errorText } from './client.js';
import { h, clear, shortAddress, notify } from './ui.js';
import { formatUnits } from './money.js';
import { getAuth, login, logout, onAuthChange, resume, withAuth, accessToken } from './session.js';
import { LiveSocket } from './live.js';

/**
 * mountAccount({providerId: () => id|null, providerReady?: Promise<id|null>, tokenId: () => id|null, onUser, onMarket})
 * `providerReady` settles once the page knows its provider (null: it never will); a
 * connect-wallet press before then waits for it instead of failing for want of a provider.
 * Returns {render(), balances, socket, providerId}.
 */
export function mountAccount(opts) {
  const root = document.getElementById('account');
  const state = { balances: [], address: null, socket: null, socketProvider: null, connecting: false };
  const userListeners = new Set();
  if (opts.onUser) userListeners.add(opts.onUser);
  const api = {
    state,
    render,
    onUser: (fn) => userListeners.add(fn),
    /** Login for the page's provider, from a button press. */
    connect,
    setBalance(tokenId, balance) {
      const b = state.balances.find((x) => x.token_id === tokenId);
      if (b) b.balance = balance;
      render();
    },
    get socket() {
      return state.socket;
    },
  };

  async function connect(button) {
    if (state.connecting) return false;
    state.connecting = true;
    if (button) button.disabled = true;
    try {
      let pid = opts.providerId();
      if (!pid && opts.providerReady) {
        // Pressed before the page has loaded what names its provider (the market): wait for
        // it. render() keeps the button busy meanwhile, also when it replaces it.
        if (button) button.setAttribute('aria-busy', 'true');
        pid = await opts.providerReady.catch(() => null);
        if (pid && getAuth(pid)) return true; // logged in meanwhile (another tab)
      }
      await login(pid);
      return true;
    } catch (e) {
      showError(errorText(e));
      return false;
    } finally {
      state.connecting = false;
      if (button) {
        button.disabled = false;
        button.removeAttribute('aria-busy');
      }
      // A button render() drew while this ran was drawn busy: draw it again, enabled.
      const shown = root.querySelector('[data-testid="connect-wallet"]');
      if (shown && shown !== button && shown.disabled) {
        shown.disabled = false;
        shown.removeAttribute('aria-busy');
      }
    }
  }

  function showError(text) {
    notify(text, 'error');
    const el = document.querySelector('[data-testid="auth-error"]');
    if (el) {
      el.textContent = text;
      el.hidden = false;
    }
  }

  function preferredBalances() {
    const tid = opts.tokenId && opts.tokenId();
    if (tid) {
      const b = state.balances.find((x) => x.token_id === tid);
      return b ? [b] : [];
    }
    return state.balances;
  }

  function render() {
    clear(root);
    const pid = opts.providerId();
    const auth = getAuth(pid);
    if (!auth) {
      const button = h('button', { type: 'button', class: 'btn btn-primary', testid: 'connect-wallet', onclick: (e) => connect(e.currentTarget) }, 'Connect wallet');
      if (state.connecting) {
        button.disabled = true;
        button.setAttribute('aria-busy', 'true');
      }
      root.append(button, h('p', { class: 'auth-error', testid: 'auth-error', hidden: true, role: 'alert' }));
      return;
    }
    const shown = preferredBalances();
    root.append(
      h('span', { class: 'acct-balance', testid: 'header-balance', title: 'Balance' },
        shown.length ? shown.map((b, i) => [i ? ' · ' : '', formatUnits(b.balance, b.decimals), ' ', h('span', { class: 'muted' }, b.symbol)]) : '—'),
      h('span', { class: 'acct-address', testid: 'wallet-address', title: auth.wallet_address || '' }, shortAddress(state.address || auth.wallet_address)),
      h('button', {
        type: 'button', class: 'btn btn-ghost', testid: 'logout',
        onclick: async (e) => {
          e.currentTarget.disabled = true;
          await logout(pid);
        },
      }, 'Log out'),
    );
  }

  async function loadProfile() {
    const pid = opts.providerId();
    if (!getAuth(pid)) return;
    try {
      const profile = await withAuth(pid, (auth) => call('profile', { token: auth.access_token }));
      state.balances = profile.balances || [];
      state.address = profile.wallet_address;
    } catch (e) {
      if (getAuth(pid)) notify(errorText(e), 'error');
    }
    render();
  }

  function openSocket() {
    const pid = opts.providerId();
    if (state.socket && state.socketProvider === pid && getAuth(pid)) return;
    if (state.socket) state.socket.close();
    state.socket = null;
    state.socketProvider = pid;
    if (!getAuth(pid)) return;
    state.socket = new LiveSocket({
      getToken: () => accessToken(pid),
      onUser: (msg) => {
        if (msg.type === 'snapshot') {
          state.balances = msg.balances || state.balances;
          render();
        } else if (msg.type === 'balance.updated') {
          api.setBalance(msg.data.token_id, msg.data.balance);
        }
        for (const fn of userListeners) fn(msg);
      },
      onMarket: opts.onMarket,
    });
  }

  /** Re-reads the login after a change (login, logout, another tab). */
  function refreshAll() {
    const pid = opts.providerId();
    if (!getAuth(pid)) {
      state.balances = [];
      state.address = null;
    }
    render();
    if (opts.live !== false) openSocket();
    loadProfile();
  }

  onAuthChange(({ providerId }) => {
    if (providerId === opts.providerId()) refreshAll();
  });
  api.reload = () => {
    resume(opts.providerId());
    refreshAll();
  };
  api.reload();
  return api;
}
