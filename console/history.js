// console/history.js: what ran, from PostgreSQL through the API (serve --pg): the search page
// (#/history?job=&item=&outcome=&ip=&since=&until=), paged with the API's cursor, each row's cause
// and the output its item printed last (ejob's sink writes it into failure_cause after "last
// output:"), and a chart of a job's outcomes and durations; and the short history on a job's page.
// Every job at once is GET /api/v1/history (an older serve without it: a job must be named).

import * as api from './api.js';
import { h, fill, morph, fmtTime, fmtDuration, outcomeBadge, enc, queryString } from './dom.js';
import { replaceQuery } from './ui.js';
import { outcomeChart } from './chart.js';

const OUT_SEP = '\nlast output:\n';

function cause(r) {
  const c = r.failureCause || '';
  const i = c.indexOf(OUT_SEP);
  return i < 0 ? { cause: c, output: '' } : { cause: c.slice(0, i), output: c.slice(i + OUT_SEP.length) };
}

export function rowsTable(rows, showJob = true) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'list hist' },
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Start'), showJob ? h('th', { scope: 'col' }, 'Job') : null, h('th', { scope: 'col' }, 'Item'),
      h('th', { scope: 'col' }, 'On'), h('th', { scope: 'col' }, 'Outcome'), h('th', { scope: 'col' }, 'Duration'), h('th', { scope: 'col' }, 'Source'),
      h('th', { scope: 'col' }, 'Cause and output'))),
    h('tbody', null, rows.map((r) => {
      const c = cause(r);
      return h('tr', { 'data-key': r.id, 'data-outcome': r.outcome, class: r.outcome === 'failed' ? 'bad' : null },
        h('td', { title: r.startTime }, fmtTime(r.startMs)),
        showJob ? h('td', null, h('a', { href: `#/jobs/${enc(r.jobName)}` }, r.jobName)) : null,
        h('td', { class: 'c-num' }, String(r.shardingItem)),
        h('td', { class: 'mono', title: r.hostname }, r.ip),
        h('td', null, outcomeBadge(r.outcome)),
        h('td', { class: 'c-num' }, r.completeMs != null ? fmtDuration(r.completeMs - r.startMs) : '-'),
        h('td', null, r.executionSource),
        h('td', { class: 'cause' }, c.cause || c.output
          ? h('details', null, h('summary', null, c.cause.split('\n')[0] || 'output'),
            c.cause.includes('\n') ? h('pre', { class: 'tail' }, c.cause) : null,
            c.output ? h('pre', { class: 'tail', 'aria-label': 'Output' }, c.output) : h('p', { class: 'muted' }, 'No output kept.'))
          : h('span', { class: 'muted' }, '-')));
    }))));
}

// epoch ms of a datetime-local value (the browser's zone), '' for none
const localMs = (v) => (v ? String(new Date(v).getTime()) : '');
const toLocal = (ms) => {
  if (!ms) return '';
  const d = new Date(Number(ms));
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
};

function unavailable(e) {
  if (e.status === 503) return h('p', { class: 'note', id: 'hist-off' }, `The history is not available: ${e.error}`, e.hint ? ` (${e.hint})` : '');
  return h('p', { class: 'error' }, e.error);
}

export function mount(root, ctx) {
  const q = ctx.query;
  const f = {};
  const field = (k, label, el) => {
    f[k] = el;
    el.id = `h-${k}`;
    return h('div', { class: 'field' }, h('label', { for: `h-${k}` }, label), el);
  };
  const jobsList = h('datalist', { id: 'h-jobs' });
  const form = h('form', { class: 'search', id: 'hist-form', role: 'search' },
    field('job', 'Job', h('input', { type: 'text', list: 'h-jobs', value: q.job || '', autocomplete: 'off', spellcheck: 'false', 'data-slash': '' })),
    field('item', 'Item', h('input', { type: 'number', min: 0, value: q.item || '' })),
    field('outcome', 'Outcome', h('select', null, ['', 'ok', 'failed', 'running'].map((o) => h('option', { value: o, selected: (q.outcome || '') === o }, o || 'any')))),
    field('ip', 'IP', h('input', { type: 'text', value: q.ip || '', autocomplete: 'off', spellcheck: 'false' })),
    field('since', 'Since', h('input', { type: 'datetime-local', value: toLocal(q.since) })),
    field('until', 'Until', h('input', { type: 'datetime-local', value: toLocal(q.until) })),
    field('limit', 'Rows a page', h('select', null, ['20', '50', '100', '200'].map((n) => h('option', { value: n, selected: (q.limit || '50') === n }, n)))),
    h('div', { class: 'buttons' }, h('button', { type: 'submit', class: 'primary', id: 'h-search' }, 'Search')), jobsList);
  const chart = h('div', { id: 'hist-chart' });
  const out = h('div', { id: 'hist-rows', 'aria-live': 'polite' });
  const pager = h('div', { class: 'pager' });
  root.append(h('h1', null, 'History'), form, chart, out, pager);
  let cursors = [], next = null, alive = true;

  api.jobs(60000).then((d) => fill(jobsList, d.jobs.slice(0, 5000).map((j) => h('option', { value: j.name })))).catch(() => {});

  function params() {
    return { job: f.job.value.trim(), item: f.item.value, outcome: f.outcome.value, ip: f.ip.value.trim(), since: localMs(f.since.value), until: localMs(f.until.value), limit: f.limit.value };
  }

  async function search(cursor) {
    const p = params();
    replaceQuery('/history', { ...p, limit: p.limit === '50' ? '' : p.limit });
    const { job, ...rest } = p;
    const qs = queryString({ ...rest, cursor: cursor || '' });
    fill(out, h('p', { class: 'muted' }, 'Searching…'));
    let r;
    try {
      r = await api.get(job ? `/api/v1/jobs/${enc(job)}/history${qs}` : `/api/v1/history${qs}`, { allow: job ? [] : [404] });
    } catch (e) {
      if (!alive) return;
      fill(out, unavailable(e));
      fill(pager);
      fill(chart);
      return;
    }
    if (!alive) return;
    if (r.status === 404) {
      fill(out, h('p', { class: 'note' }, 'This serve searches one job at a time (it has no GET /api/v1/history): name a job.'));
      fill(pager);
      return;
    }
    const d = r.data;
    next = d.next;
    fill(out, d.rows.length ? rowsTable(d.rows, !job) : h('p', { class: 'muted', id: 'hist-none' }, 'No run matches.'));
    const page = cursors.length + 1;
    fill(pager,
      h('button', { type: 'button', id: 'h-newer', disabled: !cursors.length, onclick: () => { cursors.pop(); search(cursors[cursors.length - 1]); } }, '← Newer'),
      h('span', { class: 'muted' }, ` page ${page}, ${d.rows.length} rows `),
      h('button', { type: 'button', id: 'h-older', disabled: !next, onclick: () => { cursors.push(next); search(next); } }, 'Older →'));
    if (job && !cursor) drawChart(job, rest);
  }

  async function drawChart(job, rest) {
    try {
      const r = await api.get(`/api/v1/jobs/${enc(job)}/history${queryString({ ...rest, limit: 500 })}`);
      if (alive) fill(chart, h('h2', null, `${job}: the last ${r.data.rows.length} runs`), outcomeChart(r.data.rows, `Runs of ${job}`));
    } catch {
      fill(chart);
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    cursors = [];
    fill(chart);
    search(null);
  });
  search(null);
  return { unmount() { alive = false; } };
}

// the short history on a job's page: its last 10 runs and the chart of its last 200, every 10 s
export function mountJobHistory(el, job) {
  const body = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
  el.append(body, h('p', null, h('a', { href: `#/history?job=${enc(job)}`, id: 'job-hist-link' }, `Search ${job}'s history`)));
  let at = 0, alive = true, busy = false;
  async function refresh() {
    if (busy || Date.now() - at < 10000) return;
    if (api.me.history === false) {
      at = Infinity;
      fill(body, h('p', { class: 'note', id: 'hist-off' }, 'No history: this serve has no PostgreSQL (ejobctl serve --pg URL, the database of the supervisors\' tracing).'));
      return;
    }
    busy = true;
    at = Date.now();
    try {
      const r = await api.get(`/api/v1/jobs/${enc(job)}/history?limit=200`);
      if (alive) morph(body, h('div', null, outcomeChart(r.data.rows, `Runs of ${job}`), rowsTable(r.data.rows.slice(0, 10), false)));
    } catch (e) {
      if (alive) fill(body, unavailable(e));
    } finally {
      busy = false;
    }
  }
  return { refresh, unmount() { alive = false; } };
}
