/**
 * The status page's history charts, served in /status.js after the plan chart, with their styles.
 *
 * Draws /status/history.json (src/ops/history.ts) as SVG: energy per period as grouped bars (PV,
 * grid import and export, battery in and out, house), savings per period where the site has a
 * tariff, and the state of charge as a line, on one time axis labelled in the site's timezone with
 * a 24-hour clock. Each series carries its values in data-values and each panel its scale
 * (data-lo, data-hi, data-top, data-height), so what is drawn can be read back; each period's label
 * carries its interval in data-interval. Nothing from outside the gateway.
 */
import { DOM_HELPERS } from './status-chart.js';

const COLOURS: Record<string, string> = {
  pv: '#d69e2e',
  import: '#c53030',
  export: '#dd6b20',
  batteryIn: '#2b6cb0',
  batteryOut: '#63b3ed',
  house: '#5b6475',
  savings: '#1f8a4c',
  soc: '#1f8a4c',
};

export const HISTORY_JS = `(function () {
  'use strict';
  var host = document.getElementById('history');
  if (!host) return;
${DOM_HELPERS}  var W = 960, L = 64, R = 16;
  var NAMES = { pv: 'PV', import: 'grid import', export: 'grid export', batteryIn: 'battery in',
    batteryOut: 'battery out', house: 'house', savings: 'savings', soc: 'state of charge' };
  var view = 'day';
  function finite(v) { return typeof v === 'number' && isFinite(v); }
  // a scale's end as a tick: never '-0.00' for a value that rounds to nothing
  function tick(v, digits) { return (Math.abs(v) < Math.pow(10, -digits) / 2 ? 0 : v).toFixed(digits); }
  function labeller(body) {
    var tz = body.timezone;
    if (body.view === 'day')
      return new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    return new Intl.DateTimeFormat('en-GB', body.view === 'week'
      ? { timeZone: tz, weekday: 'short', day: 'numeric' } : { timeZone: tz, day: 'numeric' });
  }
  // one panel: bars (side by side in each period) or a line, with its scale on the frame
  function panel(svg, p, top, n, dx) {
    var all = [];
    p.series.forEach(function (s) { s.values.forEach(function (v) { if (finite(v)) all.push(v); }); });
    var lo = p.lo !== undefined ? p.lo : Math.min.apply(null, [0].concat(all));
    var hi = p.hi !== undefined ? p.hi : Math.max.apply(null, [0].concat(all));
    if (hi - lo < 1e-9) hi = lo + 1;
    var y = function (v) { return top + (p.height * (hi - v)) / (hi - lo); };
    var g = el('g', { class: 'panel', 'data-panel': p.id, 'data-lo': lo, 'data-hi': hi, 'data-top': top, 'data-height': p.height });
    g.appendChild(el('rect', { x: L, y: top, width: W - L - R, height: p.height, class: 'frame' }));
    g.appendChild(el('text', { x: L, y: top - 5, class: 'title' }, p.title));
    g.appendChild(el('text', { x: L - 6, y: top + 10, class: 'tick' }, tick(hi, p.digits)));
    g.appendChild(el('text', { x: L - 6, y: top + p.height, class: 'tick' }, tick(lo, p.digits)));
    if (lo < 0 && hi > 0) g.appendChild(el('line', { x1: L, x2: W - R, y1: y(0), y2: y(0), class: 'zero' }));
    var bw = (dx * 0.8) / p.series.length;
    p.series.forEach(function (s, j) {
      var values = s.values.map(function (v) { return finite(v) ? v : ''; }).join(',');
      var attrs = { class: 'series s-' + s.name, 'data-series': s.name, 'data-values': values };
      var node;
      if (p.line) {
        var pts = [];
        s.values.forEach(function (v, i) { if (finite(v)) pts.push((L + (i + 0.5) * dx).toFixed(1) + ',' + y(v).toFixed(2)); });
        attrs.points = pts.join(' ');
        node = el('polyline', attrs);
      } else {
        node = el('g', attrs);
        s.values.forEach(function (v, i) {
          if (!finite(v)) return;
          var y0 = y(Math.max(0, v)), y1 = y(Math.min(0, v));
          var bar = el('rect', { x: (L + i * dx + dx * 0.1 + j * bw).toFixed(1), y: y0.toFixed(2), width: bw.toFixed(1),
            height: (y1 - y0).toFixed(2), 'data-value': v });
          bar.appendChild(el('title', {}, NAMES[s.name] + ': ' + v));
          node.appendChild(bar);
        });
      }
      node.appendChild(el('title', {}, NAMES[s.name]));
      g.appendChild(node);
    });
    svg.appendChild(g);
  }
  function draw(body) {
    var n = body.intervals.length, dx = (W - L - R) / n, label = labeller(body);
    var panels = [{ id: 'energy', title: 'kWh per ' + (body.view === 'day' ? 'hour' : 'day'), height: 160, digits: 1,
      series: Object.keys(body.energy).map(function (k) { return { name: k, values: body.energy[k] }; }) }];
    if (body.savings)
      panels.push({ id: 'savings', title: 'savings (' + body.currency + ')', height: 80, digits: 2,
        series: [{ name: 'savings', values: body.savings }] });
    panels.push({ id: 'soc', title: 'state of charge %', height: 80, digits: 0, lo: 0, hi: 100, line: true,
      series: [{ name: 'soc', values: body.soc }] });
    var height = panels.reduce(function (s, p) { return s + p.height + 28; }, 0) + 20;
    var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + height, role: 'img', class: 'history',
      'aria-label': 'Energy history', 'data-view': body.view, 'data-periods': n });
    var top = 18;
    panels.forEach(function (p) { panel(svg, p, top, n, dx); top += p.height + 28; });
    body.intervals.forEach(function (iv, i) {
      var start = new Date(iv.split('/')[0]);
      svg.appendChild(el('text', { x: L + (i + 0.5) * dx, y: top - 14, class: 'time', 'data-interval': iv }, label.format(start)));
    });
    host.textContent = '';
    host.appendChild(svg);
    var legend = html('p', 'plan-legend');
    panels.forEach(function (p) {
      p.series.forEach(function (s) {
        var item = html('span', 'key');
        item.appendChild(html('i', 'swatch s-' + s.name));
        item.appendChild(document.createTextNode(NAMES[s.name]));
        legend.appendChild(item);
      });
    });
    host.appendChild(legend);
    host.dataset.drawn = String(Number(host.dataset.drawn || 0) + 1);
  }
  var timer;
  function load() {
    clearTimeout(timer);
    fetch('/status/history.json?view=' + view, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(draw)
      .catch(function (err) { host.textContent = 'cannot load the history (' + err.message + ')'; })
      .finally(function () { timer = setTimeout(load, 300000); });
  }
  document.querySelectorAll('button[data-history]').forEach(function (b) {
    b.addEventListener('click', function () {
      view = b.dataset.history;
      document.querySelectorAll('button[data-history]').forEach(function (o) { o.classList.toggle('on', o === b); });
      load();
    });
  });
  load();
})();
`;

export const HISTORY_CSS = `svg.history{width:100%;display:block}.history .frame{fill:none;stroke:var(--line)}
.history .title{font-size:11px;fill:var(--muted)}.history .tick{font-size:10px;fill:var(--muted);text-anchor:end}
.history .time{font-size:10px;fill:var(--muted);text-anchor:middle}.history .zero{stroke:#9aa3b2}
.history polyline.series{fill:none;stroke-width:1.6}
.views button{border:1px solid var(--line);background:#fff;border-radius:4px;padding:.2rem .7rem;cursor:pointer}.views button.on{background:#1d2330;color:#fff}
${Object.entries(COLOURS)
  .map(([s, c]) => `.history g.s-${s}{fill:${c}}.history polyline.s-${s}{stroke:${c}}.swatch.s-${s}{background:${c}}`)
  .join('\n')}
`;
