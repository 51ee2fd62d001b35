// Console: the provider's webhook endpoints (list, create, edit, enable, delete, rotate the
// secret, send a test) and each endpoint's deliveries (filter by status, retry one).
// Operations are found by route in the generated client, so their operationIds may be anything.
import { call, errorText, operationFor } from './client.js';
import { h, clear, notify, busy, submitting, formatWhen, field } from './ui.js';

const EVENT_TYPES = [
  'market.created', 'market.updated', 'outcome.created', 'outcome.updated', 'trade.created', 'market.closed',
  'market.resolved', 'market.cancelled', 'claim.completed', 'deposit.completed', 'withdrawal.completed',
];

const ROUTES = {
  list: ['GET', '/v1/providers/webhooks'],
  create: ['POST', '/v1/providers/webhooks'],
  get: ['GET', '/v1/providers/webhooks/{id}'],
  update: ['PUT', '/v1/providers/webhooks/{id}'],
  remove: ['DELETE', '/v1/providers/webhooks/{id}'],
  rotate: ['POST', '/v1/providers/webhooks/{id}/rotate-secret'],
  test: ['POST', '/v1/providers/webhooks/{id}/test'],
  deliveries: ['GET', '/v1/providers/webhooks/{id}/deliveries'],
  retry: ['POST', '/v1/providers/webhooks/{id}/deliveries/{delivery_id}/retry'],
};

let uid = 0;

export function mountWebhooks(root, { apiKey }) {
  const ops = Object.fromEntries(Object.entries(ROUTES).map(([k, [m, p]]) => [k, operationFor(m, p)]));
  const run = (name, opts) => call(ops[name], { ...opts, apiKey: apiKey() });
  const list = h('ul', { class: 'list', testid: 'webhook-list' });
  const secretBox = h('div', { testid: 'webhook-secret-box', hidden: true });
  clear(root).append(h('div', { class: 'card-title' }, h('h2', { id: 'webhooks-title' }, 'Webhooks'),
    h('button', { type: 'button', class: 'btn btn-small', testid: 'webhook-refresh', onclick: () => load() }, 'Refresh')));
  if (!ops.list || !ops.create) {
    root.append(h('p', { class: 'muted', testid: 'webhooks-unavailable' }, 'This server does not offer webhooks.'));
    return;
  }
  root.append(h('p', { class: 'muted' }, 'Hanson POSTs each event to your endpoints, signed with Standard Webhooks headers, and retries failures with backoff.'),
    secretBox, list, createForm());

  function showSecret(secret, what) {
    clear(secretBox).hidden = false;
    secretBox.append(h('p', {}, h('b', {}, what), ' Copy it now: it is not shown again.'), h('p', { class: 'secret', testid: 'webhook-secret' }, secret),
      h('button', { type: 'button', class: 'btn btn-small btn-ghost', testid: 'webhook-secret-done', onclick: () => { secretBox.hidden = true; } }, 'Done'));
  }

  function typeChecks(selected, prefix) {
    const all = selected.includes('*');
    const boxes = [];
    const star = h('input', { type: 'checkbox', id: `${prefix}-all`, value: '*', checked: all, testid: 'webhook-type-all' });
    const wrap = h('div', { class: 'checks' }, h('label', { for: star.id }, star, 'All events'));
    for (const t of EVENT_TYPES) {
      const c = h('input', { type: 'checkbox', id: `${prefix}-${t}`, value: t, checked: !all && selected.includes(t), disabled: all, dataset: { testid: `webhook-type-${t}` } });
      boxes.push(c);
      wrap.append(h('label', { for: c.id }, c, t));
    }
    star.addEventListener('change', () => boxes.forEach((b) => { b.disabled = star.checked; }));
    return { wrap, value: () => (star.checked ? ['*'] : boxes.filter((b) => b.checked).map((b) => b.value)) };
  }

  function createForm() {
    const n = ++uid;
    const url = h('input', { id: `wh-url-${n}`, type: 'url', testid: 'webhook-url', placeholder: 'https://example.com/hooks/hanson', required: true });
    const desc = h('input', { id: `wh-desc-${n}`, testid: 'webhook-description', maxlength: 500 });
    const types = typeChecks(['*'], `wh-new-${n}`);
    const error = h('p', { class: 'error-text', testid: 'webhook-error', role: 'alert', hidden: true });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'webhook-create' }, 'Add endpoint');
    return h('form', {
      novalidate: true,
      onsubmit: submitting(submit, error, async () => {
        const event_types = types.value();
        if (!event_types.length) throw new Error('Events: choose at least one.');
        const body = { url: url.value.trim(), event_types };
        if (desc.value.trim()) body.description = desc.value.trim();
        const w = await run('create', { body });
        showSecret(w.secret, 'Signing secret of the new endpoint.');
        url.value = '';
        desc.value = '';
        await load();
      }),
    },
    h('h3', {}, 'Add an endpoint'),
    h('div', { class: 'form-grid' }, field('URL', url), field('Description', desc, 'optional')),
    h('fieldset', {}, h('legend', {}, 'Events'), types.wrap),
    error, submit);
  }

  async function load() {
    try {
      const all = [];
      for (let page = 1; page <= 10; page++) {
        const r = await run('list', { query: { page, per_page: 100 } });
        all.push(...(r.data || []));
        if (!r.pagination || page >= r.pagination.total_pages) break;
      }
      clear(list);
      if (!all.length) list.append(h('li', { class: 'muted' }, 'No endpoints yet.'));
      for (const w of all) list.append(item(w));
    } catch (e) {
      clear(list).append(h('li', { class: 'error-text', role: 'alert' }, errorText(e)));
    }
  }

  function item(w) {
    const li = h('li', { testid: 'webhook-row', dataset: { webhookId: w.id, enabled: String(w.enabled) } });
    const error = h('p', { class: 'error-text', role: 'alert', hidden: true, testid: 'webhook-row-error' });
    const fail = (x) => {
      error.textContent = errorText(x);
      error.hidden = false;
    };
    const action = (label, testid, fn, cls = 'btn btn-small') => h('button', {
      type: 'button', class: cls, testid,
      onclick: (e) => {
        error.hidden = true;
        return busy(e.currentTarget, () => fn().catch(fail));
      },
    }, label);
    const details = h('div', { hidden: true });
    const editBox = h('div', { hidden: true });
    li.append(
      h('div', {},
        h('div', { class: 'addr', testid: 'webhook-row-url' }, w.url),
        h('div', { class: 'card-meta' },
          h('span', { class: `badge ${w.enabled ? 'badge-active' : 'badge-cancelled'}`, testid: 'webhook-state' },
            w.enabled ? 'Enabled' : w.disabled_reason === 'gone' ? 'Disabled: endpoint gone (410)' : w.disabled_reason === 'failing' ? 'Disabled: failing for 5 days' : 'Disabled'),
          h('span', {}, (w.event_types || []).join(', ')),
          w.description ? h('span', {}, `· ${w.description}`) : null)),
      h('div', { class: 'row-actions' },
        action('Deliveries', 'webhook-deliveries', async () => {
          details.hidden = !details.hidden;
          if (!details.hidden) await deliveries(w, details);
        }),
        action('Edit', 'webhook-edit', async () => {
          editBox.hidden = !editBox.hidden;
          if (!editBox.hidden) editForm(w, editBox);
        }),
        action(w.enabled ? 'Disable' : 'Enable', 'webhook-toggle', async () => {
          await run('update', { path: [w.id], body: { enabled: !w.enabled } });
          await load();
        }),
        action('Send test', 'webhook-test', async () => {
          await run('test', { path: [w.id] });
          notify('Test event queued.', 'success');
          if (!details.hidden) await deliveries(w, details);
        }),
        action('Rotate secret', 'webhook-rotate', async () => {
          const r = await run('rotate', { path: [w.id] });
          showSecret(r.secret, 'New signing secret (the old one keeps signing for 24 hours).');
        }),
        action('Delete', 'webhook-delete', async () => {
          await run('remove', { path: [w.id] });
          notify('Endpoint deleted.', 'success');
          await load();
        }, 'btn btn-small btn-danger')),
      error, editBox, details);
    return li;
  }

  function editForm(w, box) {
    const n = ++uid;
    const url = h('input', { id: `wh-edit-url-${n}`, type: 'url', value: w.url, testid: 'webhook-edit-url' });
    const desc = h('input', { id: `wh-edit-desc-${n}`, value: w.description || '', testid: 'webhook-edit-description' });
    const enabled = h('input', { type: 'checkbox', id: `wh-edit-enabled-${n}`, checked: !!w.enabled, testid: 'webhook-edit-enabled' });
    const types = typeChecks(w.event_types || ['*'], `wh-edit-${n}`);
    const error = h('p', { class: 'error-text', role: 'alert', hidden: true });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-small', testid: 'webhook-save' }, 'Save');
    clear(box).append(h('form', {
      novalidate: true,
      onsubmit: submitting(submit, error, async () => {
        await run('update', { path: [w.id], body: { url: url.value.trim(), description: desc.value.trim(), event_types: types.value(), enabled: enabled.checked } });
        notify('Endpoint saved.', 'success');
        await load();
      }),
    },
    h('div', { class: 'form-grid' }, field('URL', url), field('Description', desc)),
    h('div', { class: 'checks' }, h('label', { for: enabled.id }, enabled, 'Enabled')),
    h('fieldset', {}, h('legend', {}, 'Events'), types.wrap),
    error, submit));
  }

  async function deliveries(w, box, status = '') {
    const n = ++uid;
    const filter = h('select', { id: `wh-status-${n}`, testid: 'delivery-status-filter' },
      ['', 'pending', 'succeeded', 'failed'].map((s) => h('option', { value: s, selected: s === status }, s || 'All')));
    filter.addEventListener('change', () => deliveries(w, box, filter.value));
    const r = await run('deliveries', { path: [w.id], query: { page: 1, per_page: 50, status: status || undefined } });
    const rows = (r.data || []).map((d) => h('tr', { testid: 'delivery-row', dataset: { deliveryId: d.id, status: d.status } },
      h('td', {}, d.event_type),
      h('td', {}, h('span', { class: `badge ${d.status === 'succeeded' ? 'badge-active' : d.status === 'failed' ? 'badge-cancelled' : 'badge-closed'}` }, d.status)),
      h('td', { class: 'r' }, String(d.attempts ?? 0)),
      h('td', {}, d.last_status_code ? String(d.last_status_code) : d.last_error || '—'),
      h('td', { class: 'hide-sm' }, formatWhen(d.updated_at || d.created_at)),
      h('td', { class: 'r' }, h('button', {
        type: 'button', class: 'btn btn-small', testid: 'delivery-retry',
        onclick: (e) => busy(e.currentTarget, async () => {
          try {
            await run('retry', { path: [w.id, d.id] });
            notify('Delivery sent again.', 'success');
            await deliveries(w, box, filter.value);
          } catch (x) {
            notify(errorText(x), 'error');
          }
        }),
      }, 'Retry'))));
    clear(box).append(
      h('div', { class: 'row-actions' }, h('label', { for: filter.id }, 'Status'), filter,
        h('button', { type: 'button', class: 'btn btn-small btn-ghost', testid: 'delivery-refresh', onclick: () => deliveries(w, box, filter.value) }, 'Refresh')),
      rows.length
        ? h('div', { class: 'table-wrap' }, h('table', {},
          h('thead', {}, h('tr', {}, h('th', {}, 'Event'), h('th', {}, 'Status'), h('th', { class: 'r' }, 'Attempts'), h('th', {}, 'Last result'), h('th', { class: 'hide-sm' }, 'Updated'), h('th', {}, h('span', { class: 'sr-only' }, 'Actions')))),
          h('tbody', {}, rows)))
        : h('p', { class: 'muted' }, 'No deliveries.'));
  }

  load();
}
