// Small DOM helpers: every value reaches the page as text, never as markup.

const SVGNS = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
export const s = (tag, attrs, ...children) => build(document.createElementNS(SVGNS, tag), attrs, children);

export function clear(el) { while (el.firstChild) el.firstChild.remove(); return el; }

export function table(id, headers, rows, caption) {
  return h('table', { id },
    caption ? h('caption', { class: 'muted' }, caption) : null,
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col', class: x.num ? 'num' : null }, x.label || x)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { class: headers[i].num ? 'num' : null }, c))))));
}

export function badge(text) { return h('span', { class: 'badge ' + text }, text); }

export function bytes(n) {
  if (!n) return '0 B';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + ' ' + u[i];
}

export function when(t) { return t ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) : ''; }

export function field(label, input) { return h('label', {}, label, input); }
