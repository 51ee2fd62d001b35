// Small DOM helpers. Text always goes in as text nodes (never innerHTML), so market
// questions and titles cannot inject markup.
import { errorText } from './client.js';

/** h('a', {href, class: 'x', dataset: {testid: 'y'}, onclick}, child, ...) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'testid') el.dataset.testid = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = v;
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : v);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function debounce(fn, ms) {
  let t;
  const d = (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
  d.cancel = () => clearTimeout(t);
  d.now = (...args) => {
    clearTimeout(t);
    fn(...args);
  };
  return d;
}

export function shortAddress(a) {
  return a && a.length > 12 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a || '';
}

// Every time shown carries its zone (the browser's): "Jan 1, 2099, 1:00 AM GMT+1".
const dateFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

export function formatDate(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : dateFmt.format(d);
}

/** A time of day for today's events, else a date. */
export function formatWhen(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const now = new Date();
  return d.toDateString() === now.toDateString() ? timeFmt.format(d) : `${dayFmt.format(d)} ${timeFmt.format(d)}`;
}

/** "in 3 days", "2 hours ago". */
export function relativeTime(iso) {
  const ms = new Date(iso).getTime() - Date.now();
  const abs = Math.abs(ms);
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const units = [
    ['year', 365 * 864e5], ['month', 30 * 864e5], ['day', 864e5], ['hour', 36e5], ['minute', 6e4], ['second', 1e3],
  ];
  for (const [unit, size] of units) {
    if (abs >= size || unit === 'second') return rtf.format(Math.round(ms / size), unit);
  }
  return '';
}

const STATUS_LABEL = { active: 'Open', closed: 'Closed', resolved: 'Resolved', cancelled: 'Cancelled' };

export function statusBadge(status, testid = 'market-status') {
  return h('span', { class: `badge badge-${status}`, testid, dataset: { status } }, STATUS_LABEL[status] || status);
}

/** A labelled form field: field('Question', input, 'hint'). The input needs an id. */
export function field(label, input, hint, cls = 'field') {
  return h('div', { class: cls },
    h('label', { for: input.id }, label, hint ? h('span', { class: 'field-hint' }, ` ${hint}`) : null),
    input);
}

/** A short-lived message in the page's notice area (role=status or alert). */
export function notify(text, kind = 'info') {
  let box = document.getElementById('notice');
  if (!box) return;
  box.hidden = false;
  box.className = `notice notice-${kind}`;
  box.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  box.textContent = text;
  clearTimeout(notify.t);
  notify.t = setTimeout(() => {
    box.hidden = true;
  }, kind === 'error' ? 8000 : 4000);
}

/** Flashes an element green or red when a value moves. */
export function flash(el, direction) {
  if (!direction) return;
  el.classList.remove('flash-up', 'flash-down');
  void el.offsetWidth; // restart the animation
  el.classList.add(direction > 0 ? 'flash-up' : 'flash-down');
}

/** A form's submit handler: keeps the page from loading, clears `error`, runs `action` with
 *  the `submit` button busy, and shows what it throws in `error` (the problem's detail). */
export function submitting(submit, error, action) {
  return async (e) => {
    e.preventDefault();
    error.textContent = '';
    error.hidden = true;
    await busy(submit, async () => {
      try {
        await action();
      } catch (x) {
        error.textContent = errorText(x);
        error.hidden = false;
      }
    });
  };
}

/** Marks a button busy while `fn` runs; returns fn's result. */
export async function busy(button, fn) {
  const was = button.disabled;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await fn();
  } finally {
    button.disabled = was;
    button.removeAttribute('aria-busy');
  }
}

const PALETTE = ['#2563eb', '#e11d48', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#ea580c', '#475569'];
export function outcomeColor(i) {
  return PALETTE[i % PALETTE.length];
}
