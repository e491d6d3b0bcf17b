// SVG drawings: a daily signal with its anomalies, tier sizes, fact validity on a timeline, a fact graph.
import { s, bytes } from './dom.js';

const W = 640;

function frame(id, height, title) {
  return s('svg', { id, viewBox: `0 0 ${W} ${height}`, width: W, height, role: 'img', 'aria-label': title }, s('title', {}, title));
}

function scale(d0, d1, r0, r1) {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

// signalChart draws each day's mean with its min..max range; days with an anomaly get a red ring.
export function signalChart(id, signal, days, anomalyDays) {
  const H = 240, pad = 40;
  const svg = frame(id, H, `${signal}: daily mean, min and max over ${days.length} days; ${anomalyDays.size} anomalies marked`);
  if (!days.length) return svg;
  const t = days.map((d) => Date.parse(d.day));
  const x = scale(Math.min(...t), Math.max(...t), pad, W - 10);
  const y = scale(Math.min(...days.map((d) => d.min)), Math.max(...days.map((d) => d.max)), H - pad, 10);
  svg.append(s('line', { class: 'axis', x1: pad, y1: H - pad, x2: W - 10, y2: H - pad }),
    s('line', { class: 'axis', x1: pad, y1: 10, x2: pad, y2: H - pad }),
    s('text', { x: 2, y: 14 }, fmt(Math.max(...days.map((d) => d.max)))),
    s('text', { x: 2, y: H - pad }, fmt(Math.min(...days.map((d) => d.min)))),
    s('text', { x: pad, y: H - 22 }, days[0].day.slice(0, 10)),
    s('text', { x: W - 90, y: H - 22 }, days[days.length - 1].day.slice(0, 10)));
  days.forEach((d, i) => svg.append(s('line', { x1: x(t[i]), x2: x(t[i]), y1: y(d.min), y2: y(d.max), stroke: '#9ab', 'stroke-width': 3 })));
  svg.append(s('polyline', { fill: 'none', stroke: '#0b5cad', 'stroke-width': 2, points: days.map((d, i) => `${x(t[i])},${y(d.mean)}`).join(' ') }));
  days.forEach((d, i) => {
    const anomaly = anomalyDays.has(d.day.slice(0, 10));
    svg.append(s('circle', { cx: x(t[i]), cy: y(d.mean), r: anomaly ? 7 : 3, fill: anomaly ? 'none' : '#0b5cad',
      stroke: anomaly ? '#c62828' : 'none', 'stroke-width': 3, class: anomaly ? 'anomaly' : null },
    s('title', {}, `${d.day.slice(0, 10)}: mean ${fmt(d.mean)}, min ${fmt(d.min)}, max ${fmt(d.max)}, ${d.count} samples${anomaly ? ', anomaly' : ''}`)));
  });
  svg.append(s('text', { x: W - 200, y: H - 4 }, '● mean  | min–max  ○ anomaly'));
  return svg;
}

const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2));

// tierBars draws hot and cold bytes per memory type side by side.
export function tierBars(id, types) {
  const rowH = 34, H = types.length * rowH + 20, left = 90;
  const svg = frame(id, H, 'hot and cold bytes per memory type');
  const max = Math.max(1, ...types.map((t) => Math.max(t.hot_bytes, t.cold_bytes)));
  const x = scale(0, max, 0, W - left - 110);
  types.forEach((t, i) => {
    const y0 = 10 + i * rowH;
    svg.append(s('text', { x: 0, y: y0 + 18 }, t.type),
      s('rect', { x: left, y: y0, width: x(t.hot_bytes), height: 12, fill: '#1a7f37' }),
      s('text', { x: left + x(t.hot_bytes) + 4, y: y0 + 10 }, 'hot ' + bytes(t.hot_bytes)),
      s('rect', { x: left, y: y0 + 14, width: x(t.cold_bytes), height: 12, fill: '#9a6700' }),
      s('text', { x: left + x(t.cold_bytes) + 4, y: y0 + 25 }, 'cold ' + bytes(t.cold_bytes)));
  });
  return svg;
}

// factTimeline draws each fact's validity interval; superseded and retracted facts are struck through.
export function factTimeline(id, facts) {
  const rowH = 22, left = 300, H = facts.length * rowH + 40, now = Date.now();
  const svg = frame(id, H, `validity of ${facts.length} facts over time`);
  if (!facts.length) return svg;
  const from = Math.min(...facts.map((f) => Date.parse(f.valid_from)));
  const to = Math.max(now, ...facts.map((f) => (f.valid_to ? Date.parse(f.valid_to) : now)));
  const x = scale(from, to, left, W - 10);
  facts.forEach((f, i) => {
    const y0 = 10 + i * rowH, retired = f.status !== 'current';
    const end = f.valid_to ? Date.parse(f.valid_to) : now;
    svg.append(s('text', { x: 0, y: y0 + 12, 'text-decoration': retired ? 'line-through' : null, class: retired ? 'retired' : 'current', fill: retired ? '#555' : null },
      trim(f.statement, 44), s('title', {}, `${f.statement} (${f.status})`)),
    s('rect', { x: x(Date.parse(f.valid_from)), y: y0 + 2, width: Math.max(2, x(end) - x(Date.parse(f.valid_from))), height: 12,
      fill: retired ? '#c9a14a' : '#1a7f37', opacity: retired ? 0.6 : 1 },
    s('title', {}, `${f.valid_from.slice(0, 10)} – ${f.valid_to ? f.valid_to.slice(0, 10) : 'now'}: ${f.status}`)));
  });
  svg.append(s('text', { x: left, y: H - 8 }, new Date(from).toISOString().slice(0, 10)),
    s('text', { x: W - 80, y: H - 8 }, new Date(to).toISOString().slice(0, 10)));
  return svg;
}

const trim = (t, n) => (t.length > n ? t.slice(0, n - 1) + '…' : t);

// graphDrawing places the concept in the middle and each further hop on a wider ring.
export function graphDrawing(id, g) {
  const H = 420, cx = W / 2, cy = H / 2;
  const svg = frame(id, H, `fact graph: ${g.nodes.length} concepts, ${g.edges.length} facts`);
  const rings = {};
  g.nodes.forEach((n) => (rings[n.hops] = rings[n.hops] || []).push(n));
  const pos = {};
  for (const [hops, ns] of Object.entries(rings)) {
    const r = hops * 150;
    ns.forEach((n, i) => {
      const a = (2 * Math.PI * i) / ns.length + hops * 0.4;
      pos[n.key || n.id] = { x: cx + r * Math.cos(a) * 1.4, y: cy + r * Math.sin(a) * 0.8 };
    });
  }
  for (const e of g.edges) {
    const a = pos[e.from], b = pos[e.to];
    if (!a || !b) continue;
    svg.append(s('line', { x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: '#8c959f' }, s('title', {}, e.statement)),
      s('text', { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, fill: '#555' }, e.predicate));
  }
  for (const n of g.nodes) {
    const p = pos[n.key || n.id];
    svg.append(s('circle', { cx: p.x, cy: p.y, r: n.hops ? 6 : 9, fill: n.hops ? '#0b5cad' : '#c62828' }),
      s('text', { x: p.x + 10, y: p.y + 4, class: 'node' }, n.id));
  }
  return svg;
}
