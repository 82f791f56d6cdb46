// console/dom.js: building and updating the page's elements, with no framework. h() makes an
// element; morph() brings a live subtree to a freshly built one in place, so that a page that
// renders again every 2 s keeps the keyboard focus, the scroll position, an open <details> and what
// the user typed. Actions are found by data-action on the element clicked (one listener per page
// part, see on()): a button that morph turns from "Disable" into "Enable" does the new thing. And
// the formats every page shares.

const SVG = 'http://www.w3.org/2000/svg';

// h('a', {href: '#/jobs', class: 'x'}, 'text', child, [more]): null, false and undefined are left
// out (of attributes and children); onNAME attributes are listeners; svg:TAG makes an SVG element.
export function h(tag, attrs, ...kids) {
  const svg = tag.startsWith('svg:');
  const el = svg ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, kids);
  return el;
}

function append(el, kids) {
  for (const k of kids) {
    if (k == null || k === false) continue;
    if (Array.isArray(k)) append(el, k);
    else el.append(k instanceof Node ? k : String(k));
  }
}

// The element's children replaced by kids.
export function fill(el, ...kids) {
  el.replaceChildren();
  append(el, kids);
  return el;
}

// ---- morph ----------------------------------------------------------------------------------

// Make live's children what fresh's are (fresh: an element built with h() for this). Elements
// are matched by data-key where they have one, else by position and tag. Kept as the user left
// them: a <details>' open, an input's typed value (only its attributes change), the focus.
export function morph(live, fresh) {
  morphChildren(live, fresh);
  return live;
}

function sameKind(a, b) {
  return a.nodeType === b.nodeType && (a.nodeType !== 1 || (a.tagName === b.tagName && !a.dataset.key && !b.dataset.key));
}

function morphChildren(a, b) {
  const keyed = new Map();
  for (let c = a.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && c.dataset.key != null) keyed.set(c.dataset.key, c);
  let cur = a.firstChild;
  for (let bc = b.firstChild; bc;) {
    const next = bc.nextSibling;
    const key = bc.nodeType === 1 ? bc.dataset.key : undefined;
    let match = null;
    if (key != null) {
      match = keyed.get(key) || null;
      if (match && match.tagName !== bc.tagName) match = null;
      if (match) keyed.delete(key);
    } else if (cur && sameKind(cur, bc)) {
      match = cur;
    }
    if (match) {
      if (match === cur) cur = cur.nextSibling;
      else a.insertBefore(match, cur);
      morphNode(match, bc);
    } else {
      a.insertBefore(bc, cur);
    }
    bc = next;
  }
  while (cur) {
    const n = cur.nextSibling;
    cur.remove();
    cur = n;
  }
}

function morphNode(x, y) {
  if (x.nodeType !== 1) {
    if (x.nodeValue !== y.nodeValue) x.nodeValue = y.nodeValue;
    return;
  }
  for (const at of Array.from(x.attributes)) {
    if (y.hasAttribute(at.name)) continue;
    if (at.name === 'open' && x.tagName === 'DETAILS') continue;   // the user's
    if (at.name === 'style') x.style.cssText = '';
    else x.removeAttribute(at.name);
  }
  for (const at of Array.from(y.attributes)) {
    if (x.getAttribute(at.name) === at.value) continue;
    if (at.name === 'open' && x.tagName === 'DETAILS') continue;
    // a style attribute is set through the CSSOM: the policy (style-src 'self') refuses setAttribute
    if (at.name === 'style') x.style.cssText = y.style.cssText;
    else x.setAttribute(at.name, at.value);
  }
  if (x.dataset.static != null) return;   // its children are its own (a form the user fills)
  morphChildren(x, y);
}

// One listener on root for the clicks on its elements with data-action: fn(action, element, event).
export function on(root, fn) {
  root.addEventListener('click', (ev) => {
    const t = ev.target.closest('[data-action]');
    if (!t || !root.contains(t) || t.disabled) return;
    ev.preventDefault();
    fn(t.dataset.action, t, ev);
  });
}

// ---- formats --------------------------------------------------------------------------------

const pad = (n, w = 2) => String(n).padStart(w, '0');

// epoch ms as local "2026-11-28 09:54:05" (what the user's clock says), '-' for none
export function fmtTime(ms) {
  if (ms == null) return '-';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// "12 s ago", "in 3 min", "5 h ago"
export function ago(ms, now = Date.now()) {
  if (ms == null) return '';
  const s = Math.round((ms - now) / 1000), a = Math.abs(s);
  const w = a < 60 ? `${a} s` : a < 3600 ? `${Math.round(a / 60)} min` : a < 86400 * 2 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
  return s > 0 ? `in ${w}` : `${w} ago`;
}

// a time with its distance from now, in an element whose title is the exact time
export function when(ms) {
  if (ms == null) return h('span', { class: 'muted' }, '-');
  return h('time', { datetime: new Date(ms).toISOString(), title: fmtTime(ms) }, `${fmtTime(ms)} (${ago(ms)})`);
}

export function fmtDuration(ms) {
  if (ms == null) return '-';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

export const HEALTH = ['FAILING', 'CRASHED', 'LATE', 'SHARDING_FLAG', 'DISABLED', 'OK'];
export const healthRank = (w) => {
  const i = HEALTH.indexOf(w);
  return i < 0 ? HEALTH.length : i;
};

export function badge(word, kind = 'h') {
  const w = word || 'UNKNOWN';
  return h('span', { class: `badge ${kind}-${w.toLowerCase()}` }, w);
}

export function outcomeBadge(o) {
  return h('span', { class: `badge o-${o || 'none'}` }, o || '-');
}

// "0" -> "0 items", 1 -> "1 item"
export const plural = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;

export const enc = encodeURIComponent;

// the query of a hash route ("#/jobs?q=a&health=OK") as an object
export function parseQuery(s) {
  const o = {};
  for (const [k, v] of new URLSearchParams(s || '')) o[k] = v;
  return o;
}

export function queryString(o) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v != null && v !== '') p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}
