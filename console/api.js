// console/api.js: every request the console makes goes to ejobctl serve's API (docs/api.md) and
// nowhere else, with the session cookie of the login. What the answers say about the connection
// drives the banner (serve not answering; ZooKeeper away: 503), and a 401 shows the login form.

export class ApiError extends Error {
  constructor(status, body, path) {
    const msg = (body && body.error) || `HTTP ${status}`;
    super(msg);
    this.status = status;
    this.error = msg;
    this.hint = (body && body.hint) || null;
    this.body = body;
    this.path = path;
  }
}

const listeners = { auth: new Set(), link: new Set() };
export function listen(what, fn) {
  listeners[what].add(fn);
  return () => listeners[what].delete(fn);
}
function emit(what, arg) {
  for (const fn of listeners[what]) fn(arg);
}

// what the banner says: the connection to serve, and ZooKeeper as serve sees it
const link = { net: null, zk: null };
function setLink(k, v) {
  if (link[k] === v) return;
  link[k] = v;
  emit('link', { ...link });
}
export const linkState = () => ({ ...link });

// The history's 503 is PostgreSQL's (or no --pg), not ZooKeeper's
const pgPath = (p) => /^\/api\/v1\/(history|jobs\/[^/]+\/(history|trace))/.test(p);

// method path [body]: {status, data, etag, headers}. Throws ApiError for 4xx/5xx but those in
// opts.allow (e.g. [404] for an endpoint an older serve lacks), and status 0 when serve does not
// answer. opts.body: an object (sent as JSON) or a string (sent as is, e.g. YAML).
export async function call(method, path, opts = {}) {
  // X-Requested-With: serve's 401 then has no Basic challenge (the browser's own login dialog)
  const init = { method, credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json', 'X-Requested-With': 'ejob-console' } };
  if (opts.headers) Object.assign(init.headers, opts.headers);
  if (opts.body !== undefined) {
    if (typeof opts.body === 'string') {
      init.body = opts.body;
      init.headers['Content-Type'] = 'application/yaml';
    } else {
      init.body = JSON.stringify(opts.body);
      init.headers['Content-Type'] = 'application/json';
    }
  }
  let r;
  try {
    r = await fetch(path, init);
  } catch (e) {
    setLink('net', 'ejobctl serve does not answer');
    throw new ApiError(0, { error: `no answer from ejobctl serve (${e.message})` }, path);
  }
  setLink('net', null);
  const text = await r.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { error: text.trim() };
    }
  }
  if (r.status === 503 && !pgPath(path)) setLink('zk', (data && data.error) || 'ZooKeeper is unreachable');
  if (r.status === 401 && !opts.noAuthEvent) emit('auth', path);
  const res = { status: r.status, data, etag: r.headers.get('ETag'), headers: r.headers };
  if (r.status >= 400 && !(opts.allow || []).includes(r.status)) throw new ApiError(r.status, data, path);
  return res;
}

export const get = (path, opts) => call('GET', path, opts);

// GET /healthz (no credentials): whether serve reaches ZooKeeper; the banner follows it
export async function checkHealth() {
  let r;
  try {
    r = await fetch('/healthz', { cache: 'no-store' });
  } catch {
    setLink('net', 'ejobctl serve does not answer');
    return;
  }
  setLink('net', null);
  const t = (await r.text()).trim();
  setLink('zk', r.status === 503 ? t || 'ZooKeeper is unreachable' : null);
}

// ---- GET /api/v1/jobs, shared by the pages (one request at a time; reused while fresh) ----------

let jobsCache = null, jobsAt = 0, jobsFlight = null;

// The jobs document, at most maxAgeMs old (the model renders once a second: 2 s by default); one
// request at a time, shared (the start's prefetch is the overview's first)
export function jobs(maxAgeMs = 1900, opts) {
  if (jobsCache && Date.now() - jobsAt < maxAgeMs) return Promise.resolve(jobsCache);
  if (!jobsFlight) {
    jobsFlight = get('/api/v1/jobs', opts).then((r) => {
      jobsCache = r.data;
      jobsAt = Date.now();
      return jobsCache;
    }).finally(() => {
      jobsFlight = null;
    });
  }
  return jobsFlight;
}
export const jobsNow = () => jobsCache;
export function forgetJobs() {
  jobsAt = 0;
}

// ---- who is logged in -----------------------------------------------------------------------

const ROLES = ['viewer', 'operator', 'admin'];
export const me = { user: null, role: null, auth: false, history: null, namespace: null, zookeeper: null, version: null, known: false, noMe: false };

export function can(role) {
  return me.known && ROLES.indexOf(me.role) >= ROLES.indexOf(role);
}

// GET /api/v1/me; an older serve without it (404): the role the login answered (kept for the
// tab's life), else admin "-" as serve without --auth has it (a write it refuses says so: 403)
export async function loadMe() {
  const r = await get('/api/v1/me', { allow: [404], noAuthEvent: true });
  if (r.status === 200) {
    Object.assign(me, r.data, { known: true, noMe: false });
    return me;
  }
  await jobs(1900, { noAuthEvent: true });   // a 401 (not logged in) throws; else the pages have the jobs
  const kept = JSON.parse(sessionStorage.getItem('ejob-login') || 'null');
  Object.assign(me, kept || { user: '-', role: 'admin', auth: false }, { known: true, noMe: true, history: null });
  return me;
}

export async function login(user, password) {
  const r = await call('POST', '/api/v1/login', { body: { user, password }, allow: [400, 401], noAuthEvent: true });
  if (r.status === 200) sessionStorage.setItem('ejob-login', JSON.stringify({ user: r.data.user, role: r.data.role, auth: true }));
  return r;
}

export async function logout() {
  try {
    await call('POST', '/api/v1/logout', { allow: [401], noAuthEvent: true });
  } finally {
    sessionStorage.removeItem('ejob-login');
    Object.assign(me, { user: null, role: null, known: false });
    jobsCache = null;
  }
}
