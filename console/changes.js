// console/changes.js: what the cluster did lately, from GET /api/v1/changes, asked with since= so
// that a poll brings only what is new, and kept for the tab's life (the last 200): health words
// changing, resharding, failovers, instances coming and going, disables, and every write made
// through serve (kind "audit", with its user). An older serve without the feed (404): the audit's
// last writes (GET /api/v1/audit), and a note saying so.

import * as api from './api.js';
import { h, fmtTime, ago, enc } from './dom.js';

const KEEP = 200;
const feed = { mode: null, next: null, items: [] };

const WORDS = {
  job_added: 'job added', job_removed: 'job removed', health: 'health', resharded: 'resharded',
  failover: 'failover', instance_up: 'instance up', instance_down: 'instance down', disabled: 'disabled',
  enabled: 'enabled', item_disabled: 'item disabled', item_enabled: 'item enabled', audit: 'write',
};

async function pollAudit() {
  const r = await api.get('/api/v1/audit?limit=30');
  const lines = Array.isArray(r.data) ? r.data : [];
  feed.items = lines.map((a) => ({
    seq: null, timeMs: Date.parse(a.time), kind: 'audit', user: a.user, job: null, item: null, instance: null,
    detail: `${a.method} ${a.path} (${a.status})`,
  }));
  return feed;
}

// the feed after one more poll: {mode: 'changes'|'audit', items (oldest first)}
export async function pollChanges() {
  if (feed.mode === 'audit') return pollAudit();
  const q = feed.next == null ? '?limit=100' : `?since=${feed.next}&limit=1000`;
  const r = await api.get(`/api/v1/changes${q}`, { allow: [404] });
  if (r.status === 404) {
    feed.mode = 'audit';
    return pollAudit();
  }
  feed.mode = 'changes';
  const d = r.data || {};
  // serve started again: its feed starts over
  if (feed.next != null && typeof d.next === 'number' && d.next < feed.next) feed.items = [];
  for (const c of d.changes || []) feed.items.push(c);
  if (feed.items.length > KEEP) feed.items.splice(0, feed.items.length - KEEP);
  if (typeof d.next === 'number') feed.next = d.next;
  return feed;
}

const from = (c) => (c.from != null || c.to != null ? `${c.from ?? '-'} → ${c.to ?? '-'}` : null);

function row(c, now) {
  return h('li', { class: `change k-${c.kind}`, 'data-key': c.seq != null ? `s${c.seq}` : `a${c.timeMs}${c.detail}` },
    h('time', { datetime: new Date(c.timeMs).toISOString(), title: fmtTime(c.timeMs) }, fmtTime(c.timeMs).slice(11), h('span', { class: 'muted' }, ` ${ago(c.timeMs, now)}`)),
    ' ', h('span', { class: `kind k-${c.kind}` }, WORDS[c.kind] || c.kind),
    c.job ? [' ', h('a', { href: `#/jobs/${enc(c.job)}` }, c.job)] : null,
    c.item != null ? ` item ${c.item}` : null,
    c.instance ? [' ', h('a', { href: `#/instances/${enc(c.instance)}`, class: 'mono' }, c.instance)] : null,
    c.kind === 'health' && from(c) ? [' ', h('strong', null, from(c))] : null,
    c.detail ? h('span', { class: 'detail' }, ` ${c.detail}`) : null,
    c.user ? h('span', { class: 'muted' }, ` by ${c.user}`) : null);
}

// the feed, newest first (at most max), as a list; with its note when it is the audit's
export function changesList(f, max = 50) {
  const now = Date.now();
  const items = f.items.slice(-max).reverse();
  return h('div', null,
    f.mode === 'audit' ? h('p', { class: 'note' }, 'This serve has no changes feed (GET /api/v1/changes): its last writes, from the audit, instead.') : null,
    items.length ? h('ol', { class: 'changes', reversed: true }, items.map((c) => row(c, now)))
      : h('p', { class: 'muted' }, f.mode === 'changes' ? 'Nothing changed since this serve started.' : 'No write yet.'));
}
