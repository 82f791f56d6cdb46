// console/config.js: a job's config node (ElasticJob's YAML), shown to everyone, edited by admins:
// a form for the common keys or the node's text itself. Saved with PUT /api/v1/jobs/{job} and
// If-Match of the version the editor opened (a change made meanwhile is never overwritten: 409
// says so and offers to reload); a config the check refuses (400) shows the check's messages (the
// ones `ejobctl config set` prints), each at its place: in the form under its field, in the text at
// its line ("body:LINE:COLUMN: ..."), beside the line and in a list that moves the caret there.

import * as api from './api.js';
import { h, fill } from './dom.js';
import { flash } from './ui.js';

// the form's keys: [key, label, kind]
const FIELDS = [
  ['cron', 'Cron', 'text', 'a Quartz expression, e.g. 0 0/5 * * * ?'],
  ['shardingTotalCount', 'Items (shardingTotalCount)', 'number'],
  ['shardingItemParameters', 'Item parameters', 'text', 'e.g. 0=a,1=b'],
  ['jobParameter', 'Job parameter', 'text'],
  ['description', 'Description', 'text'],
  ['disabled', 'Disabled', 'checkbox'],
  ['failover', 'Failover', 'checkbox'],
  ['misfire', 'Misfire', 'checkbox'],
];

// The node's text with top-level keys set (a key's line replaced, with the indented lines that
// continue its value; a key not there added at the end). Values as YAML: strings double-quoted
// (JSON's escapes are YAML's), numbers and booleans plain.
export function setTopKeys(text, kv) {
  const lines = text.replace(/\n$/, '').split('\n');
  for (const [k, v] of Object.entries(kv)) {
    const val = typeof v === 'string' ? JSON.stringify(v) : String(v);
    const re = new RegExp(`^(${k}|"${k}"|'${k}')\\s*:(\\s|$)`);
    const i = lines.findIndex((l) => re.test(l));
    if (i < 0) {
      lines.push(`${k}: ${val}`);
      continue;
    }
    let n = 1;
    while (i + n < lines.length && (/^[ \t]/.test(lines[i + n]) || (lines[i + n] === '' && i + n + 1 < lines.length && /^[ \t]/.test(lines[i + n + 1])))) n++;
    lines.splice(i, n, `${k}: ${val}`);
  }
  return `${lines.join('\n')}\n`;
}

// the check's messages: [{line, col, key, msg}] (line null: no position)
export function parseErrors(text) {
  return String(text || '').split('\n').filter(Boolean).map((l) => {
    const m = l.match(/^body:(\d+):(\d+):\s*(.*)$/);
    const msg = m ? m[3] : l;
    const k = msg.match(/^(?:jobs\.[^.]+\.)?([A-Za-z][A-Za-z0-9.]*):/);
    return { line: m ? Number(m[1]) : null, col: m ? Number(m[2]) : null, key: k ? k[1] : null, msg };
  });
}

function formValues(doc) {
  return {
    cron: doc.cron || '', shardingTotalCount: doc.shardingTotalCount ?? '', shardingItemParameters: doc.shardingItemParameters || '',
    jobParameter: doc.jobParameter || '', description: doc.description || '', disabled: !!doc.disabled, failover: !!doc.failover, misfire: !!doc.misfire,
  };
}

// ---- the text editor: a textarea over a backdrop that marks lines, beside a gutter of numbers --

function codeEditor(id) {
  const ta = h('textarea', { id, class: 'code-text', spellcheck: 'false', wrap: 'off', autocapitalize: 'off', autocomplete: 'off', 'aria-describedby': `${id}-errs` });
  const back = h('pre', { class: 'code-back', 'aria-hidden': 'true' });
  const gutter = h('pre', { class: 'code-gutter', 'aria-hidden': 'true' });
  const errs = h('ul', { class: 'errs', id: `${id}-errs`, 'aria-live': 'polite' });
  let marks = [];
  function paint() {
    const lines = ta.value.split('\n');
    const at = new Map();
    for (const e of marks) if (e.line) at.set(e.line, [...(at.get(e.line) || []), e.msg]);
    fill(gutter, lines.map((_, i) => h('span', { class: at.has(i + 1) ? 'err' : null, 'data-line': i + 1 }, `${i + 1}\n`)));
    fill(back, lines.map((l, i) => (at.has(i + 1)
      ? h('span', { class: 'err-line', 'data-line': i + 1 }, h('span', { class: 'ghost' }, l), h('span', { class: 'err-msg' }, `   ◀ ${at.get(i + 1).join('; ')}`), '\n')
      : h('span', { class: 'ghost' }, `${l}\n`))));
    sync();
  }
  function sync() {
    back.style.transform = `translate(${-ta.scrollLeft}px, ${-ta.scrollTop}px)`;
    gutter.style.transform = `translateY(${-ta.scrollTop}px)`;
  }
  function reveal(line) {
    const lh = parseFloat(getComputedStyle(ta).lineHeight) || 18;
    ta.scrollTop = Math.max(0, (line - 3) * lh);
    ta.scrollLeft = 0;
    sync();
  }
  function goTo(line, col) {
    const lines = ta.value.split('\n');
    let pos = 0;
    for (let i = 0; i < line - 1 && i < lines.length; i++) pos += lines[i].length + 1;
    pos += Math.max(0, Math.min((col || 1) - 1, (lines[line - 1] || '').length));
    ta.focus();
    ta.setSelectionRange(pos, pos);
    reveal(line);
  }
  ta.addEventListener('input', () => {
    if (marks.length) marks = marks.map((m) => ({ ...m, line: null }));   // the lines moved: marks go, the list stays
    paint();
  });
  ta.addEventListener('scroll', sync);
  errs.addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-line]');
    if (b) goTo(Number(b.dataset.line), Number(b.dataset.col));
  });
  return {
    el: h('div', null, h('div', { class: 'code' }, h('div', { class: 'code-g' }, gutter), h('div', { class: 'code-area' }, back, ta)), errs),
    ta,
    set(text) {
      ta.value = text;
      marks = [];
      fill(errs);
      paint();
    },
    show(list) {
      marks = list;
      fill(errs, list.map((e) => h('li', null, e.line
        ? h('button', { type: 'button', class: 'link', 'data-line': e.line, 'data-col': e.col }, `Line ${e.line}, column ${e.col}: ${e.msg}`)
        : e.msg)));
      paint();
      if (list.length && list[0].line) reveal(list[0].line);   // the first message in sight
    },
  };
}

// ---- the config card -----------------------------------------------------------------------------

export function mountConfig(el, { name, base, reload }) {
  const admin = api.can('admin');
  const view = h('pre', { class: 'config', id: 'cfg-text', tabindex: '0', 'aria-label': `Config node of ${name}` });
  const edit = admin ? h('button', { type: 'button', id: 'cfg-edit' }, 'Edit config') : null;
  const box = h('div', { class: 'editor', id: 'cfg-editor', hidden: true });
  el.append(edit ? h('p', null, edit) : null, view, admin ? box : null);
  let doc = null, editing = null;   // editing: {version, text} the editor opened
  let stale = null;

  // the editor: tabs (form, text), the stale note, save/cancel
  const note = h('div', { class: 'conflict', role: 'alert', hidden: true });
  const general = h('ul', { class: 'errs', id: 'cfg-errs', 'aria-live': 'polite' });
  const inputs = {}, fieldErr = {};
  const form = h('form', { class: 'cfg-form', id: 'cfg-form', novalidate: true },
    FIELDS.map(([k, label, kind, ph]) => {
      const id = `cfg-f-${k}`;
      const input = kind === 'checkbox' ? h('input', { type: 'checkbox', id, name: k })
        : h('input', { type: kind, id, name: k, placeholder: ph || null, autocomplete: 'off', spellcheck: 'false', min: kind === 'number' ? 1 : null });
      inputs[k] = input;
      fieldErr[k] = h('p', { class: 'field-err', id: `${id}-err`, 'aria-live': 'polite' });
      input.setAttribute('aria-describedby', `${id}-err`);
      return kind === 'checkbox'
        ? h('div', { class: 'field check' }, input, h('label', { for: id }, label), fieldErr[k])
        : h('div', { class: 'field' }, h('label', { for: id }, label), input, fieldErr[k]);
    }),
    h('div', { class: 'buttons' }, h('button', { type: 'submit', class: 'primary', id: 'cfg-save-form' }, 'Save'), h('button', { type: 'button', class: 'cfg-cancel' }, 'Cancel')));
  const code = codeEditor('cfg-yaml');
  const textPane = h('form', { class: 'cfg-text-form', id: 'cfg-text-form', hidden: true },
    h('label', { for: 'cfg-yaml' }, 'The config node (YAML)'), code.el,
    h('div', { class: 'buttons' }, h('button', { type: 'submit', class: 'primary', id: 'cfg-save-text' }, 'Save'), h('button', { type: 'button', class: 'cfg-cancel' }, 'Cancel')));
  const tabForm = h('button', { type: 'button', role: 'tab', id: 'cfg-tab-form', 'aria-selected': 'true', 'aria-controls': 'cfg-form' }, 'Form');
  const tabText = h('button', { type: 'button', role: 'tab', id: 'cfg-tab-text', 'aria-selected': 'false', 'aria-controls': 'cfg-text-form' }, 'YAML');
  if (admin) box.append(h('div', { role: 'tablist', class: 'tabs', 'aria-label': 'Edit as' }, tabForm, tabText), note, general, form, textPane);

  function tab(text) {
    tabForm.setAttribute('aria-selected', String(!text));
    tabText.setAttribute('aria-selected', String(text));
    form.hidden = text;
    textPane.hidden = !text;
  }
  function clearErrors() {
    fill(general);
    for (const k of Object.keys(fieldErr)) {
      fill(fieldErr[k]);
      inputs[k].removeAttribute('aria-invalid');
    }
  }
  function open() {
    editing = { version: doc.configVersion, text: doc.config, values: formValues(doc) };
    for (const [k, , kind] of FIELDS) {
      if (kind === 'checkbox') inputs[k].checked = editing.values[k];
      else inputs[k].value = editing.values[k];
    }
    code.set(doc.config);
    note.hidden = true;
    clearErrors();
    box.hidden = false;
    view.hidden = true;
    edit.hidden = true;
    (form.hidden ? code.ta : inputs.cron).focus();
  }
  function close() {
    editing = null;
    box.hidden = true;
    view.hidden = false;
    if (edit) edit.hidden = false;
    if (doc) view.textContent = doc.config;
  }
  function conflict(text) {
    fill(note, h('p', null, text), h('p', null, 'Saving over it is refused. ',
      h('button', { type: 'button', class: 'cfg-reload', id: 'cfg-reload' }, 'Reload the config'),
      ' (what you changed here is dropped)'));
    note.hidden = false;
  }

  async function save(text, fromForm) {
    clearErrors();
    const r = await api.call('PUT', base, { body: text, headers: { 'If-Match': `"${editing.version}"` }, allow: [400, 409] }).catch((e) => ({ status: e.status, data: { error: e.error, hint: e.hint } }));
    if (r.status === 409) return conflict(`Someone changed ${name}'s config since you opened the editor: ${r.data.error}`);
    if (r.status >= 300 || r.status === 0) {
      const errs = parseErrors(r.data && r.data.error);
      const placed = new Set();
      if (fromForm) {
        for (const e of errs) {
          if (e.key && fieldErr[e.key]) {
            fieldErr[e.key].append(h('span', null, e.msg));
            inputs[e.key].setAttribute('aria-invalid', 'true');
            placed.add(e);
          }
        }
      } else {
        code.show(errs.filter((e) => e.line));
        for (const e of errs) if (e.line) placed.add(e);
      }
      fill(general, errs.filter((e) => !placed.has(e)).map((e) => h('li', null, e.line ? `Line ${e.line}, column ${e.col}: ${e.msg}` : e.msg)));
      const first = fromForm ? Object.values(inputs).find((i) => i.getAttribute('aria-invalid')) : null;
      if (first) first.focus();
      return null;
    }
    const d = r.data || {};
    flash(d.action === 'unchanged' ? `${name}'s config is unchanged.` : `Saved ${name}'s config (version ${d.configVersion}): ${d.keys && d.keys.length ? `changed ${d.keys.join(', ')}` : 'changed'}.`, 'ok', d.warnings || []);
    close();
    api.forgetJobs();
    reload();
    return d;
  }

  if (admin) {
    edit.addEventListener('click', () => doc && open());
    tabForm.addEventListener('click', () => tab(false));
    tabText.addEventListener('click', () => tab(true));
    box.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape' && !box.hidden) {
        ev.preventDefault();
        close();
        edit.focus();
      }
    });
    box.addEventListener('click', async (ev) => {
      if (ev.target.closest('.cfg-cancel')) {
        close();
        edit.focus();
      } else if (ev.target.closest('.cfg-reload')) {
        const r = await api.get(base);
        doc = r.data;
        open();
        flash(`Loaded ${name}'s config as it is now (version ${doc.configVersion}).`);
      }
    });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const kv = {};
      for (const [k, , kind] of FIELDS) {
        const v = kind === 'checkbox' ? inputs[k].checked : inputs[k].value;
        if (String(v) === String(editing.values[k])) continue;
        kv[k] = kind === 'number' ? (/^\d+$/.test(v.trim()) ? Number(v) : v) : v;
      }
      if (!Object.keys(kv).length) {
        flash(`Nothing changed in the form: ${name}'s config stays as it is.`, 'warn');
        return;
      }
      save(setTopKeys(editing.text, kv), true);
    });
    textPane.addEventListener('submit', (ev) => {
      ev.preventDefault();
      save(code.ta.value, false);
    });
  }

  return {
    update(d) {
      doc = d;
      if (!editing) {
        if (view.textContent !== d.config) view.textContent = d.config;
      } else if (d.configVersion !== editing.version && stale !== d.configVersion) {
        stale = d.configVersion;
        conflict(`${name}'s config changed on the server (now version ${d.configVersion}; you opened version ${editing.version}).`);
      }
    },
    unmount() {},
    get editing() { return !!editing; },
  };
}
