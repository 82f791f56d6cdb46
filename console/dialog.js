// console/dialog.js: the confirmation before what cannot be undone (shutdown, remove, a server's
// operations), in a modal <dialog>: it names what happens, Escape or Cancel closes it doing nothing,
// Enter confirms (on the confirm button, or in the field that must hold the name typed). The focus
// goes back where it was.

import { h } from './dom.js';

// {title, body: [nodes or text], confirm: 'Shut down', danger: true, typeName: 'billing' (the
// user types it to confirm), extra: a node (e.g. a checkbox) whose state the caller reads}
// -> Promise<boolean>
export function confirmDialog(o) {
  return new Promise((resolve) => {
    const back = document.activeElement;
    const name = o.typeName ? h('input', { type: 'text', id: 'dlg-name', autocomplete: 'off', spellcheck: 'false', required: true }) : null;
    const ok = h('button', { type: 'submit', class: o.danger ? 'danger' : 'primary', id: 'dlg-ok', disabled: !!name }, o.confirm || 'OK');
    const cancel = h('button', { type: 'button', id: 'dlg-cancel' }, 'Cancel');
    const form = h('form', { class: 'dlg-form' },
      h('h2', { id: 'dlg-title' }, o.title),
      h('div', { class: 'dlg-body' }, o.body),
      o.extra || null,
      name ? h('label', { for: 'dlg-name', class: 'field' }, `Type ${o.typeName} to confirm`) : null,
      name,
      h('div', { class: 'dlg-buttons' }, cancel, ok));
    const dlg = h('dialog', { class: 'dlg', 'aria-labelledby': 'dlg-title' }, form);
    let done = false;
    const finish = (v) => {
      if (done) return;
      done = true;
      dlg.close();
      dlg.remove();
      if (back && back.isConnected) back.focus();
      resolve(v);
    };
    if (name) name.addEventListener('input', () => { ok.disabled = name.value !== o.typeName; });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (name && name.value !== o.typeName) return;
      finish(true);
    });
    cancel.addEventListener('click', () => finish(false));
    dlg.addEventListener('cancel', (ev) => {   // Escape
      ev.preventDefault();
      finish(false);
    });
    document.body.append(dlg);
    dlg.showModal();
    (name || cancel).focus();
  });
}
