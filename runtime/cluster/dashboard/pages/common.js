// The dashboard pages' shared code: the JSON API, DOM built with textContent
// only (names and notes come from peers: never parsed as HTML), numbers, and
// SVG charts drawn as the comparison report draws them.
'use strict';
const SVG = 'http://www.w3.org/2000/svg';
const COLORS = {compute: '#59a14f', comm: '#4e79a7', wait: '#e15759'};
const LINE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7'];

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'style') e.style.cssText = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c)));
  return e;
}
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
function replace(id, node) {
  const old = document.getElementById(id);
  node.id = id;
  old.replaceWith(node);
}

// -- numbers ------------------------------------------------------------------
function num(x, digits) {
  if (x == null || !isFinite(x)) return '–';
  const a = Math.abs(x);
  if (digits == null) digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return x.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: 0});
}
// An axis label: as many decimals as the ticks' step needs; thousands as k, millions as M.
function tickLabel(v, step) {
  const a = Math.abs(v);
  if (a >= 1e6) return +(v / 1e6).toFixed(Math.max(0, Math.ceil(-Math.log10(step / 1e6)))) + 'M';
  if (a >= 1e4) return +(v / 1e3).toFixed(Math.max(0, Math.ceil(-Math.log10(step / 1e3)))) + 'k';
  return v.toFixed(Math.min(6, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9))));
}
function sig(x) { return x == null || !isFinite(x) ? '–' : Number(x.toPrecision(3)).toString(); }
function pct(x) { return x == null || !isFinite(x) ? '–' : (100 * x).toFixed(1) + ' %'; }
function acc(x) { return x == null || !isFinite(x) || x < 0 ? '–' : x.toFixed(4); }
function secs(s) {
  if (s == null || !isFinite(s)) return '–';
  if (s < 1) return (1000 * s).toFixed(s < 0.01 ? 2 : 1) + ' ms';
  if (s < 120) return s.toFixed(1) + ' s';
  if (s < 7200) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
}
function stateBadge(state) { return el('span', {class: 'state ' + state}, state); }
function progressBar(f) {
  const bar = el('span', {class: 'bar'}, el('i', {style: 'width:' + Math.max(0, Math.min(100, 100 * f)).toFixed(1) + '%'}));
  return el('span', {}, bar, pct(f));
}

// -- the API, polled ----------------------------------------------------------
// Calls `show(data)` with `path`'s JSON every `ms` (every 10 s while the tab
// is hidden), and marks #live stale when the head does not answer.
function poll(path, ms, show) {
  const live = document.getElementById('live');
  async function once() {
    try {
      const r = await fetch(path, {credentials: 'same-origin', cache: 'no-store'});
      if (r.status === 401) { location.reload(); return; }
      if (!r.ok) throw new Error(r.status + ' ' + (await r.text()));
      show(await r.json());
      live.className = 'live';
      live.lastChild.textContent = 'live, updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      live.className = 'live stale';
      live.lastChild.textContent = 'not updating: ' + e.message;
    }
    setTimeout(once, document.hidden ? 10000 : ms);
  }
  once();
}

// -- charts -------------------------------------------------------------------
function ticks(lo, hi, n) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(+t.toPrecision(12));
  return out;
}
// A line chart: `series` = [{name, color, points: [[x, y], ...]}]; opts: xLabel, yLabel, yMin, yMax, w, h,
// yFmt, logY (a log scale when the values span more than two decades: a loss).
function lineChart(series, opts) {
  const ys = series.flatMap(s => s.points.map(p => p[1]));
  if (opts.logY && ys.length && Math.min(...ys) > 0 && Math.max(...ys) / Math.min(...ys) > 100) {
    const logged = series.map(s => ({...s, points: s.points.map(p => [p[0], Math.log10(p[1])])}));
    return lineChart(logged, {...opts, logY: false, log: true, yMin: undefined, yMax: undefined});
  }
  const w = opts.w || 560, h = opts.h || 220, l = 62, r = 12, t = 10, b = 34;
  const pts = series.flatMap(s => s.points);
  const root = svg('svg', {width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: 'img'});
  if (!pts.length) {
    root.append(svg('text', {x: w / 2, y: h / 2, 'text-anchor': 'middle', fill: '#888', 'font-size': 13}, opts.empty || 'no data yet'));
    return root;
  }
  let x0 = Math.min(0, ...pts.map(p => p[0])), x1 = Math.max(...pts.map(p => p[0]));
  let y0 = opts.yMin != null ? opts.yMin : Math.min(...pts.map(p => p[1]));
  let y1 = opts.yMax != null ? opts.yMax : Math.max(...pts.map(p => p[1]));
  if (opts.yMin == null && y0 > 0 && y0 < 0.3 * y1) y0 = 0;
  if (!(y1 > y0)) { y1 = y0 + (Math.abs(y0) || 1) * 0.1; y0 -= (Math.abs(y0) || 1) * 0.1; }
  if (!(x1 > x0)) x1 = x0 + 1;
  const X = x => l + (x - x0) / (x1 - x0) * (w - l - r), Y = y => t + (1 - (y - y0) / (y1 - y0)) * (h - t - b);
  const yt = ticks(y0, y1, 4), ystep = yt.length > 1 ? yt[1] - yt[0] : 1;
  const yfmt = opts.yFmt || (v => num(v, 6));
  for (const v of yt) {
    root.append(svg('line', {x1: l, x2: w - r, y1: Y(v), y2: Y(v), stroke: '#eee'}));
    const label = opts.log ? (Number.isInteger(v) ? (v >= 0 && v < 4 ? String(10 ** v) : '1e' + v) : '') : tickLabel(v, ystep);
    root.append(svg('text', {x: l - 6, y: Y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#555'}, label));
  }
  const xt = ticks(x0, x1, 6), xstep = xt.length > 1 ? xt[1] - xt[0] : 1;
  for (const v of xt) {
    root.append(svg('line', {x1: X(v), x2: X(v), y1: h - b, y2: h - b + 4, stroke: '#999'}));
    root.append(svg('text', {x: X(v), y: h - b + 16, 'text-anchor': 'middle', 'font-size': 11, fill: '#555'}, tickLabel(v, xstep)));
  }
  root.append(svg('line', {x1: l, x2: w - r, y1: h - b, y2: h - b, stroke: '#999'}));
  root.append(svg('text', {x: (l + w - r) / 2, y: h - 4, 'text-anchor': 'middle', 'font-size': 11, fill: '#555'}, opts.xLabel || 'run time (s)'));
  if (opts.yLabel)
    root.append(svg('text', {x: 11, y: t + (h - t - b) / 2, 'text-anchor': 'middle', 'font-size': 11, fill: '#555',
                             transform: `rotate(-90 11 ${t + (h - t - b) / 2})`}, opts.yLabel));
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const color = s.color || LINE[i % LINE.length];
    const d = s.points.map((p, k) => (k ? 'L' : 'M') + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1)).join('');
    root.append(svg('path', {d, fill: 'none', stroke: color, 'stroke-width': 1.8, 'stroke-linejoin': 'round'}));
    const last = s.points[s.points.length - 1];
    const shown = opts.log ? 10 ** last[1] : last[1];
    root.append(svg('circle', {cx: X(last[0]), cy: Y(last[1]), r: 3, fill: color}, svg('title', {}, s.name + ': ' + yfmt(shown))));
  });
  return root;
}

// The last minute per worker: per bin, the shares of computing, communicating
// and waiting stacked from the bottom; barriers as ticks in a row above.
function timelineChart(tl, opts) {
  const rows = tl.workers.length, bins = tl.barriers.length;
  const w = (opts && opts.w) || 1150, l = 80, r = 10, rowH = rows > 24 ? 10 : 22, top = 20, b = 30;
  const h = top + rows * (rowH + 3) + b;
  const root = svg('svg', {width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: 'img'});
  if (!rows || tl.end_s == null) {
    root.setAttribute('height', 40);
    root.append(svg('text', {x: 10, y: 24, fill: '#888', 'font-size': 13}, 'no worker has reported yet'));
    return root;
  }
  // The window's first minute starts at the run's start and fills from the left; then it scrolls.
  const bw = (w - l - r) / bins, span = bins * tl.bin_s, start = Math.max(0, tl.end_s - span);
  const first = Math.round((tl.end_s - span - start) / tl.bin_s);  // bins before the run's start: none drawn
  root.append(svg('text', {x: 4, y: 13, 'font-size': 11, fill: '#555'}, 'barriers'));
  tl.barriers.forEach((n, k) => {
    if (n > 0 && k + first >= 0) root.append(svg('rect', {x: l + (k + first) * bw, y: 4, width: Math.max(1, bw - 0.5), height: 12, fill: '#555'},
                                svg('title', {}, n + ' barrier' + (n > 1 ? 's' : ''))));
  });
  tl.workers.forEach((wk, i) => {
    const y = top + i * (rowH + 3);
    root.append(svg('text', {x: 4, y: y + rowH / 2 + 4, 'font-size': 11, fill: '#555'}, 'worker ' + i));
    root.append(svg('rect', {x: l, y, width: w - l - r, height: rowH, fill: '#f4f4f4'}));
    for (let k = Math.max(0, -first); k < bins; ++k) {
      let base = y + rowH;
      for (const c of ['compute', 'comm', 'wait']) {
        const share = wk[c][k];
        if (share > 0) {
          const hh = share * rowH;
          root.append(svg('rect', {x: l + (k + first) * bw, y: base - hh, width: bw + 0.3, height: hh, fill: COLORS[c]}));
          base -= hh;
        }
      }
    }
  });
  const axisY = top + rows * (rowH + 3) + 4;
  for (const v of ticks(start, start + span, 8)) {
    if (v < start) continue;
    const x = l + (v - start) / tl.bin_s * bw;
    root.append(svg('line', {x1: x, x2: x, y1: axisY, y2: axisY + 4, stroke: '#999'}));
    root.append(svg('text', {x, y: axisY + 16, 'text-anchor': 'middle', 'font-size': 11, fill: '#555'}, num(v) + ' s'));
  }
  return root;
}

function legend(items) {
  return el('p', {class: 'legend'}, items.map(([name, color]) => el('span', {}, el('i', {class: 'swatch', style: 'background:' + color}), name)));
}
