// console/servers.js: the machines (#/servers): every server (ip) with its instances online, its
// jobs and how many are disabled there, and every instance (online, shut down, draining, or gone
// while it still owns items); a server's page (#/servers/IP) with its jobs and the server-wide
// operations (disable, enable, shutdown: every job on it, after a confirmation for shutdown); an
// instance's page (#/instances/ID) with its jobs, leaderships, items, runs and failovers.
// GET /api/v1/servers and /instances read ZooKeeper per request: every 5 s here.

import * as api from './api.js';
import { h, morph, on, badge, plural, enc } from './dom.js';
import { flash, flashError } from './ui.js';
import { confirmDialog } from './dialog.js';

const list2 = (a) => (a && a.length ? a.join(', ') : '-');

function serversTable(s) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'servers-table' },
    h('thead', null, h('tr', null, ['Server', 'Instances online', 'Jobs', 'Disabled here'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, s.servers.map((v) => h('tr', { 'data-key': v.ip, 'data-server': v.ip },
      h('th', { scope: 'row' }, h('a', { href: `#/servers/${enc(v.ip)}` }, v.ip)),
      h('td', null, v.instancesNum ? v.instances.map((id, i) => [i ? ', ' : '', h('a', { href: `#/instances/${enc(id)}`, class: 'mono' }, id)]) : h('span', { class: 'warn-text' }, 'none')),
      h('td', { class: 'c-num' }, String(v.jobsNum)),
      h('td', { class: 'c-num' }, String(v.disabledJobsNum)))))));
}

function instancesTable(d) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'instances-table' },
    h('thead', null, h('tr', null, ['Instance', 'IP', 'Kind', 'State', 'Jobs', 'Leads', 'Items owned'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, d.instances.map((i) => h('tr', { 'data-key': i.id, 'data-instance': i.id, 'data-state': i.state },
      h('th', { scope: 'row' }, h('a', { href: `#/instances/${enc(i.id)}`, class: 'mono' }, i.id)),
      h('td', null, h('a', { href: `#/servers/${enc(i.ip)}` }, i.ip)),
      h('td', null, i.kind || '-'),
      h('td', null, badge(i.state.toUpperCase(), 'i')),
      h('td', { class: 'c-num' }, String(i.jobs.filter((j) => j.online).length)),
      h('td', null, list2(i.jobs.filter((j) => j.leader).map((j) => j.name))),
      h('td', null, list2(i.jobs.filter((j) => j.items.length).map((j) => `${j.name}:${j.items.join(',')}`))))))));
}

function loadError(el, e) {
  if (e.status !== 401) morph(el, h('div', null, h('p', { class: 'error' }, `Could not read: ${e.error}`)));
}

export const list = {
  mount(root) {
    const srv = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
    const ins = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
    root.append(h('h1', null, 'Servers'),
      h('section', { class: 'card', 'aria-labelledby': 's-h' }, h('h2', { id: 's-h' }, 'Servers'), srv),
      h('section', { class: 'card', 'aria-labelledby': 'i-h' }, h('h2', { id: 'i-h' }, 'Instances'), ins));
    let alive = true;
    async function refresh() {
      const [s, i] = await Promise.all([api.get('/api/v1/servers').catch((e) => e), api.get('/api/v1/instances').catch((e) => e)]);
      if (!alive) return;
      if (s instanceof api.ApiError) loadError(srv, s);
      else morph(srv, h('div', null, s.data.servers.length ? serversTable(s.data) : h('p', { class: 'muted' }, 'No server has a job.')));
      if (i instanceof api.ApiError) loadError(ins, i);
      else morph(ins, h('div', null, i.data.instances.length ? instancesTable(i.data) : h('p', { class: 'muted' }, 'No instance.')));
    }
    return { refresh, every: 5000, unmount() { alive = false; } };
  },
};

async function post(what, path, body, done) {
  try {
    const r = await api.call('POST', path, body ? { body } : {});
    const jobs = (r.data && r.data.jobs) || [];
    flash(done, 'ok', jobs.map((j) => (j.error ? `${j.job}: ${j.error}` : `${j.job}: ${(j.writes || []).length} writes`)).concat((r.data && r.data.warnings) || []));
    api.forgetJobs();
    return r;
  } catch (e) {
    flashError(what, e);
    return null;
  }
}

export const server = {
  mount(root, ctx) {
    const ip = ctx.params[0];
    const canOp = api.can('operator');
    const top = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
    const jobsEl = h('div');
    const ops = canOp ? h('section', { class: 'card ops', id: 'server-ops', 'aria-labelledby': 'so-h' }, h('h2', { id: 'so-h' }, 'Every job on this server'),
      h('div', { class: 'op-row' },
        h('button', { type: 'button', 'data-action': 'disable', id: 'srv-disable' }, 'Disable all'),
        h('button', { type: 'button', 'data-action': 'enable', id: 'srv-enable' }, 'Enable all'),
        h('button', { type: 'button', 'data-action': 'shutdown', class: 'danger', id: 'srv-shutdown' }, 'Shut down all…'))) : null;
    root.append(h('p', { class: 'crumbs' }, h('a', { href: '#/servers' }, 'Servers'), ' / '), h('h1', null, `Server ${ip}`), top, ops,
      h('section', { class: 'card', 'aria-labelledby': 'sj-h' }, h('h2', { id: 'sj-h' }, 'Its jobs'), jobsEl));
    let alive = true, v = null;
    async function refresh() {
      let r;
      try {
        r = await api.get('/api/v1/servers');
      } catch (e) {
        if (alive) loadError(top, e);
        return;
      }
      if (!alive) return;
      v = r.data.servers.find((x) => x.ip === ip) || null;
      if (!v) {
        morph(top, h('div', null, h('p', { class: 'error' }, `No job has server ${ip} (servers/${ip}).`)));
        morph(jobsEl, h('div'));
        return;
      }
      morph(top, h('div', null, h('p', null, `${plural(v.instancesNum, 'instance')} online: `,
        v.instances.length ? v.instances.map((id, i) => [i ? ', ' : '', h('a', { href: `#/instances/${enc(id)}`, class: 'mono' }, id)]) : h('span', { class: 'warn-text' }, 'none'),
        `; ${plural(v.jobsNum, 'job')}, ${v.disabledJobsNum} disabled here.`)));
      morph(jobsEl, h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'server-jobs' },
        h('thead', null, h('tr', null, ['Job', 'Here', 'Instances', 'Items owned', 'Running'].map((c) => h('th', { scope: 'col' }, c)),
          canOp ? h('th', { scope: 'col' }, h('span', { class: 'sr' }, 'Actions')) : null)),
        h('tbody', null, v.jobs.map((j) => h('tr', { 'data-key': j.name, 'data-job': j.name },
          h('th', { scope: 'row' }, h('a', { href: `#/jobs/${enc(j.name)}` }, j.name)),
          h('td', null, badge(j.status, 's')),
          h('td', null, list2(j.instances)),
          h('td', null, list2(j.items)),
          h('td', null, list2(j.running)),
          canOp ? h('td', { class: 'act' }, h('button', { type: 'button', class: 'small', 'data-action': j.status === 'DISABLED' ? 'job-enable' : 'job-disable', 'data-job': j.name },
            `${j.status === 'DISABLED' ? 'Enable' : 'Disable'} ${j.name} here`)) : null))))));
    }
    if (canOp) {
      const act = async (action, btn) => {
        btn.disabled = true;
        try {
          if (action === 'job-enable' || action === 'job-disable') {
            const job = btn.dataset.job, dis = action === 'job-disable';
            await post(`${dis ? 'Disable' : 'Enable'} ${job} on ${ip}`, `/api/v1/jobs/${enc(job)}/${dis ? 'disable' : 'enable'}`, { server: ip }, `${dis ? 'Disabled' : 'Enabled'} ${job} on ${ip}.`);
          } else {
            if (action === 'shutdown') {
              const yes = await confirmDialog({
                title: `Shut down every job on ${ip}?`, confirm: 'Shut down all', danger: true,
                body: [h('p', null, `Each of the ${plural(v ? v.jobsNum : 0, 'job')} on ${ip} stops there: its instances' nodes are deleted, and it does not run on ${ip} again until the supervisor there restarts.`)],
              });
              if (!yes) return;
            }
            await post(`${action} ${ip}`, `/api/v1/servers/${enc(ip)}/${action}`, null, `${action === 'disable' ? 'Disabled' : action === 'enable' ? 'Enabled' : 'Shut down'} every job on ${ip}.`);
          }
          await refresh();
        } finally {
          btn.disabled = false;
        }
      };
      on(ops, act);
      on(jobsEl, act);
    }
    return { refresh, every: 5000, unmount() { alive = false; } };
  },
};

export const instance = {
  mount(root, ctx) {
    const id = ctx.params[0];
    const canOp = api.can('operator');
    const top = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
    const jobsEl = h('div');
    root.append(h('p', { class: 'crumbs' }, h('a', { href: '#/servers' }, 'Servers'), ' / '), h('h1', { class: 'mono' }, id), top,
      h('section', { class: 'card', 'aria-labelledby': 'ij-h' }, h('h2', { id: 'ij-h' }, 'Its jobs'), jobsEl));
    let alive = true;
    async function refresh() {
      let r;
      try {
        r = await api.get('/api/v1/instances');
      } catch (e) {
        if (alive) loadError(top, e);
        return;
      }
      if (!alive) return;
      const i = r.data.instances.find((x) => x.id === id);
      if (!i) {
        morph(top, h('div', null, h('p', { class: 'error' }, `No instance ${id}: not online, and it owns no item.`)));
        morph(jobsEl, h('div'));
        return;
      }
      morph(top, h('div', null, h('p', null, badge(i.state.toUpperCase(), 'i'), ` ${i.kind || 'not ejob or gone'}, on `, h('a', { href: `#/servers/${enc(i.ip)}` }, i.ip), `, pid ${i.pid}; ${plural(i.jobs.length, 'job')}.`)));
      morph(jobsEl, h('div', { class: 'table-wrap' }, h('table', { class: 'list', id: 'instance-jobs' },
        h('thead', null, h('tr', null, ['Job', 'State', 'Leader', 'Server', 'Items owned', 'Running', 'Taken over'].map((c) => h('th', { scope: 'col' }, c)),
          canOp ? h('th', { scope: 'col' }, h('span', { class: 'sr' }, 'Actions')) : null)),
        h('tbody', null, i.jobs.map((j) => h('tr', { 'data-key': j.name, 'data-job': j.name },
          h('th', { scope: 'row' }, h('a', { href: `#/jobs/${enc(j.name)}` }, j.name)),
          h('td', null, badge(j.state.toUpperCase(), 'i')),
          h('td', null, j.leader ? 'yes' : 'no'),
          h('td', null, j.serverStatus || '-'),
          h('td', null, list2(j.items)),
          h('td', null, list2(j.running)),
          h('td', null, list2(j.failover)),
          canOp ? h('td', { class: 'act' }, j.online ? h('button', { type: 'button', class: 'small danger', 'data-action': 'shutdown', 'data-job': j.name }, `Shut down ${j.name} here…`) : null) : null))))));
    }
    if (canOp) {
      on(jobsEl, async (action, btn) => {
        const job = btn.dataset.job;
        const yes = await confirmDialog({
          title: `Shut down ${job} on ${id}?`, confirm: 'Shut down', danger: true,
          body: [h('p', null, `Job ${job} stops on instance ${id}: its node instances/${id} is deleted, and it does not run there again until its supervisor restarts.`)],
        });
        if (!yes) return;
        await post(`Shut down ${job} on ${id}`, `/api/v1/jobs/${enc(job)}/shutdown`, { instance: id }, `Shut down ${job} on ${id}.`);
        await refresh();
      });
    }
    return { refresh, every: 5000, unmount() { alive = false; } };
  },
};
