// console/ui.js: what every page shares beside dom.js: the messages of operations (the flash
// region under the header) and the hash's query kept in step with a page's filter.

import { h } from './dom.js';

const flashBox = document.getElementById('flash');

// ---- messages --------------------------------------------------------------------------------

// A message about an operation, in place of the one before: kind 'ok' (goes after 10 s), 'warn',
// 'err' (stay until closed or the next). lines: more lines (warnings, the check's messages).
export function flash(text, kind = 'ok', lines = []) {
  const close = h('button', { type: 'button', class: 'link close', 'aria-label': 'Dismiss' }, '×');
  const msg = h('div', { class: `flash ${kind}`, role: kind === 'err' ? 'alert' : 'status' },
    h('p', null, text), lines.length ? h('ul', null, lines.map((l) => h('li', null, l))) : null, close);
  close.addEventListener('click', () => msg.remove());
  flashBox.replaceChildren(msg);
  if (kind === 'ok') setTimeout(() => msg.remove(), 10000);
}

// An ApiError as a message: the API's error (the CLI's sentence) and hint
export function flashError(what, e) {
  const lines = String(e.error || e.message).split('\n');
  flash(`${what}: ${lines[0]}`, 'err', [...lines.slice(1), ...(e.hint ? [e.hint] : [])]);
}

// Replace the hash's query without routing again (a filter typed, a search made)
export function replaceQuery(path, q) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v != null && v !== '') s.set(k, v);
  const qs = s.toString();
  history.replaceState(null, '', `#${path}${qs ? `?${qs}` : ''}`);
}

