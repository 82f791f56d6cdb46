// console/jobs.js: every job in a table (#/jobs?q=TEXT&health=WORD&sort=KEY&dir=desc): a filter over
// name, type, cron and description, a health select, and sorting by every column. Only the rows in
// sight are in the page (virtual scrolling over the window's scroll: rows of one fixed height, a
// spacer above and below), so 10,000 jobs filter, sort and scroll without stalling. The filter and
// sort live in the hash's query (a link keeps them).

import * as api from './api.js';
import { h, morph, badge, ago, fmtTime, HEALTH, healthRank, enc } from './dom.js';
import { replaceQuery } from './ui.js';

const ROW = 37;        // px: a row's height (console.css .vt tr.row td), measured once rows show
const OVER = 12;       // rows rendered beyond the window, above and below

const COLS = [
  { key: 'name', label: 'Name', cls: 'c-name', val: (j) => j.name },
  { key: 'type', label: 'Type', cls: 'c-type', val: (j) => j.type || '' },
  { key: 'cron', label: 'Cron', cls: 'c-cron', val: (j) => j.cron || '' },
  { key: 'next', label: 'Next fire', cls: 'c-next', val: (j) => j.nextFireEpoch ?? Infinity },
  { key: 'items', label: 'Items', cls: 'c-num', val: (j) => j.shardingTotalCount ?? -1 },
  { key: 'instances', label: 'Instances', cls: 'c-num c-inst', val: (j) => j.instanceCount },
  { key: 'health', label: 'Health', cls: 'c-health', val: (j) => healthRank(j.health) },
  { key: 'success', label: 'Last success', cls: 'c-success', val: (j) => j.lastSuccessMs ?? -1 },
];

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// (index: its row's place in the whole table, for screen readers: only some rows are in the page)
function row(j, now, index) {
  return h('tr', { class: 'row', 'data-key': j.name, 'data-job': j.name, 'aria-rowindex': index },
    h('td', { class: 'c-name' }, h('a', { href: `#/jobs/${enc(j.name)}`, title: j.description || null }, j.name)),
    h('td', { class: 'c-type' }, j.type || '-'),
    h('td', { class: 'c-cron mono', title: j.timeZone ? `time zone ${j.timeZone}` : null }, j.cron || (j.configError ? 'bad config' : 'on trigger')),
    h('td', { class: 'c-next' }, j.nextFireEpoch ? h('span', { title: j.nextFire }, fmtTime(j.nextFireEpoch * 1000)) : h('span', { class: 'muted' }, j.cron ? 'never' : 'on trigger')),
    h('td', { class: 'c-num' }, j.shardingTotalCount ?? '-'),
    h('td', { class: 'c-num c-inst' }, String(j.instanceCount)),
    h('td', { class: 'c-health', title: j.healthReason || null }, badge(j.health)),
    h('td', { class: 'c-success' }, j.lastSuccessMs ? h('span', { title: fmtTime(j.lastSuccessMs) }, ago(j.lastSuccessMs, now)) : h('span', { class: 'muted' }, 'none known')));
}

export function mount(root, ctx) {
  const st = {
    q: ctx.query.q || '', health: ctx.query.health || '', sort: ctx.query.sort || 'health',
    dir: ctx.query.dir === 'desc' ? -1 : 1,
  };
  if (!COLS.some((c) => c.key === st.sort)) st.sort = 'health';
  let doc = api.jobsNow(), shown = [], alive = true, frame = 0, rowH = ROW, measured = false;

  const q = h('input', { type: 'search', id: 'jobs-q', value: st.q, placeholder: 'name, type, cron, description', 'data-slash': '', autocomplete: 'off', spellcheck: 'false' });
  const health = h('select', { id: 'jobs-health' }, h('option', { value: '' }, 'any health'),
    HEALTH.map((w) => h('option', { value: w, selected: st.health === w }, w)));
  const count = h('p', { class: 'count', id: 'jobs-count', role: 'status' });
  const head = h('tr', null);
  const body = h('tbody', null);
  const table = h('table', { class: 'vt', id: 'jobs-table', 'aria-describedby': 'jobs-count' }, h('thead', null, head), body);
  root.append(h('h1', null, 'Jobs'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      h('label', { for: 'jobs-q' }, 'Filter'), q, h('label', { for: 'jobs-health' }, 'Health'), health),
    count, h('div', { class: 'vt-wrap' }, table));

  function renderHead() {
    morph(head, h('tr', null, COLS.map((c) => {
      const on = st.sort === c.key;
      return h('th', { scope: 'col', class: c.cls, 'aria-sort': on ? (st.dir > 0 ? 'ascending' : 'descending') : 'none' },
        h('button', { type: 'button', class: 'sort', 'data-sort': c.key }, c.label, h('span', { class: 'arrow', 'aria-hidden': 'true' }, on ? (st.dir > 0 ? ' ▲' : ' ▼') : '')));
    })));
  }

  // the jobs that pass the filter, in the order asked
  function select() {
    if (!doc) return;
    const needle = st.q.trim().toLowerCase();
    const col = COLS.find((c) => c.key === st.sort);
    let list = doc.jobs;
    if (needle || st.health) {
      list = list.filter((j) => (!st.health || j.health === st.health) &&
        (!needle || j.name.toLowerCase().includes(needle) || (j.type || '').toLowerCase().includes(needle) ||
          (j.cron || '').toLowerCase().includes(needle) || (j.description || '').toLowerCase().includes(needle)));
    } else {
      list = list.slice();
    }
    const v = col.val;
    list.sort((a, b) => st.dir * cmp(v(a), v(b)) || cmp(a.name, b.name));
    shown = list;
    count.textContent = needle || st.health ? `${shown.length} of ${doc.jobs.length} jobs` : `${doc.jobs.length} jobs`;
    table.setAttribute('aria-rowcount', String(shown.length + 1));
  }

  // the rows in sight (and OVER more each way) between two spacers
  function renderRows() {
    frame = 0;
    if (!doc) return;
    const top = body.getBoundingClientRect().top;
    const first = Math.max(0, Math.floor(-top / rowH) - OVER);
    const last = Math.min(shown.length, Math.ceil((window.innerHeight - top) / rowH) + OVER);
    const now = Date.now();
    const rows = [];
    const above = h('tr', { class: 'spacer', 'data-key': ' above', 'aria-hidden': 'true' }, h('td', { colspan: COLS.length }));
    above.style.height = `${first * rowH}px`;
    rows.push(above);
    for (let i = first; i < last; i++) rows.push(row(shown[i], now, i + 2));
    if (!shown.length) rows.push(h('tr', { 'data-key': ' none' }, h('td', { colspan: COLS.length, class: 'muted' }, doc.jobs.length ? 'No job matches.' : 'No job in this namespace yet.')));
    const below = h('tr', { class: 'spacer', 'data-key': ' below', 'aria-hidden': 'true' }, h('td', { colspan: COLS.length }));
    below.style.height = `${Math.max(0, shown.length - Math.max(last, first)) * rowH}px`;
    rows.push(below);
    morph(body, h('tbody', null, rows));
    if (!measured && last > first) {
      // the rows' height as laid out (zoom, fonts): the spacers are counted in it
      const r = body.querySelector('tr.row');
      const got = r ? r.getBoundingClientRect().height : 0;
      measured = true;
      if (got > 0 && Math.abs(got - rowH) > 0.5) {
        rowH = got;
        renderRows();
      }
    }
  }

  function later() {
    if (!frame) frame = requestAnimationFrame(renderRows);
  }

  function apply() {
    replaceQuery('/jobs', { q: st.q, health: st.health, sort: st.sort !== 'health' ? st.sort : '', dir: st.dir < 0 ? 'desc' : '' });
    select();
    renderRows();
  }

  q.addEventListener('input', () => {
    st.q = q.value;
    apply();
  });
  health.addEventListener('change', () => {
    st.health = health.value;
    apply();
  });
  head.addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-sort]');
    if (!b) return;
    if (st.sort === b.dataset.sort) {
      st.dir = -st.dir;
    } else {
      st.sort = b.dataset.sort;
      st.dir = 1;
    }
    renderHead();
    apply();
  });
  window.addEventListener('scroll', later, { passive: true });
  window.addEventListener('resize', later);
  renderHead();
  if (doc) apply();
  else count.textContent = 'Loading…';

  async function refresh() {
    let d;
    try {
      d = await api.jobs();
    } catch (e) {
      if (alive && !doc && e.status !== 401) count.textContent = `Could not read the jobs: ${e.error}`;
      throw e;
    }
    if (!alive) return;
    if (d !== doc) {
      doc = d;
      select();
      renderRows();
    }
  }
  return {
    refresh,
    unmount() {
      alive = false;
      window.removeEventListener('scroll', later);
      window.removeEventListener('resize', later);
      if (frame) cancelAnimationFrame(frame);
    },
  };
}
