// The console's market operations: pause and resume trading, resolve (at once or after a
// dispute window) and cancel. Resolve and cancel ask for confirmation first: they move money
// and cannot be undone once final.
import { call, newIdempotencyKey } from './client.js';
import { h, submitting, formatDate, field } from './ui.js';

let uid = 0;
const input = (attrs) => h('input', { id: attrs.id || `settle-${++uid}`, ...attrs });
const errorLine = (testid) => h('p', { class: 'error-text', testid, role: 'alert', hidden: true });

/** Asks before an action that cannot be taken back; throws (shown as the form's error) if not confirmed. */
function confirmed(question) {
  if (!window.confirm(question)) throw new Error('Not confirmed: nothing was changed.');
}

/** ctx: {key, notify(text, kind), refresh() (market and treasury again)} */
export function pauseCard(m, ctx) {
  const paused = m.trading_paused === true;
  const reason = input({ id: 'pause-reason', testid: 'pause-reason', maxlength: 1000, placeholder: 'Why trading stops' });
  const error = errorLine('pause-error');
  const submit = h('button', { type: 'submit', class: paused ? 'btn btn-primary' : 'btn', testid: paused ? 'resume-button' : 'pause-button' },
    paused ? 'Resume trading' : 'Pause trading');
  return h('form', {
    class: 'card', 'aria-labelledby': 'pause-title', novalidate: true, testid: 'console-pause',
    onsubmit: submitting(submit, error, async () => {
      const options = { path: { market_id: m.id }, apiKey: ctx.key, idempotencyKey: newIdempotencyKey() };
      if (paused) {
        await call('resume_market', options);
        ctx.notify('Trading resumed.', 'success');
      } else {
        if (!reason.value.trim()) throw new Error('Reason: say why trading stops.');
        await call('pause_market', { ...options, body: { reason: reason.value.trim() } });
        ctx.notify('Trading paused.', 'success');
      }
      await ctx.refresh();
    }),
  },
  h('h3', { id: 'pause-title' }, 'Trading'),
  paused
    ? h('p', { class: 'muted', testid: 'console-paused' }, `Paused since ${formatDate(m.paused_at)}: ${m.paused_reason}`)
    : h('p', { class: 'muted' }, 'Pausing stops bets, sells and previews until you resume; everything else goes on.'),
  paused ? null : field('Reason', reason),
  error, submit);
}

/** While a resolution waits out its dispute window: when it becomes final. */
export function pendingNote(m) {
  if (!m.resolution_pending) return null;
  return h('p', { class: 'muted', testid: 'console-final-at' },
    `Resolved; final at ${formatDate(m.final_at)}. Until then claims wait, and you may resolve again or cancel.`);
}

export function resolveForm(m, ctx) {
  const outcome = h('select', { id: 'resolve-outcome', testid: 'resolve-outcome' }, h('option', { value: '' }, 'Choose the winning outcome'), m.outcomes.map((o) => h('option', { value: o.id }, o.title)));
  const resolver = input({ id: 'resolve-wallet', name: 'resolver_wallet_id', testid: 'resolve-wallet', value: 'console', maxlength: 1000 });
  const source = input({ id: 'resolve-source', testid: 'resolve-source', value: m.resolution_source || '', maxlength: 1000 });
  const windowMinutes = input({ id: 'resolve-window', testid: 'resolve-window', inputmode: 'numeric', value: '0', maxlength: 6 });
  const error = errorLine('resolve-error');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'resolve-button' }, m.resolution_pending ? 'Resolve again' : 'Resolve market');
  return h('form', {
    class: 'card', 'aria-labelledby': 'resolve-title', novalidate: true,
    onsubmit: submitting(submit, error, async () => {
      if (!outcome.value) throw new Error('Winning outcome: choose one.');
      const seconds = windowSeconds(windowMinutes.value);
      const title = outcome.selectedOptions[0].textContent;
      confirmed(seconds === 0
        ? `Resolve for "${title}"? Winners can claim at once and the surplus returns to the treasury. This cannot be undone.`
        : `Resolve for "${title}" with a ${windowMinutes.value.trim()}-minute dispute window? Until it ends you may resolve again or cancel.`);
      const body = { winning_outcome_id: outcome.value, resolver_wallet_id: resolver.value.trim(), dispute_window_seconds: seconds };
      if (source.value.trim()) body.resolution_source = source.value.trim();
      const r = await call('resolve', { path: { market_id: m.id }, body, apiKey: ctx.key, idempotencyKey: newIdempotencyKey() });
      ctx.notify(seconds === 0
        ? `Resolved: ${r.positions_updated} position(s) settled, payout ratio ${r.payout_ratio}.`
        : `Resolved: ${r.positions_updated} position(s) settled; final at ${formatDate(r.final_at)}.`, 'success');
      await ctx.refresh();
    }),
  },
  h('h3', { id: 'resolve-title' }, m.resolution_pending ? 'Resolve again' : 'Resolve'),
  h('p', { class: 'muted' }, 'Winning shares pay out in full; the rest of the pool returns to the treasury once the resolution is final.'),
  field('Winning outcome', outcome),
  field('Resolver wallet id', resolver),
  field('Resolution source', source, 'optional'),
  field('Dispute window (minutes)', windowMinutes, '0: final at once; at most 10080 (a week)'),
  error, submit);
}

/** Whole minutes (0 to 10080) as seconds, or throws with a sentence. */
function windowSeconds(text) {
  const t = String(text).trim() || '0';
  if (!/^[0-9]{1,5}$/.test(t) || Number(t) > 10080) throw new Error('Dispute window: whole minutes from 0 to 10080.');
  return Number(t) * 60;
}

export function cancelForm(m, ctx) {
  const reason = input({ id: 'cancel-reason', testid: 'cancel-reason', maxlength: 1000, placeholder: 'Why the market is cancelled' });
  const canceller = input({ id: 'cancel-wallet', testid: 'cancel-wallet', value: 'console', maxlength: 1000 });
  const source = input({ id: 'cancel-source', testid: 'cancel-source', maxlength: 1000 });
  const error = errorLine('cancel-error');
  const submit = h('button', { type: 'submit', class: 'btn btn-danger', testid: 'cancel-button' }, 'Cancel market');
  return h('form', {
    class: 'card', 'aria-labelledby': 'cancel-title', novalidate: true,
    onsubmit: submitting(submit, error, async () => {
      confirmed('Cancel this market? Every open position is refunded its cost and the market closes for good.');
      const body = { canceller_wallet_id: canceller.value.trim(), reason: reason.value.trim() || 'Cancelled by the provider' };
      if (source.value.trim()) body.cancellation_source = source.value.trim();
      const r = await call('cancel', { path: { market_id: m.id }, body, apiKey: ctx.key, idempotencyKey: newIdempotencyKey() });
      ctx.notify(`Cancelled: ${r.positions_refunded} position(s) refunded.`, 'success');
      await ctx.refresh();
    }),
  },
  h('h3', { id: 'cancel-title' }, 'Cancel'),
  h('p', { class: 'muted' }, 'Open positions are refunded their cost; fees are not refunded.'),
  field('Reason', reason),
  field('Canceller wallet id', canceller),
  field('Cancellation source', source, 'optional'),
  error, submit);
}
