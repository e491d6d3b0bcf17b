// The console's shell: the token form, the page router (location.hash) and error reporting.
import { token } from './api.js';
import { clear } from './dom.js';
import { clusterPage } from './cluster.js';
import { memoriesPage } from './memories.js';
import { explainPage } from './explain.js';
import { tiersPage } from './tiers.js';

const pages = { cluster: clusterPage, memories: memoriesPage, explain: explainPage, tiers: tiersPage };
const status = document.getElementById('status');
const input = document.getElementById('token');
let leaving = new AbortController();

function show(e) {
  status.textContent = e ? 'Error: ' + (e.message || e) : '';
  if (e?.status === 401) {
    status.textContent += ' (enter a token above)';
    input.focus();
  }
}

async function route() {
  leaving.abort();
  leaving = new AbortController();
  const name = pages[location.hash.slice(1)] ? location.hash.slice(1) : 'cluster';
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const main = clear(document.getElementById('main'));
  show(null);
  try {
    await pages[name](main, leaving.signal);
  } catch (e) {
    show(e);
  }
}

// Handlers run asynchronously; whatever they throw is shown, not lost in the console.
window.addEventListener('unhandledrejection', (e) => show(e.reason));
window.addEventListener('error', (e) => show(e.error || e.message));
window.addEventListener('hashchange', route);

const form = document.getElementById('token-form');
input.value = token.get();
form.addEventListener('submit', (e) => { e.preventDefault(); token.set(input.value.trim()); route(); });
document.getElementById('token-clear').addEventListener('click', () => { token.set(''); input.value = ''; route(); });
route();
