// console/login.js: the login form (#/login): POST /api/v1/login with the users of serve's --auth
// file; its session cookie (HttpOnly, SameSite=Strict) carries every request after. A serve
// without --auth has no users: everyone on its loopback address is admin, and this page says so.

import * as api from './api.js';
import { h, fill } from './dom.js';

export function mount(root, ctx) {
  const user = h('input', { type: 'text', id: 'login-user', name: 'username', autocomplete: 'username', required: true, spellcheck: 'false', autocapitalize: 'off' });
  const pass = h('input', { type: 'password', id: 'login-password', name: 'password', autocomplete: 'current-password', required: true });
  const msg = h('p', { class: 'error', id: 'login-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'login-submit' }, 'Log in');
  const form = h('form', { class: 'login', id: 'login-form' },
    h('div', { class: 'field' }, h('label', { for: 'login-user' }, 'User'), user),
    h('div', { class: 'field' }, h('label', { for: 'login-password' }, 'Password'), pass),
    msg, h('div', { class: 'buttons' }, submit));
  root.append(h('div', { class: 'login-box' }, h('h1', null, 'Log in to ejob'), h('p', { class: 'muted' }, 'With a user of ejobctl serve\'s --auth file.'), form));
  user.focus();
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    fill(msg);
    submit.disabled = true;
    try {
      const r = await api.login(user.value, pass.value);
      if (r.status === 401) {
        fill(msg, 'Wrong user or password.');
        pass.select();
        return;
      }
      if (r.status === 400) {
        fill(msg, `${r.data.error}: everyone on this address may use the console.`);
      }
      pass.value = '';
      await ctx.loggedIn();
    } catch (e) {
      fill(msg, `Could not log in: ${e.error || e.message}`);
    } finally {
      submit.disabled = false;
    }
  });
  return {};
}
