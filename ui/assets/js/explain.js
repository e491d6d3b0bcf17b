// Query explain: a search with every candidate's component scores (min score 0 keeps them all), or a context
// request with explain on: the plan, each stage, confidence, escalation and what was left out.
import { api, enc } from './api.js';
import { h, table, field } from './dom.js';
import { userPicker, currentUser } from './users.js';

export function explainPage(main) {
  const q = h('input', { id: 'ex-query', required: true, size: 40 });
  const kind = h('select', { id: 'ex-kind' }, h('option', { value: 'context' }, 'context (explain)'),
    h('option', { value: 'hybrid' }, 'search, hybrid'), h('option', { value: 'pipeline' }, 'search, pipeline'));
  const k = h('input', { id: 'ex-k', type: 'number', min: 1, max: 1000, value: 20 });
  const budget = h('input', { id: 'ex-budget', type: 'number', min: 20, max: 100000, value: 400 });
  const out = h('div', { id: 'ex-out' });
  const form = h('form', { class: 'row', 'aria-label': 'Run a query' }, field('Query', q), field('Kind', kind),
    field('Candidates (k)', k), field('Token budget', budget), h('button', { id: 'ex-run' }, 'Explain'));
  let user = currentUser();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!user) throw new Error('pick a user first');
    out.replaceChildren(h('p', { class: 'muted' }, 'running…'));
    out.replaceChildren(...(kind.value === 'context'
      ? renderContext(await api(`/v1/users/${enc(user)}/context`, { method: 'POST', body: { query: q.value, budget: +budget.value, explain: true } }))
      : renderSearch(await api('/v1/search', { method: 'POST', body: { user_id: user, query: q.value, k: +k.value, min_score: 0, mode: kind.value } }))));
  });
  main.append(h('h2', {}, 'Query explain'), userPicker('ex', (u) => { user = u; }), form, out);
}

function renderSearch(res) {
  const plan = res.results[0]?.plan;
  return [
    h('h3', {}, 'Plan'),
    plan ? h('pre', { id: 'ex-plan' }, JSON.stringify(plan, null, 2)) : h('p', { id: 'ex-plan' }, 'hybrid: 0.7 × vector + 0.3 × BM25 (normalised), × recency; every candidate below, min score 0'),
    h('h3', {}, `Candidates (${res.results.length})`),
    table('ex-candidates', ['Text', 'Type', { label: 'Score', num: 1 }, { label: 'Vector', num: 1 }, { label: 'BM25', num: 1 },
      { label: 'Recency', num: 1 }, { label: 'Context', num: 1 }, { label: 'Actor', num: 1 }],
    res.results.map((r) => [r.text, r.type, f(r.score), f(r.vector_score), f(r.text_score), f(r.recency), f(r.context), f(r.actor)])),
  ];
}

const f = (v) => (v === undefined ? '—' : v.toFixed(3));

function renderContext(res) {
  return [
    h('p', { id: 'ex-summary', class: 'health ' + (res.uncertain ? 'bad' : 'ok') },
      `confidence ${f(res.confidence)}${res.uncertain ? ' (uncertain)' : ''}; ${res.escalated ? 'escalated to the archive' : 'not escalated'}; ${res.tokens}/${res.budget} tokens`),
    h('h3', {}, 'Confidence parts'),
    table('ex-confidence', ['Part', { label: 'Value', num: 1 }, { label: 'Weight', num: 1 }, 'Applies', 'Why'],
      confidenceParts(res).map((p) => [p.name, f(p.value), f(p.weight), p.applies ? 'yes' : 'no', p.why])),
    h('h3', {}, 'Plan'), h('pre', { id: 'ex-plan' }, JSON.stringify(res.plan, null, 2)),
    h('h3', {}, 'Stages'),
    table('ex-stages', ['Stage', 'Detail'], (res.stages || []).map((s) => [s.stage, h('pre', {}, JSON.stringify(s.detail, null, 2))])),
    h('h3', {}, 'Evidence'),
    table('ex-candidates', ['Block', 'Text', { label: 'Score', num: 1 }, 'Tier', 'Cue'],
      res.blocks.flatMap((b) => b.items.map((i) => [b.kind, i.text, f(i.score), i.tier, i.cue]))),
    h('h3', {}, 'Left out'),
    table('ex-left-out', ['Memory', 'Reason'], (res.left_out || []).map((l) => [l.id, l.reason])),
  ];
}

const confidenceParts = (res) => (res.stages || []).find((s) => s.stage === 'confidence')?.detail?.parts || [];
