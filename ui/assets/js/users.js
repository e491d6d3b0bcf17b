// The user picker every per-user page shares: an admin (or unlimited) token can look users up by prefix through
// GET /v1/users; any other token types its own user id.
import { api } from './api.js';
import { h } from './dom.js';

const USER = 'memcluster.user';
export const currentUser = () => sessionStorage.getItem(USER) || '';

export function userPicker(id, onPick) {
  const input = h('input', { id: id + '-user', list: id + '-users', value: currentUser(), autocomplete: 'off', required: true });
  const list = h('datalist', { id: id + '-users' });
  const hint = h('span', { class: 'muted', id: id + '-hint' });
  let timer;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => suggest(input.value, list, hint), 250);
  });
  const form = h('form', { class: 'row', 'aria-label': 'Pick a user' },
    h('label', {}, 'User', input), list,
    h('button', { type: 'submit', id: id + '-open' }, 'Open'), hint);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem(USER, input.value.trim());
    onPick(input.value.trim());
  });
  return form;
}

async function suggest(prefix, list, hint) {
  try {
    const res = await api('/v1/users', { query: { prefix, limit: 20 } });
    list.replaceChildren(...res.users.map((u) => h('option', { value: u })));
    hint.textContent = res.next_cursor ? 'more users: type more of the id' : `${res.users.length} users`;
  } catch (e) {
    list.replaceChildren();
    hint.textContent = e.status === 403 ? 'this token sees only its own users: type the user id' : e.message;
  }
}
