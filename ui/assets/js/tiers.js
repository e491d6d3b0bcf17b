// Tiers and signals: hot and cold bytes per type (the cluster's with a token that sees every user, else one
// user's), and one perceptual signal's daily aggregates with its anomalies.
import { api, enc } from './api.js';
import { h, table, bytes, field } from './dom.js';
import { tierBars, signalChart } from './charts.js';
import { userPicker, currentUser } from './users.js';

export async function tiersPage(main) {
  const cluster = h('div', { id: 'tiers-cluster' }), user = h('div', { id: 'tiers-user' });
  main.append(h('h2', {}, 'Tiers and signals'), h('h3', {}, 'Cluster'), cluster,
    userPicker('tier', (u) => openUser(user, u)), user);
  if (currentUser()) openUser(user, currentUser());
  try {
    const st = await api('/v1/tier/status');
    cluster.replaceChildren(...tierView('tier-cluster', st.types), h('p', { class: 'muted' }, `${(st.shards || []).length} shards${st.partial ? ', some did not answer' : ''}`));
  } catch (e) {
    cluster.replaceChildren(h('p', { class: 'muted' }, e.status === 403 ? 'the cluster totals need a token that sees every user' : e.message));
  }
}

function tierView(id, types) {
  return [tierBars(id + '-chart', types),
    table(id, ['Type', { label: 'Hot', num: 1 }, { label: 'Hot bytes', num: 1 }, { label: 'Cold', num: 1 }, { label: 'Cold bytes', num: 1 }, { label: 'Archive entries', num: 1 }],
      types.map((t) => [t.type, t.hot_count, bytes(t.hot_bytes), t.cold_count, bytes(t.cold_bytes), t.archive_entries]))];
}

async function openUser(out, user) {
  const st = await api('/v1/tier/status', { query: { user_id: user } });
  const sig = h('input', { id: 'signal-name', value: 'heart_rate', required: true });
  const chart = h('div', { id: 'signal-chart' });
  const form = h('form', { class: 'row', 'aria-label': 'Signal' }, field('Signal', sig), h('button', { id: 'signal-go' }, 'Chart'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const [agg, anomalies] = await Promise.all([
      api(`/v1/users/${enc(user)}/signals/${enc(sig.value)}/daily`),
      api('/v1/search', { method: 'POST', body: { user_id: user, query: sig.value, k: 100, min_score: 0, tags: ['anomaly', sig.value] } }),
    ]);
    const days = new Set(anomalies.results.map((m) => m.occurred_at.slice(0, 10)));
    chart.replaceChildren(signalChart('signal-svg', sig.value, agg.days, days),
      h('p', { class: 'muted' }, `${agg.days.length} days, ${days.size} with an anomaly`));
  });
  out.replaceChildren(h('h3', {}, 'User ' + user + ' (shard ' + st.shard + ')'), ...tierView('tier-user', st.types),
    h('h3', {}, 'Perceptual signal'), form, chart);
}
