// console/overview.js: the cluster at a glance (#/): jobs by health, then the jobs themselves with
// the failing and late first (name, health, why, last success), the last failures with what their
// items printed last (jobs[].failing), the instances online per server, the leaders, and what
// changed lately. Polled: GET /api/v1/jobs every 2 s (the model renders once a second), the
// changes feed every 2 s, GET /api/v1/servers every 10 s (it reads ZooKeeper: dear on a big
// cluster: above 1,000 jobs on demand, then every minute). Each part is rendered in place (dom.js morph): scroll position and focus stay.

import * as api from './api.js';
import { h, morph, when, ago, badge, fmtTime, HEALTH, healthRank, plural, enc } from './dom.js';
import { pollChanges, changesList } from './changes.js';

const SHOW = 100;   // jobs listed here; the rest are on #/jobs
const BIG = 1000;   // jobs above which the servers are counted on demand
let marked = false; // performance.mark('ejob-overview-data'): once per page load (bench/console)

function section(id, title, extra) {
  return h('section', { class: 'card', id: `ov-${id}`, 'aria-labelledby': `ov-${id}-h` },
    h('h2', { id: `ov-${id}-h` }, title, extra || null), h('div', { class: 'body' }, h('p', { class: 'muted' }, 'Loading…')));
}

function tiles(doc) {
  const n = {};
  for (const w of HEALTH) n[w] = 0;
  for (const j of doc.jobs) n[j.health] = (n[j.health] || 0) + 1;
  return h('div', null, h('ul', { class: 'tiles' },
    h('li', { class: 'tile total' }, h('a', { href: '#/jobs' }, h('span', { class: 'n' }, String(doc.jobs.length)), h('span', { class: 'w' }, 'jobs'))),
    HEALTH.map((w) => h('li', { class: `tile t-${w.toLowerCase()}${n[w] ? '' : ' zero'}`, 'data-health': w },
      h('a', { href: `#/jobs?health=${w}` }, h('span', { class: 'n' }, String(n[w])), h('span', { class: 'w' }, w.replace('_', ' ')))))));
}

function jobsTable(doc) {
  const sorted = doc.jobs.slice().sort((a, b) => healthRank(a.health) - healthRank(b.health) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const shown = sorted.slice(0, SHOW);
  return h('div', null,
    h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'ov-jobs-table' },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Job'), h('th', { scope: 'col' }, 'Health'),
        h('th', { scope: 'col', class: 'c-reason' }, 'Why'), h('th', { scope: 'col' }, 'Last success'))),
      h('tbody', null, shown.map((j) => h('tr', { 'data-key': j.name, 'data-job': j.name, 'data-health': j.health },
        h('td', null, h('a', { href: `#/jobs/${enc(j.name)}` }, j.name)),
        h('td', null, badge(j.health)),
        h('td', { class: 'c-reason' }, j.healthReason || j.statusReason || ''),
        h('td', null, j.lastSuccessMs ? h('span', { title: fmtTime(j.lastSuccessMs) }, ago(j.lastSuccessMs)) : h('span', { class: 'muted' }, 'none known'))))))),
    sorted.length > SHOW ? h('p', { class: 'more' }, `${SHOW} of ${sorted.length} shown, the failing and late first: `, h('a', { href: '#/jobs' }, 'every job in Jobs')) : null,
    !sorted.length ? h('p', { class: 'muted' }, 'No job in this namespace yet.') : null);
}

// the error without the outcome its badge already says ("failed (exit 3)" -> "(exit 3)")
function cause(f) {
  const e = f.error || '';
  return f.outcome && e.startsWith(f.outcome) ? e.slice(f.outcome.length).trim() : e;
}

// jobs[].failing, newest first; an older serve without it: the jobs with failing items and why
function failures(doc) {
  const all = [];
  let known = false;
  for (const j of doc.jobs) {
    if (!Array.isArray(j.failing)) continue;
    known = true;
    for (const f of j.failing) all.push({ job: j.name, ...f });
  }
  if (!known) {
    const failing = doc.jobs.filter((j) => j.failingItems > 0).slice(0, 10);
    return h('div', null,
      h('p', { class: 'note' }, 'This serve does not give the failures\' output (jobs[].failing): their causes are on each job\'s page.'),
      failing.length ? h('ul', { class: 'fails' }, failing.map((j) => h('li', { 'data-key': j.name },
        h('a', { href: `#/jobs/${enc(j.name)}` }, j.name), ' ', badge(j.health), ' ', j.healthReason || '')))
        : h('p', { class: 'muted' }, 'No item failed at its last run.'));
  }
  all.sort((a, b) => (b.endMs || 0) - (a.endMs || 0));
  if (!all.length) return h('div', null, h('p', { class: 'muted' }, 'No item failed at its last run.'));
  return h('div', null, h('ul', { class: 'fails' }, all.slice(0, 10).map((f) => h('li', { 'data-key': `${f.job}/${f.item}`, 'data-job': f.job, 'data-item': f.item },
    h('p', { class: 'what' }, h('a', { href: `#/jobs/${enc(f.job)}` }, f.job), ` item ${f.item} `, h('span', { class: 'badge o-failed' }, f.outcome || 'failed'),
      ' ', h('span', { class: 'err-text' }, cause(f)),
      h('span', { class: 'muted' }, ` ${f.consecutiveFailures > 1 ? `${f.consecutiveFailures} in a row, ` : ''}${f.endMs ? ago(f.endMs) : ''}${f.instance ? ` on ${f.instance}` : ''}`)),
    f.tail ? h('pre', { class: 'tail', 'aria-label': `Output of ${f.job} item ${f.item}` }, f.tail) : h('p', { class: 'muted' }, 'It printed nothing.')))),
  all.length > 10 ? h('p', { class: 'more' }, `10 of ${all.length} failing items shown: `, h('a', { href: '#/jobs?health=FAILING' }, 'the failing jobs')) : null);
}

function leaders(doc) {
  const by = new Map();
  let none = 0;
  for (const j of doc.jobs) {
    if (!j.leader) none++;
    else by.set(j.leader, (by.get(j.leader) || 0) + 1);
  }
  const list = [...by.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return h('div', null,
    none ? h('p', { class: 'warn-text', 'data-key': 'none' }, `${plural(none, 'job')} without a leader (no instance online, or an election under way)`) : null,
    list.length ? h('ul', { class: 'plain' }, list.slice(0, 12).map(([id, n]) => h('li', { 'data-key': id },
      h('a', { href: `#/instances/${enc(id)}`, class: 'mono' }, id), ` leads ${plural(n, 'job')}`))) : null,
    list.length > 12 ? h('p', { class: 'more' }, `and ${list.length - 12} more instances`) : null);
}

function serversPart(s) {
  if (!s) return h('div', null, h('p', { class: 'muted' }, 'Loading…'));
  if (!s.servers.length) return h('div', null, h('p', { class: 'muted' }, 'No server has a job.'));
  return h('div', null, h('ul', { class: 'servers' }, s.servers.map((v) => h('li', { 'data-key': v.ip, 'data-server': v.ip, class: v.instancesNum ? '' : 'down' },
    h('a', { href: `#/servers/${enc(v.ip)}` }, v.ip), ' ',
    h('span', { class: v.instancesNum ? 'ok-text' : 'warn-text' }, `${plural(v.instancesNum, 'instance')} online`),
    h('span', { class: 'muted' }, `, ${plural(v.jobsNum, 'job')}${v.disabledJobsNum ? ` (${v.disabledJobsNum} disabled)` : ''}`)))));
}

export function mount(root) {
  const sub = h('p', { class: 'sub' });
  root.append(h('h1', null, 'Overview'), sub,
    h('div', { id: 'ov-tiles', 'aria-label': 'Jobs by health' }, h('p', { class: 'muted' }, 'Loading…')),
    h('div', { class: 'grid' },
      section('jobs', 'Jobs, failing and late first'),
      h('div', { class: 'side' },
        section('fails', 'Last failures'),
        section('servers', 'Instances online per server'),
        section('leaders', 'Leaders'),
        section('changes', 'What changed'))));
  const part = (id) => root.querySelector(`#ov-${id} .body`);
  const srv = { doc: null, at: 0, err: null, busy: false, asked: false, shown: false };
  let alive = true;

  // the jobs' parts as soon as the jobs came (the feed and the servers do not hold them up)
  function showJobs(doc) {
    if (!alive) return;
    morph(root.querySelector('#ov-tiles'), h('div', null, tiles(doc)));
    morph(part('jobs'), jobsTable(doc));
    morph(part('fails'), failures(doc));
    morph(part('leaders'), leaders(doc));
    sub.textContent = `Namespace /${doc.namespace}: ${plural(doc.jobs.length, 'job')}${api.me.zookeeper ? ` on ZooKeeper ${api.me.zookeeper}` : ''}. Updated ${fmtTime(Date.now()).slice(11)}.`;
    if (!marked) {
      marked = true;
      performance.mark('ejob-overview-data');
    }
    servers(doc.jobs.length);
  }

  // the servers: every 10 s, not waited for; on a big cluster only when asked (serve reads every
  // job's nodes for it, seconds at 10,000 jobs, holding its session from other requests), then
  // every minute
  function servers(njobs) {
    const big = njobs > BIG;
    if (big && !srv.asked) {
      if (srv.shown) return;
      srv.shown = true;
      const b = h('button', { type: 'button', id: 'ov-servers-load' }, 'Count instances per server');
      b.addEventListener('click', () => {
        srv.asked = true;
        morph(part('servers'), h('div', null, h('p', { class: 'muted' }, 'Counting…')));
        servers(njobs);
      });
      morph(part('servers'), h('div', null, h('p', { class: 'muted' }, `With ${njobs} jobs, counted when asked: serve reads every job's nodes for it.`), b));
      return;
    }
    if (srv.busy || Date.now() - srv.at < (big ? 60000 : 10000)) return;
    srv.busy = true;
    api.get('/api/v1/servers').then((r) => { srv.doc = r.data; srv.err = null; }, (e) => { srv.err = e; })
      .finally(() => {
        srv.busy = false;
        srv.at = Date.now();
        if (alive) morph(part('servers'), srv.err ? h('div', null, h('p', { class: 'error' }, srv.err.error)) : serversPart(srv.doc));
      });
  }

  async function refresh() {
    await Promise.all([
      api.jobs().then(showJobs, (e) => {
        if (alive && e.status !== 401) sub.textContent = `Could not read the jobs: ${e.error}`;
      }),
      pollChanges().then((feed) => alive && morph(part('changes'), changesList(feed)), (e) => {
        if (alive && e.status && e.status !== 401) morph(part('changes'), h('div', null, h('p', { class: 'error' }, e.error)));
      }),
    ]);
  }
  return { refresh, unmount: () => { alive = false; } };
}
