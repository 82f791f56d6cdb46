// console/workflows.js: the workflows (dependsOn; docs/config.md "Workflows"). #/workflows lists
// them (GET /api/v1/workflows): each root, its jobs, and its latest run's state. #/workflows/ROOT
// draws the workflow as an SVG made here (no library): one box per job, laid out by depth from the
// root, left to right, an arrow from each job to each job that runs after it, every box coloured by
// the job's state in the run shown (waiting grey, running blue, ok green, failed red, skipped dashed);
// below it that run's jobs and the latest runs (GET /api/v1/workflows/{root}/runs, `ejobctl runs
// ROOT --json`), the newest shown until a run is chosen. Every 5 s.

import * as api from './api.js';
import { h, morph, on, fmtTime, ago, enc, plural } from './dom.js';

const STATES = ['waiting', 'running', 'ok', 'failed', 'skipped'];
const ms = (iso) => (iso ? Date.parse(iso) : null);
const t = (iso) => (iso ? h('time', { datetime: iso, title: iso }, fmtTime(ms(iso))) : h('span', { class: 'muted' }, '-'));

function runBadge(state) {
  return h('span', { class: `badge wf-b-${state || 'none'}`, 'data-state': state || 'none' }, state || 'no run');
}

function loadError(el, e) {
  if (e.status !== 401) morph(el, h('div', null, h('p', { class: 'error' }, e.error)));
}

// ---- #/workflows ---------------------------------------------------------------------------------

export const list = {
  mount(root) {
    const body = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
    root.append(h('h1', null, 'Workflows'),
      h('p', { class: 'sub' }, 'Jobs joined by dependsOn: each fire of the root is a run of its workflow.'),
      h('section', { class: 'card', 'aria-label': 'Workflows' }, body));
    let alive = true;
    async function refresh() {
      let r;
      try {
        r = await api.get('/api/v1/workflows');
      } catch (e) {
        if (alive) loadError(body, e);
        throw e;
      }
      const wfs = r.data.workflows;
      // each one's latest run (the first 50: a namespace has few workflows)
      const latest = await Promise.all(wfs.slice(0, 50).map((w) => api.get(`/api/v1/workflows/${enc(w.root)}/runs?limit=1`)
        .then((x) => x.data.runs[0] || null, () => undefined)));
      if (!alive) return;
      if (!wfs.length) {
        morph(body, h('div', null, h('p', { class: 'muted' }, 'No workflow: no job has dependsOn.')));
        return;
      }
      morph(body, h('div', null, h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'wf-list' },
        h('thead', null, h('tr', null, ['Root', 'Jobs', 'Latest run', 'Started'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', null, wfs.map((w, i) => {
          const run = latest[i];
          return h('tr', { 'data-key': w.root, 'data-root': w.root },
            h('th', { scope: 'row' }, h('a', { href: `#/workflows/${enc(w.root)}` }, w.root)),
            h('td', null, `${w.jobs.join(', ')} `, h('span', { class: 'muted' }, `(${plural(w.jobs.length, 'job')})`)),
            h('td', null, run === undefined ? h('span', { class: 'muted' }, '?') : run ? [runBadge(run.state), run.why ? h('span', { class: 'c-reason' }, ` ${run.why}`) : null] : h('span', { class: 'muted' }, 'none yet')),
            h('td', null, run ? [fmtTime(ms(run.started)), h('span', { class: 'muted' }, ` (${ago(ms(run.started))})`)] : '-'));
        }))))));
    }
    return { refresh, every: 5000, unmount() { alive = false; } };
  },
};

// ---- the graph ---------------------------------------------------------------------------------

const NW = 156, NH = 46, GX = 64, GY = 18, PAD = 12;

// each job's box: column by depth (the longest path from the root); in a column, by the mean row of
// the jobs it runs after (fewer crossed arrows), then by name
function layout(jobs) {
  const depth = new Map();
  for (const j of jobs) {   // the document's order is topological: upstreams first
    const d = j.dependsOn.filter((u) => depth.has(u)).map((u) => depth.get(u) + 1);
    depth.set(j.name, d.length ? Math.max(...d) : 0);
  }
  const cols = [];
  for (const j of jobs) (cols[depth.get(j.name)] ||= []).push(j);
  const row = new Map();
  for (const col of cols) {
    const key = (j) => {
      const r = j.dependsOn.filter((u) => row.has(u)).map((u) => row.get(u));
      return r.length ? r.reduce((a, b) => a + b, 0) / r.length : 0;
    };
    col.sort((a, b) => key(a) - key(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    col.forEach((j, i) => row.set(j.name, i));
  }
  const tall = Math.max(...cols.map((c) => c.length));
  const at = new Map();
  cols.forEach((col, d) => col.forEach((j, i) => {
    // a shorter column centred beside the tallest
    at.set(j.name, { x: PAD + d * (NW + GX), y: PAD + i * (NH + GY) + ((tall - col.length) * (NH + GY)) / 2 });
  }));
  return { at, w: 2 * PAD + cols.length * NW + (cols.length - 1) * GX, h: 2 * PAD + tall * NH + (tall - 1) * GY };
}

const cut = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function jobLine(s) {
  if (!s) return 'no run';
  if (s.items != null && (s.state === 'running' || s.state === 'failed' || s.state === 'ok')) return `${s.state} ${s.done}/${s.items}`;
  return s.state;
}

function graph(doc, run) {
  const { at, w, h: ht } = layout(doc.jobs);
  const edges = [];
  for (const j of doc.jobs) {
    for (const u of j.dependsOn) {
      const a = at.get(u), b = at.get(j.name);
      if (!a || !b) continue;
      const x1 = a.x + NW, y1 = a.y + NH / 2, x2 = b.x - 3, y2 = b.y + NH / 2, mx = (x1 + x2) / 2;
      edges.push(h('svg:path', { class: 'wf-edge', 'data-from': u, 'data-to': j.name, d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, 'marker-end': 'url(#wf-arrow)' }));
    }
  }
  const nodes = doc.jobs.map((j) => {
    const p = at.get(j.name), s = run ? run.jobs[j.name] : null;
    const state = s ? s.state : 'none';
    const tip = `${j.name}: ${jobLine(s)}${s && s.why ? ` (${s.why})` : ''}${s && s.failed.length ? ` (item ${s.failed[0].item}: ${s.failed[0].cause})` : ''}`;
    return h('svg:a', { href: `#/jobs/${enc(j.name)}`, class: `wf-node wf-${state}`, 'data-job': j.name, 'data-state': state, 'data-key': j.name },
      h('svg:title', null, tip),
      h('svg:rect', { x: p.x, y: p.y, width: NW, height: NH, rx: 7 }),
      h('svg:text', { class: 'wf-name', x: p.x + 10, y: p.y + 19 }, cut(j.name, 19)),
      h('svg:text', { class: 'wf-state', x: p.x + 10, y: p.y + 36 }, jobLine(s)));
  });
  const label = `Workflow ${doc.root}: ${plural(doc.jobs.length, 'job')}${run ? `, run ${run.run} ${run.state}` : ', no run yet'}`;
  return h('svg:svg', { class: 'wf', id: 'wf-graph', viewBox: `0 0 ${w} ${ht}`, width: w, height: ht, role: 'img', 'aria-label': label, 'data-run': run ? run.run : '' },
    h('svg:title', null, label),
    h('svg:defs', null, h('svg:marker', { id: 'wf-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      h('svg:path', { class: 'wf-arrowhead', d: 'M0,0 L10,5 L0,10 z' }))),
    edges, nodes);
}

function legend() {
  return h('p', { class: 'wf-legend' }, STATES.map((s) => h('span', { class: `wf-key wf-${s}` }, h('span', { class: 'wf-swatch', 'aria-hidden': 'true' }), s)));
}

function jobsTable(doc, run) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'wf-jobs' },
    h('thead', null, h('tr', null, ['Job', 'State', 'Items', 'Fired', 'Ended', 'Why'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, doc.jobs.map((j) => {
      const s = run.jobs[j.name];
      const why = s.failed.length ? s.failed.map((f) => `item ${f.item} on ${f.instance}: ${f.cause}`).join('; ') : s.why;
      return h('tr', { 'data-key': j.name, 'data-job': j.name, 'data-state': s.state, class: s.state === 'failed' ? 'bad' : null },
        h('th', { scope: 'row' }, h('a', { href: `#/jobs/${enc(j.name)}` }, j.name)),
        h('td', null, runBadge(s.state)),
        h('td', { class: 'c-num' }, s.items != null ? `${s.done}/${s.items}` : '-'),
        h('td', null, t(s.started)),
        h('td', null, t(s.ended)),
        h('td', null, why || ''));
    }))));
}

function runsTable(doc, shown) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'wf-runs' },
    h('thead', null, h('tr', null, ['Run', 'Started', 'State', 'Why'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, doc.runs.map((r) => h('tr', { 'data-key': r.run, 'data-run': r.run, 'data-state': r.state, class: r.run === shown ? 'wf-shown' : null, 'aria-current': r.run === shown ? 'true' : null },
      h('th', { scope: 'row' }, h('button', { type: 'button', class: 'link mono', 'data-action': 'show', 'data-run': r.run, 'aria-pressed': String(r.run === shown) }, r.run)),
      h('td', null, fmtTime(ms(r.started)), h('span', { class: 'muted' }, ` (${ago(ms(r.started))})`)),
      h('td', null, runBadge(r.state)),
      h('td', null, r.why || ''))))));
}

// ---- #/workflows/ROOT --------------------------------------------------------------------------

export const workflow = {
  mount(root, ctx) {
    const name = ctx.params[0];
    const path = `/api/v1/workflows/${enc(name)}/runs?limit=10`;
    const head = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
    const pic = h('div', { class: 'wf-pic' });
    const shownEl = h('div');
    const runsEl = h('div');
    root.append(h('p', { class: 'crumbs' }, h('a', { href: '#/workflows' }, 'Workflows'), ' / '),
      h('h1', null, name), head,
      h('section', { class: 'card', id: 'wf-graph-card', 'aria-labelledby': 'wfg-h' }, h('h2', { id: 'wfg-h' }, 'Graph'), pic, legend(), shownEl),
      h('section', { class: 'card', id: 'wf-runs-card', 'aria-labelledby': 'wfr-h' }, h('h2', { id: 'wfr-h' }, 'Latest runs'), runsEl));
    let alive = true, doc = null, chosen = null;   // chosen: a run id the user clicked (null: the newest)

    function render() {
      const run = (chosen && doc.runs.find((r) => r.run === chosen)) || doc.runs[0] || null;
      morph(head, h('div', null, h('p', { class: 'status-line' }, run ? [chosen && run.run === chosen ? `Run ${run.run}: ` : 'Latest run: ', runBadge(run.state), run.why ? ` ${run.why}` : '', h('span', { class: 'muted' }, ` · started ${fmtTime(ms(run.started))} (${ago(ms(run.started))})`)] : h('span', { class: 'muted' }, `No run yet: a run starts at each fire of ${doc.root}.`))));
      morph(pic, h('div', null, graph(doc, run)));
      morph(shownEl, h('div', null, run ? [h('h3', { class: 'wf-h3' }, `Run ${run.run}`, chosen && run.run === chosen ? ' ' : null,
        chosen && run.run === chosen ? h('button', { type: 'button', class: 'link', 'data-action': 'latest' }, 'show the newest') : null), jobsTable(doc, run)] : null));
      morph(runsEl, h('div', null, doc.runs.length ? runsTable(doc, run ? run.run : null) : h('p', { class: 'muted' }, 'None yet.')));
    }

    async function refresh() {
      let r;
      try {
        r = await api.get(path);
      } catch (e) {
        if (!alive) return;
        if (!doc || e.status === 404 || e.status === 400) {
          morph(head, h('div', null, h('p', { class: 'error' }, e.error), e.status === 400 || e.status === 404 ? h('p', null, h('a', { href: '#/workflows' }, 'Every workflow')) : null));
          morph(pic, h('div'));
          morph(shownEl, h('div'));
          morph(runsEl, h('div'));
          doc = null;
        }
        throw e;
      }
      if (!alive) return;
      doc = r.data;
      render();
    }
    const pick = (action, el) => {
      if (!doc) return;
      chosen = action === 'show' ? el.dataset.run : null;
      render();
    };
    on(runsEl, pick);
    on(shownEl, pick);
    return { refresh, every: 5000, unmount() { alive = false; } };
  },
};
