// Memory browser: a user's memories by type and time, search, one memory with its history, facts on a
// timeline and the fact graph around a concept.
import { api, enc, listMemories } from './api.js';
import { h, table, badge, when, field } from './dom.js';
import { factTimeline, graphDrawing } from './charts.js';
import { userPicker, currentUser } from './users.js';

const TYPES = ['', 'working', 'episodic', 'semantic', 'perceptual'];
const PAGE = 20;

export function memoriesPage(main) {
  const view = h('div', { id: 'mem-view' });
  main.append(h('h2', {}, 'Memory browser'), userPicker('mem', (u) => openUser(view, u)), view);
  if (currentUser()) openUser(view, currentUser());
}

function openUser(view, user) {
  const list = h('div', { id: 'mem-list' }), detail = h('div', { id: 'mem-detail', class: 'panel', tabindex: '-1' }, 'Pick a memory to see it here.');
  const type = h('select', { id: 'mem-type' }, TYPES.map((t) => h('option', { value: t }, t || 'every type')));
  const query = h('input', { id: 'mem-query', type: 'search', placeholder: 'words or a question' });
  const before = h('input', { id: 'mem-before', type: 'datetime-local' });
  const listForm = h('form', { class: 'row', 'aria-label': 'List memories' }, field('Type', type),
    field('Before (UTC, empty: now)', before), h('button', { id: 'mem-list-go' }, 'List'));
  const searchForm = h('form', { class: 'row', 'aria-label': 'Search memories' }, field('Search', query), h('button', { id: 'mem-search-go' }, 'Search'));
  const open = (m) => showMemory(detail, user, m.id);
  listForm.addEventListener('submit', (e) => {
    e.preventDefault();
    listPage(list, user, { type: type.value, before: before.value ? new Date(before.value + 'Z').toISOString() : '' }, [''], open);
  });
  searchForm.addEventListener('submit', (e) => { e.preventDefault(); search(list, user, query.value, type.value, open); });
  view.replaceChildren(h('h3', {}, 'Memories of ' + user), listForm, searchForm,
    h('div', { class: 'grid' }, list, detail), factsSection(user), graphSection(user));
  listPage(list, user, { type: '', before: '' }, [''], open);
}

// listPage shows the page at cursors[cursors.length-1] (a server cursor; '' is the first page); cursors is the
// trail back to the first page.
async function listPage(list, user, filter, cursors, open) {
  const res = await listMemories(user, { ...filter, cursor: cursors[cursors.length - 1], limit: PAGE });
  const older = h('button', { id: 'mem-older', disabled: !res.next }, 'Next page');
  const newer = h('button', { id: 'mem-newer', disabled: cursors.length < 2 }, 'Previous page');
  older.addEventListener('click', () => listPage(list, user, filter, [...cursors, res.next], open));
  newer.addEventListener('click', () => listPage(list, user, filter, cursors.slice(0, -1), open));
  list.replaceChildren(memoryTable(res.memories, open, false), h('div', { class: 'row' }, newer, older,
    h('span', { class: 'muted' }, `page ${cursors.length}`)));
}

async function search(list, user, q, type, open) {
  const res = await api('/v1/search', { method: 'POST', body: { user_id: user, query: q, k: PAGE, types: type ? [type] : undefined } });
  list.replaceChildren(h('p', { class: 'muted', id: 'mem-search-count' }, `${res.results.length} results for “${q}”`), memoryTable(res.results, open, true));
}

function memoryTable(ms, open, scored) {
  const headers = ['When', 'Type', 'Text'];
  if (scored) headers.push({ label: 'Score', num: 1 });
  return table('mem-table', headers, ms.map((m) => {
    const row = [when(m.occurred_at), m.type, h('button', { class: 'link mem-open', 'data-id': m.id, onclick: () => open(m) }, m.text)];
    if (scored) row.push(m.score.toFixed(3));
    return row;
  }));
}

async function showMemory(detail, user, id) {
  const [m, hist, tiers] = await Promise.all([
    api('/v1/memories/' + enc(id), { query: { user_id: user } }),
    api(`/v1/users/${enc(user)}/history`, { query: { memory_id: id } }),
    api('/v1/tier/status', { query: { user_id: user } }).catch(() => null),
  ]);
  const tier = tiers?.types?.find((t) => t.type === m.type);
  detail.replaceChildren(h('h3', {}, 'Memory ' + m.id), h('p', { id: 'mem-text' }, m.text),
    h('dl', { class: 'kv' }, kv('Type', m.type), kv('Occurred', when(m.occurred_at)), kv('Created', when(m.created_at)),
      kv('Agent / run', [m.agent_id || '—', m.run_id || '—'].join(' / ')), kv('Scope', m.scope || 'private'),
      kv('Importance', m.importance), kv('Tags', (m.tags || []).join(', ') || '—'), kv('Entities', (m.entities || []).join(', ') || '—'),
      kv('Embedding model', m.embed_model || '—'), kv('Embedding', m.embedding ? `${m.embedding.length} dims, fingerprint ${fingerprint(m.embedding)}` : 'not returned'),
      kv('Tier', h('span', {}, badge('hot'), tier ? ` this type: ${tier.hot_count} hot, ${tier.cold_count} cold` : '')),
      ...Object.entries(m.metadata || {}).map(([k, v]) => kv('meta ' + k, v))),
    h('h3', {}, 'History'),
    hist.events.length
      ? table('mem-history', ['Time', 'Op', 'Cause'], hist.events.map((e) => [when(e.time), e.op, e.cause]))
      : h('p', { class: 'muted' }, 'No recorded changes: history is kept for what consolidation decides (facts, episodes, anomalies), not for plain puts.'));
  detail.focus();
}

const kv = (k, v) => [h('dt', {}, k), h('dd', {}, v)];

// fingerprint is a short FNV-1a hash of the vector's bytes: equal vectors, equal fingerprints.
function fingerprint(v) {
  let x = 0x811c9dc5;
  for (const b of new Uint8Array(new Float32Array(v).buffer)) x = Math.imul(x ^ b, 16777619) >>> 0;
  return x.toString(16).padStart(8, '0');
}

function factsSection(user) {
  const out = h('div', { id: 'facts' });
  const btn = h('button', { id: 'facts-go' }, 'Show facts, superseded included');
  btn.addEventListener('click', async () => {
    const res = await api(`/v1/users/${enc(user)}/facts`, { query: { all: true } });
    out.replaceChildren(factTimeline('fact-timeline', res.facts),
      table('fact-table', ['Statement', 'Status', 'Valid from', 'Valid to'], res.facts.map((f) => [
        h('span', { class: f.status === 'current' ? '' : 'strike' }, f.statement), badge(f.status), when(f.valid_from), when(f.valid_to) || 'now'])));
  });
  return h('section', { 'aria-label': 'Facts' }, h('h3', {}, 'Facts'), btn, out);
}

function graphSection(user) {
  const out = h('div', { id: 'graph' });
  const concept = h('input', { id: 'graph-concept', value: 'user' }), depth = h('input', { id: 'graph-depth', type: 'number', min: 0, max: 5, value: 2 });
  const form = h('form', { class: 'row', 'aria-label': 'Fact graph' }, field('Concept', concept), field('Depth', depth), h('button', { id: 'graph-go' }, 'Draw'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const g = await api(`/v1/users/${enc(user)}/graph`, { query: { concept: concept.value, depth: depth.value } });
    out.replaceChildren(graphDrawing('graph-svg', g));
  });
  return h('section', { 'aria-label': 'Fact graph' }, h('h3', {}, 'Fact graph'), form, out);
}
