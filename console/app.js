// console/app.js: the console's frame: the hash routes and their pages, who is logged in, the poll
// that keeps the page current (every 2 s while the tab is seen, one request at a time, rendered in
// place), the banner when serve or ZooKeeper is away, and the messages of operations.
//
// A page module exports mount(root, ctx) -> {refresh(), unmount(), every}: root is <main>, emptied
// for it; refresh() is called at once and then every `every` ms (2000) after the last ended.

import { h, fill, parseQuery } from './dom.js';
import * as api from './api.js';
import * as overview from './overview.js';
import * as jobs from './jobs.js';
import * as job from './job.js';
import * as servers from './servers.js';
import * as history from './history.js';
import * as workflows from './workflows.js';
import * as login from './login.js';

const routes = [
  { re: /^\/$/, page: overview, nav: 'overview', title: 'Overview' },
  { re: /^\/jobs$/, page: jobs, nav: 'jobs', title: 'Jobs' },
  { re: /^\/jobs\/([^/?]+)$/, page: job, nav: 'jobs', title: 'Job' },
  { re: /^\/servers$/, page: servers.list, nav: 'servers', title: 'Servers' },
  { re: /^\/servers\/([^/?]+)$/, page: servers.server, nav: 'servers', title: 'Server' },
  { re: /^\/instances\/([^/?]+)$/, page: servers.instance, nav: 'servers', title: 'Instance' },
  { re: /^\/workflows$/, page: workflows.list, nav: 'workflows', title: 'Workflows' },
  { re: /^\/workflows\/([^/?]+)$/, page: workflows.workflow, nav: 'workflows', title: 'Workflow' },
  { re: /^\/history$/, page: history, nav: 'history', title: 'History' },
  { re: /^\/login$/, page: login, nav: null, title: 'Log in' },
];

const main = document.getElementById('main');
const banner = document.getElementById('banner');
const who = document.getElementById('who');

let current = null;   // {page instance, route}
let gen = 0;          // bumped at every route: a poll of the page before stops
let timer = null;

function renderBanner(s) {
  const parts = [];
  if (s.net) parts.push(h('p', null, h('strong', null, 'ejobctl serve does not answer. '),
    'The page keeps what it showed last and tries again every 2 s.'));
  else if (s.zk) parts.push(h('p', null, h('strong', null, 'ZooKeeper is unreachable. '),
    `serve says: ${s.zk}. What the page shows may be out of date; it updates once ZooKeeper is back.`));
  banner.hidden = !parts.length;
  fill(banner, parts);
}

// ---- who --------------------------------------------------------------------------------------

function renderWho() {
  const m = api.me;
  if (!m.known) return fill(who);
  const out = m.auth ? h('button', { type: 'button', class: 'link', id: 'logout' }, 'Log out') : null;
  if (out) out.addEventListener('click', async () => {
    await api.logout();
    renderWho();
    location.hash = '#/login';
  });
  fill(who,
    m.namespace ? h('span', { class: 'ns', title: m.zookeeper ? `ZooKeeper ${m.zookeeper}` : null }, `/${m.namespace}`) : null,
    h('span', { class: 'user' }, m.user === '-' ? 'no login' : m.user, ' ', h('span', { class: `role r-${m.role}` }, m.role)),
    out);
}

function toLogin() {
  const h0 = location.hash;
  if (!h0.startsWith('#/login')) sessionStorage.setItem('ejob-after-login', h0 || '#/');
  api.me.known = false;
  renderWho();
  if (!h0.startsWith('#/login')) location.hash = '#/login';
  else route();
}

// after a login: who it is, then where the user was going
async function loggedIn() {
  await api.loadMe();
  renderWho();
  const to = sessionStorage.getItem('ejob-after-login') || '#/';
  sessionStorage.removeItem('ejob-after-login');
  if (location.hash === to) route();
  else location.hash = to;
}

// ---- routes and the poll -----------------------------------------------------------------------

function setNav(which) {
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.nav === which) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// The page's refresh, again `every` ms after it ended, or three times as long as it took when that
// is longer: a console left open never keeps serve busy (a big cluster's reads take seconds)
async function poll(g) {
  if (g !== gen || !current) return;
  const p = current.inst;
  const t0 = performance.now();
  if (!document.hidden && p && p.refresh) {
    try {
      await p.refresh();
    } catch (e) {
      if (!(e instanceof api.ApiError)) console.error(e);
    }
  }
  const took = performance.now() - t0;
  if (g === gen) timer = setTimeout(() => poll(g), Math.max((p && p.every) || 2000, 3 * took));
}

function route() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = raw.split('?');
  const r = routes.find((x) => x.re.test(path)) || null;
  gen++;
  clearTimeout(timer);
  if (current && current.inst && current.inst.unmount) current.inst.unmount();
  current = null;
  main.replaceChildren();
  if (!r) {
    setNav(null);
    main.append(h('h1', { tabindex: '-1' }, 'No such page'), h('p', null, 'The console has no page at ', h('code', null, raw), '. ', h('a', { href: '#/' }, 'Overview')));
    return;
  }
  if (r.page !== login && !api.me.known) {
    start();
    return;
  }
  setNav(r.nav);
  const params = (path.match(r.re) || []).slice(1).map(decodeURIComponent);
  document.title = `${r.title}${params[0] ? `: ${params[0]}` : ''} · ejob`;
  const inst = r.page.mount(main, { params, query: parseQuery(qs), path, loggedIn });
  current = { inst: inst || {}, route: r };
  const h1 = main.querySelector('h1');
  if (h1) {
    h1.setAttribute('tabindex', '-1');
    if (started) h1.focus({ preventScroll: true });
  }
  poll(gen);
}

// ---- start -------------------------------------------------------------------------------------

let started = false, starting = null;

// who is logged in, then the route; a 401 is the login form; serve away: try again every 2 s
function start() {
  if (starting) return;
  fill(main, h('p', { class: 'muted' }, 'Loading…'));
  // the jobs for the overview or the table, asked beside who is logged in (a 401 is loadMe's to say)
  if (/^#?\/?(jobs)?(\?|$)/.test(location.hash.replace(/^#/, ''))) api.jobs(1900, { noAuthEvent: true }).catch(() => {});
  starting = api.loadMe().then(() => {
    starting = null;
    renderWho();
    route();
    started = true;
  }, (e) => {
    starting = null;
    if (e.status === 401) return toLogin();
    fill(main, h('h1', null, 'ejob'), h('p', { class: 'error' }, `Cannot start: ${e.error || e.message}. Trying again…`));
    setTimeout(start, 2000);
  });
}

api.listen('auth', () => {
  if (!location.hash.startsWith('#/login')) toLogin();
});
api.listen('link', renderBanner);
window.addEventListener('hashchange', route);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && current) {
    clearTimeout(timer);
    poll(gen);
  }
});
// the banner's poll: serve's /healthz every 2 s (no credentials), beside the page's
setInterval(() => {
  if (!document.hidden) api.checkHealth();
}, 2000);
// "/" goes to the page's filter or search field, as in many consoles (not while typing)
document.addEventListener('keydown', (ev) => {
  if (ev.key !== '/' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (t.closest && t.closest('input, textarea, select, [contenteditable], dialog')) return;
  const f = main.querySelector('[data-slash]');
  if (f) {
    ev.preventDefault();
    f.focus();
  }
});
const menu = document.getElementById('menu');
if (menu) menu.addEventListener('click', () => {
  const open = document.body.classList.toggle('nav-open');
  menu.setAttribute('aria-expanded', String(open));
});

if (location.hash.startsWith('#/login')) route();
else start();
