// console/chart.js: a job's runs over time as a plain SVG made here (no charting library): one dot
// per execution at its start (x) and duration (y; logarithmic when they spread over more than 100x),
// coloured by outcome, each with its own tooltip; running ones (no duration yet) along the bottom.

import { h, fmtTime, fmtDuration } from './dom.js';

const W = 640, H = 180, L = 56, R = 12, T = 12, B = 28;

function ticksLog(lo, hi) {
  const t = [];
  for (let p = Math.floor(Math.log10(lo)); p <= Math.ceil(Math.log10(hi)); p++) t.push(10 ** p);
  return t;
}

function ticksLin(hi) {
  const step = 10 ** Math.floor(Math.log10(hi / 2 || 1));
  const n = hi / step > 8 ? step * 2 : step;
  const t = [];
  for (let v = 0; v <= hi * 1.0001; v += n) t.push(v);
  return t;
}

// rows: the history's rows (startMs, completeMs, outcome, shardingItem, ip)
export function outcomeChart(rows, title) {
  const pts = rows.filter((r) => r.startMs != null);
  const counts = { ok: 0, failed: 0, running: 0 };
  for (const r of pts) counts[r.outcome] = (counts[r.outcome] || 0) + 1;
  const label = `${title}: ${pts.length} runs, ${counts.ok} ok, ${counts.failed} failed, ${counts.running} running`;
  if (!pts.length) return h('p', { class: 'muted' }, 'No run to chart.');
  const durs = pts.filter((r) => r.completeMs != null).map((r) => Math.max(1, r.completeMs - r.startMs));
  const x0 = Math.min(...pts.map((r) => r.startMs)), x1 = Math.max(...pts.map((r) => r.startMs));
  const dlo = durs.length ? Math.min(...durs) : 1, dhi = durs.length ? Math.max(...durs) : 1000;
  const log = dhi / dlo > 100;
  const ylo = log ? 10 ** Math.floor(Math.log10(dlo)) : 0, yhi = log ? 10 ** Math.ceil(Math.log10(dhi)) : dhi * 1.1 || 1;
  const px = (ms) => L + (x1 === x0 ? (W - L - R) / 2 : ((ms - x0) / (x1 - x0)) * (W - L - R));
  const py = (d) => {
    const f = log ? (Math.log10(d) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo)) : (d - ylo) / (yhi - ylo);
    return T + (1 - Math.max(0, Math.min(1, f))) * (H - T - B);
  };
  const grid = (log ? ticksLog(ylo, yhi) : ticksLin(yhi)).map((v) => h('svg:g', { class: 'tick' },
    h('svg:line', { x1: L, x2: W - R, y1: py(v || ylo), y2: py(v || ylo) }),
    h('svg:text', { x: L - 6, y: py(v || ylo) + 4, 'text-anchor': 'end' }, fmtDuration(Math.round(v)))));
  const dots = pts.map((r) => {
    const d = r.completeMs != null ? Math.max(1, r.completeMs - r.startMs) : null;
    const tip = `${fmtTime(r.startMs)} item ${r.shardingItem} on ${r.ip}: ${r.outcome}${d != null ? ` in ${fmtDuration(d)}` : ' (running)'}`;
    return d != null
      ? h('svg:circle', { class: `dot o-${r.outcome}`, cx: px(r.startMs).toFixed(1), cy: py(d).toFixed(1), r: 3.5 }, h('svg:title', null, tip))
      : h('svg:path', { class: 'dot o-running', d: `M${px(r.startMs).toFixed(1)},${H - B - 1} l-4,-7 h8 z` }, h('svg:title', null, tip));
  });
  return h('figure', { class: 'chart' },
    h('svg:svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label, class: 'runs', preserveAspectRatio: 'xMidYMid meet' },
      h('svg:title', null, label),
      grid,
      h('svg:line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }),
      h('svg:text', { class: 'xl', x: L, y: H - 8 }, fmtTime(x0)),
      x1 !== x0 ? h('svg:text', { class: 'xl', x: W - R, y: H - 8, 'text-anchor': 'end' }, fmtTime(x1)) : null,
      dots),
    h('figcaption', null, h('span', { class: 'key o-ok' }, `● ok ${counts.ok}`), ' ', h('span', { class: 'key o-failed' }, `● failed ${counts.failed}`), ' ',
      h('span', { class: 'key o-running' }, `▼ running ${counts.running}`), h('span', { class: 'muted' }, ` · duration by start time${log ? ' (log scale)' : ''}`)));
}
