// Cluster page: GET /v1/cluster/status, refreshed every few seconds while the page is open.
import { api } from './api.js';
import { h, table, badge, bytes } from './dom.js';

const EVERY = 5000;

export function clusterPage(main, signal) {
  const auto = h('input', { type: 'checkbox', id: 'auto-refresh', checked: true });
  const stamp = h('span', { class: 'muted', id: 'refreshed' });
  const body = h('div', { id: 'cluster' });
  main.append(h('h2', {}, 'Cluster'), h('div', { class: 'row' }, h('label', {}, auto, ' Refresh every 5 s'), stamp), body);
  const load = async () => {
    const st = await api('/v1/cluster/status');
    body.replaceChildren(...render(st));
    stamp.textContent = 'as node ' + st.node_id + ' saw it at ' + new Date().toLocaleTimeString();
  };
  // A failed refresh is said beside the time of the last good one; the tables keep what they showed.
  const timer = setInterval(() => auto.checked && load().catch((e) => { stamp.textContent = 'refresh failed: ' + e.message; }), EVERY);
  signal.addEventListener('abort', () => clearInterval(timer));
  return load();
}

function render(st) {
  const leaderless = st.shards.filter((x) => !x.leader).length;
  const under = st.shards.filter((x) => x.live_replicas < x.want_replicas).length;
  const draining = st.nodes.filter((n) => n.state === 'draining');
  const health = st.healthy
    ? h('p', { class: 'health ok', id: 'health' }, `Healthy: ${st.nodes.length} nodes, ${st.shards.length} shards, every shard led and fully replicated`)
    : h('p', { class: 'health bad', id: 'health' }, `Degraded: ${leaderless} shards without a leader, ${under} under-replicated`);
  const work = [
    `${st.moves.length} replica moves under way`,
    `${draining.length} nodes draining${draining.length ? ': ' + draining.map((n) => n.id).join(', ') : ''}`,
    st.split ? `split of shard ${st.split.shard} into ${st.split.child} under way` : 'no split under way',
    st.rebalance_paused ? 'rebalancing paused' : 'rebalancing on',
    `shard map version ${st.map_version}, ${st.buckets} buckets`,
  ];
  return [
    health,
    h('ul', { id: 'work' }, work.map((w) => h('li', {}, w))),
    h('h3', {}, `Nodes (${st.nodes.length})`),
    table('nodes', ['Node', 'State', 'Zone', 'HTTP', { label: 'Replicas', num: 1 }, { label: 'Leaders', num: 1 }, { label: 'Disk', num: 1 }],
      st.nodes.map((n) => [n.id, badge(n.state), n.zone || '—', n.http_addr, n.replicas, n.leaders, bytes(n.bytes)])),
    h('h3', {}, `Shards (${st.shards.length})`),
    table('shards', [{ label: 'Shard', num: 1 }, 'Leader', 'Replicas', 'Range', { label: 'Memories', num: 1 }, { label: 'Size', num: 1 }, { label: 'Applied', num: 1 }, { label: 'Max lag', num: 1 }, 'State'],
      st.shards.map(shardRow)),
    st.moves.length ? h('h3', {}, 'Moves') : null,
    st.moves.length ? table('moves', ['Shard', 'From', 'To', 'Stage'], st.moves.map((m) => [m.shard, m.from || '—', m.to || '—', m.stage])) : null,
  ].filter(Boolean);
}

function shardRow(x) {
  const lag = Math.max(0, ...(x.progress || []).map((p) => p.lag));
  const state = [x.leader ? badge('ok') : badge('bad'), x.moving ? ' moving' : '', x.splitting ? ' splitting' : ''];
  return [x.id, x.leader || 'none', `${x.replicas.join(', ')} (${x.live_replicas}/${x.want_replicas} live)`,
    `${x.range.bucket}:${x.range.first}–${x.range.last}`, x.memories < 0 ? '?' : x.memories, bytes(x.bytes), x.applied_index || '', lag, h('span', {}, state)];
}
