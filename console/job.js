// console/job.js: one job (#/jobs/NAME): its status and health, its items (owner, state, last run
// and when, failures in a row, failover, disabled, and what a failed item printed last), the
// operations its user's role allows (trigger with a parameter, disable/enable, per item, shutdown and
// remove after a confirmation), its config (config.js: shown; edited by admins) and its history.
// GET /api/v1/jobs/{job} every 2 s (ZooKeeper's state, as `ejobctl status --json`).

import * as api from './api.js';
import { h, fill, morph, on, when, ago, badge, outcomeBadge, fmtTime, plural, enc } from './dom.js';
import { flash, flashError } from './ui.js';
import { confirmDialog } from './dialog.js';
import { mountConfig } from './config.js';
import { mountJobHistory } from './history.js';

const ipOf = (id) => (id || '').split('@-@')[0];

// the last fire's outcome from its own items' records: failed if any item of that fire did not end
// ok (d.lastOutcome is only the outcome of whichever execution ended last: an ok item ending after a
// failed one of the same fire would show the fire as ok)
function fireOutcome(d) {
  const runs = (d.items || []).map((it) => it.last).filter((l) => l && l.fireId === d.lastFireMs);
  if (!runs.length) return d.lastOutcome;
  const bad = runs.find((l) => l.outcome !== 'ok' && l.outcome !== 'cancelled');
  return bad ? bad.outcome : runs.every((l) => l.outcome === 'ok') ? 'ok' : runs[0].outcome;
}

function summary(d) {
  const dd = (k, v) => [h('dt', null, k), h('dd', { 'data-k': k }, v)];
  return h('dl', { class: 'summary' },
    dd('Cron', d.cron ? [h('code', null, d.cron), d.timeZone ? ` (${d.timeZone})` : ''] : d.configError ? h('span', { class: 'error' }, d.configError) : 'none: runs when triggered'),
    dd('Next fire', h('span', { id: 'job-next', 'data-epoch': d.nextFireEpoch ?? '' }, d.nextFireEpoch ? [fmtTime(d.nextFireEpoch * 1000), h('span', { class: 'muted' }, ` (${ago(d.nextFireEpoch * 1000)})`)] : d.cron ? 'never' : 'on trigger')),
    dd('Items', [`${d.shardingTotalCount ?? '-'}`, h('span', { class: 'muted' }, ` ${d.jobShardingStrategyType || ''}`)]),
    dd('Failover, misfire', `${d.failover ? 'on' : 'off'}, ${d.misfire ? 'on' : 'off'}`),
    dd('Leader', d.leader ? h('a', { href: `#/instances/${enc(d.leader)}`, class: 'mono' }, d.leader) : h('span', { class: 'warn-text' }, 'none')),
    dd('Instances online', d.instances.length ? d.instances.map((id, i) => [i ? ', ' : '', h('a', { href: `#/instances/${enc(id)}`, class: 'mono' }, id)]) : h('span', { class: 'warn-text' }, 'none')),
    dd('Last fire', h('span', { id: 'job-last-fire', 'data-ms': d.lastFireMs ?? '' }, d.lastFireMs ? [fmtTime(d.lastFireMs), ' ', outcomeBadge(fireOutcome(d))] : 'none known')),
    dd('Last success', when(d.lastSuccessMs)),
    dd('Epoch', d.epoch ? [h('code', null, d.epoch), d.reshardingDue ? ' (resharding due)' : ''] : 'never sharded'),
    d.jobParameter ? dd('Job parameter', h('code', null, d.jobParameter)) : null,
    d.description ? dd('Description', d.description) : null);
}

function stateWord(it) {
  if (it.state === 'failover' && it.failover) return `failover to ${it.failover}`;
  if (it.state === 'failover-queued') return it.failovering ? `failover queued (to ${it.failovering})` : 'failover queued';
  const flags = [];
  if (it.state !== 'misfire' && it.misfire) flags.push('misfire');
  if (it.state !== 'disabled' && it.disabled) flags.push('disabled');
  return [it.state, ...flags].join(', ');
}

function lastRun(it, d) {
  const l = it.last;
  if (!l) return h('span', { class: 'muted' }, 'never ran');
  const skipped = it.disabled && d.lastFireMs && l.fireId < d.lastFireMs;
  return h('span', { class: 'last', 'data-fire': l.fireId, 'data-outcome': l.outcome },
    outcomeBadge(l.outcome), ' ', h('span', { title: `fire ${fmtTime(l.fireId)}, ended ${fmtTime(l.endMs)}` }, fmtTime(l.endMs)),
    h('span', { class: 'muted' }, ` ${ago(l.endMs)}${l.instance ? ` on ${l.instance}` : ''}${l.attempt > 1 ? `, attempt ${l.attempt}` : ''}${l.source && l.source !== 'NORMAL_TRIGGER' ? `, ${l.source}` : ''}`),
    skipped ? h('span', { class: 'skipped' }, ` skipped since (disabled): the last fire was ${fmtTime(d.lastFireMs)}`) : null);
}

function items(d, canOp) {
  const cols = ['Item', 'Parameter', 'Owner', 'State', 'Last run', 'Failures in a row', 'Failover', 'Disabled'];
  const rows = [];
  for (const it of d.items) {
    const l = it.last;
    const bad = l && l.outcome !== 'ok';
    rows.push(h('tr', { 'data-key': `i${it.item}`, 'data-item': it.item, 'data-state': it.state, class: bad ? 'bad' : null },
      h('th', { scope: 'row' }, String(it.item)),
      h('td', null, it.parameter ?? h('span', { class: 'muted' }, '-')),
      h('td', null, it.owner ? [h('a', { href: `#/instances/${enc(it.owner)}`, class: 'mono' }, it.owner), it.ownerOnline ? '' : h('span', { class: 'warn-text' }, ' (offline)')] : h('span', { class: 'muted' }, 'none')),
      h('td', { class: `state s-${it.state}` }, stateWord(it)),
      h('td', null, lastRun(it, d)),
      h('td', { class: 'c-num' }, l ? String(l.consecutiveFailures) : '-'),
      h('td', null, it.failover ? h('span', { class: 'mono' }, it.failover) : it.failoverQueued ? 'queued' : '-'),
      h('td', null, it.disabled ? h('strong', null, 'yes') : 'no'),
      canOp ? h('td', { class: 'act' }, h('button', {
        type: 'button', class: 'small', 'data-action': it.disabled ? 'item-enable' : 'item-disable', 'data-item': it.item,
      }, `${it.disabled ? 'Enable' : 'Disable'} item ${it.item}`)) : null));
    if (bad && (l.error || l.tail)) {
      rows.push(h('tr', { 'data-key': `o${it.item}`, class: 'out' }, h('td', { colspan: cols.length + (canOp ? 1 : 0) },
        h('p', { class: 'err-text' }, `Item ${it.item}: ${l.error || l.outcome}`),
        l.tail ? h('pre', { class: 'tail', 'aria-label': `Output of item ${it.item}` }, l.tail) : h('p', { class: 'muted' }, 'It printed nothing.'))));
    }
  }
  return h('div', { class: 'table-wrap' }, h('table', { class: 'list items', id: 'job-items' },
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)), canOp ? h('th', { scope: 'col' }, h('span', { class: 'sr' }, 'Actions')) : null)),
    h('tbody', null, rows)));
}

// the operations, built once (what the user types stays); their targets follow the job
function operations(name) {
  const admin = api.can('admin');
  const param = h('input', { type: 'text', id: 'op-param', autocomplete: 'off', spellcheck: 'false', maxlength: 4096, placeholder: 'the job parameter of this fire' });
  const where = h('select', { id: 'op-where' }, h('option', { value: '' }, 'every server'));
  const force = h('input', { type: 'checkbox', id: 'op-force' });
  const el = h('section', { class: 'card ops', id: 'job-ops', 'aria-labelledby': 'ops-h' },
    h('h2', { id: 'ops-h' }, 'Operations'),
    h('form', { class: 'op-row', id: 'op-trigger-form' },
      h('label', { for: 'op-param' }, 'Parameter (optional)'), param,
      h('button', { type: 'submit', class: 'primary', id: 'op-trigger' }, 'Trigger now')),
    h('div', { class: 'op-row' },
      h('label', { for: 'op-where' }, 'On'), where,
      h('button', { type: 'button', 'data-action': 'disable', id: 'op-disable' }, 'Disable'),
      h('button', { type: 'button', 'data-action': 'enable', id: 'op-enable' }, 'Enable'),
      h('button', { type: 'button', 'data-action': 'shutdown', id: 'op-shutdown', class: 'danger' }, 'Shut down…')),
    admin ? h('div', { class: 'op-row' },
      h('button', { type: 'button', 'data-action': 'remove', id: 'op-remove', class: 'danger' }, 'Remove job…')) : null);
  return { el, param, where, force, name };
}

// the where select's choices: each server (ip) and each instance online
function setTargets(ops, d) {
  const ips = [...new Set([...d.instances.map(ipOf), ...d.items.map((i) => i.serverIp).filter(Boolean)])].sort();
  const want = ['', ...ips.map((i) => `server:${i}`), ...d.instances.map((i) => `instance:${i}`)];
  const have = [...ops.where.options].map((o) => o.value);
  if (want.join('\n') === have.join('\n')) return;
  const keep = ops.where.value;
  fill(ops.where, h('option', { value: '' }, 'every server'),
    ips.map((ip) => h('option', { value: `server:${ip}` }, `server ${ip}`)),
    d.instances.map((id) => h('option', { value: `instance:${id}` }, `instance ${id} (shutdown only)`)));
  ops.where.value = want.includes(keep) ? keep : '';
}

function wrote(r) {
  const w = (r.data && r.data.writes) || [];
  return w.map((x) => `${x.op} ${x.path}${x.data ? ` = ${x.data}` : ''}`).concat((r.data && r.data.warnings) || []);
}

export function mount(root, ctx) {
  const name = ctx.params[0];
  const base = `/api/v1/jobs/${enc(name)}`;
  const canOp = api.can('operator');
  const head = h('div', { class: 'job-head' });
  const sum = h('div');
  const itemsEl = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
  const ops = canOp ? operations(name) : null;
  const cfgEl = h('section', { class: 'card', id: 'job-config', 'aria-labelledby': 'cfg-h' }, h('h2', { id: 'cfg-h' }, 'Config'));
  const histEl = h('section', { class: 'card', id: 'job-history', 'aria-labelledby': 'hist-h' }, h('h2', { id: 'hist-h' }, 'History'));
  root.append(h('p', { class: 'crumbs' }, h('a', { href: '#/jobs' }, 'Jobs'), ' / '),
    h('h1', null, name), head,
    h('section', { class: 'card', 'aria-label': 'Status' }, sum),
    h('section', { class: 'card', id: 'job-items-card', 'aria-labelledby': 'items-h' }, h('h2', { id: 'items-h' }, 'Items'), itemsEl),
    ops ? ops.el : null,
    cfgEl, histEl);
  let doc = null, alive = true, gone = false;
  const cfg = mountConfig(cfgEl, { name, base, reload: () => refresh() });
  const hist = mountJobHistory(histEl, name);

  async function refresh() {
    let r;
    try {
      r = await api.get(base);
    } catch (e) {
      if (!alive) return;
      if (e.status === 404) {
        gone = true;
        morph(head, h('div', null, h('p', { class: 'error' }, e.error), h('p', null, h('a', { href: '#/jobs' }, 'Every job'))));
        return;
      }
      if (!doc && e.status !== 401) morph(head, h('div', null, h('p', { class: 'error' }, `Could not read the job: ${e.error}`)));
      throw e;
    }
    if (!alive) return;
    gone = false;
    doc = r.data;
    morph(head, h('div', null,
      h('p', { class: 'status-line' }, badge(doc.health), ' ', doc.healthReason || '', ' ',
        h('span', { class: 'muted' }, `${doc.type || ''} · status `), badge(doc.status, 's'), doc.statusReason ? h('span', { class: 'muted' }, ` ${doc.statusReason}`) : null,
        doc.disabled ? h('strong', null, ' · disabled in its config') : null)));
    morph(sum, h('div', null, summary(doc)));
    morph(itemsEl, h('div', null, items(doc, canOp)));
    if (ops) setTargets(ops, doc);
    cfg.update(doc, r.etag);
    hist.refresh();
  }

  async function op(what, method, path, body, done) {
    try {
      const r = await api.call(method, path, body ? { body } : {});
      flash(done, 'ok', wrote(r));
      api.forgetJobs();
      await refresh().catch(() => {});
      return r;
    } catch (e) {
      flashError(what, e);
      return null;
    }
  }

  if (ops) {
    ops.el.querySelector('#op-trigger-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const b = ops.el.querySelector('#op-trigger');
      b.disabled = true;
      const p = ops.param.value;
      await op(`Trigger ${name}`, 'POST', `${base}/trigger`, p ? { parameter: p } : null, `Triggered ${name}${p ? ` with parameter "${p}"` : ''}: its instances run it now.`);
      b.disabled = false;
    });
    on(ops.el, async (action, btn) => {
      const t = ops.where.value;
      const server = t.startsWith('server:') ? t.slice(7) : null, instance = t.startsWith('instance:') ? t.slice(9) : null;
      btn.disabled = true;
      try {
        if (action === 'disable' || action === 'enable') {
          if (instance) return flash('Disable and enable take a server or every server, not an instance: choose a server.', 'warn');
          await op(`${action} ${name}`, 'POST', `${base}/${action}`, server ? { server } : null, `${action === 'disable' ? 'Disabled' : 'Enabled'} ${name}${server ? ` on ${server}` : ''}.`);
        } else if (action === 'shutdown') {
          const target = instance ? `instance ${instance}` : server ? `server ${server}` : `every instance (${plural(doc ? doc.instances.length : 0, 'instance')} online)`;
          const yes = await confirmDialog({
            title: `Shut down ${name}?`, confirm: 'Shut down', danger: true,
            body: [h('p', null, `Job ${name} stops on ${target}: `, h('code', null, 'instances/'), ' nodes are deleted, and it does not run there again until its supervisor restarts.'),
              h('p', null, 'Items running now finish. Other jobs are not touched.')],
          });
          if (yes) await op(`Shut down ${name}`, 'POST', `${base}/shutdown`, instance ? { instance } : server ? { server } : null, `Shut down ${name} on ${target}.`);
        } else if (action === 'remove') {
          const force = h('label', { class: 'check' }, ops.force, ' Even with instances online or items running (force)');
          ops.force.checked = false;
          const yes = await confirmDialog({
            title: `Remove ${name}?`, confirm: 'Remove', danger: true, typeName: name, extra: force,
            body: [h('p', null, `Every node of job ${name} is deleted from ZooKeeper: its config, items, servers and instances. Supervisors that adopted it stop it; one that has it in its config file registers it again.`),
              h('p', null, 'Its history in PostgreSQL stays.')],
          });
          if (yes) {
            const r = await op(`Remove ${name}`, 'DELETE', `${base}${ops.force.checked ? '?force=true' : ''}`, null, `Removed ${name}.`);
            if (r) location.hash = '#/jobs';
          }
        }
      } finally {
        btn.disabled = false;
      }
    });
    on(itemsEl, async (action, btn) => {
      const i = btn.dataset.item;
      btn.disabled = true;
      const dis = action === 'item-disable';
      await op(`${dis ? 'Disable' : 'Enable'} item ${i}`, 'POST', `${base}/items/${i}/${dis ? 'disable' : 'enable'}`, null,
        `${dis ? 'Disabled' : 'Enabled'} item ${i} of ${name}${dis ? ': its fires skip it until it is enabled' : ''}.`);
      btn.disabled = false;
    });
  }
  return {
    refresh,
    unmount() {
      alive = false;
      cfg.unmount();
      hist.unmount();
    },
    get gone() { return gone; },
  };
}
