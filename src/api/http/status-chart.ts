/** el() for SVG, html() for HTML elements: shared by the page's charts (each its own closure). */
export const DOM_HELPERS = `  var NS = 'http://www.w3.org/2000/svg';
  function el(name, attrs, text) {
    var n = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function html(name, cls, text) {
    var n = document.createElement(name);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }
`;

/**
 * The status page's plan chart, served after STATUS_JS in /status.js, with its styles.
 *
 * Draws the optimiser's plans (/status/plan.json, docs/optimiser.md "Reading the chart") as SVG:
 * prices, forecast PV and load with the planned battery power, and the SoC, one panel each on a
 * shared time axis. Every series is a polyline with one point per plan slot; its values ride along
 * in data-values and each panel names its scale (data-lo, data-hi, data-top, data-height), so what
 * is drawn can be read back. Loaded at start and every minute; nothing from outside the gateway.
 */
export const PLAN_CHART_JS = `(function () {
  'use strict';
  var host = document.getElementById('plan-chart');
  if (!host) return;
  var W = 960, L = 64, R = 16;
  var PANELS = [
    { id: 'price', title: 'price per kWh', height: 110, series: ['importPrice', 'exportPrice'], digits: 2 },
    { id: 'power', title: 'W', height: 150, series: ['pvW', 'loadW', 'batteryW', 'curtailW'], digits: 0 },
    { id: 'soc', title: 'SoC %', height: 80, series: ['socEnd'], lo: 0, hi: 100, digits: 0 }
  ];
  var NAMES = { importPrice: 'import price', exportPrice: 'export price', pvW: 'PV forecast',
    loadW: 'load forecast', batteryW: 'planned battery power (+ charge)', curtailW: 'planned PV curtailment',
    socEnd: 'planned SoC' };
${DOM_HELPERS}  function chart(plan, timezone) {
    var slots = plan.slots, n = slots.length, dx = (W - L - R) / n;
    var hhmm = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    var day = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, weekday: 'short' });
    var height = PANELS.reduce(function (s, p) { return s + p.height + 28; }, 0) + 20;
    var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + height, role: 'img', class: 'plan',
      'aria-label': 'Battery plan of ' + plan.deviceId, 'data-device': plan.deviceId, 'data-slots': n });
    var top = 18;
    PANELS.forEach(function (p) {
      var all = [];
      p.series.forEach(function (s) { slots.forEach(function (x) { all.push(x[s]); }); });
      var lo = p.lo !== undefined ? p.lo : Math.min(0, Math.min.apply(null, all));
      var hi = p.hi !== undefined ? p.hi : Math.max.apply(null, all);
      if (hi - lo < 1e-9) hi = lo + 1;
      var y = function (v) { return top + (p.height * (hi - v)) / (hi - lo); };
      var g = el('g', { class: 'panel', 'data-panel': p.id, 'data-lo': lo, 'data-hi': hi, 'data-top': top, 'data-height': p.height });
      g.appendChild(el('rect', { x: L, y: top, width: W - L - R, height: p.height, class: 'frame' }));
      g.appendChild(el('text', { x: L, y: top - 5, class: 'title' }, p.title));
      g.appendChild(el('text', { x: L - 6, y: top + 10, class: 'tick' }, hi.toFixed(p.digits)));
      g.appendChild(el('text', { x: L - 6, y: top + p.height, class: 'tick' }, lo.toFixed(p.digits)));
      if (lo < 0 && hi > 0) {
        g.appendChild(el('line', { x1: L, x2: W - R, y1: y(0), y2: y(0), class: 'zero' }));
        g.appendChild(el('text', { x: L - 6, y: y(0) + 4, class: 'tick' }, '0'));
      }
      slots.forEach(function (s, i) {
        // a line at each local midnight and every six hours, labelled under the last panel
        var t = hhmm.format(new Date(s.start));
        if (t === '00:00' || t === '06:00' || t === '12:00' || t === '18:00') {
          var x = L + i * dx;
          g.appendChild(el('line', { x1: x, x2: x, y1: top, y2: top + p.height, class: t === '00:00' ? 'midnight' : 'hour' }));
          if (p.id === 'soc')
            g.appendChild(el('text', { x: x, y: top + p.height + 14, class: 'time' }, (t === '00:00' ? day.format(new Date(s.start)) + ' ' : '') + t));
        }
      });
      p.series.forEach(function (s) {
        var pts = slots.map(function (x, i) { return (L + (i + 0.5) * dx).toFixed(1) + ',' + y(x[s]).toFixed(2); });
        var line = el('polyline', { points: pts.join(' '), class: 'series s-' + s, 'data-series': s,
          'data-values': slots.map(function (x) { return x[s]; }).join(',') });
        line.appendChild(el('title', {}, NAMES[s]));
        g.appendChild(line);
      });
      svg.appendChild(g);
      top += p.height + 28;
    });
    var box = html('div', 'plan-box');
    box.appendChild(html('p', '', plan.deviceId + ': plan made ' + hhmm.format(new Date(plan.madeAt)) +
      ', ' + n + ' slots of ' + plan.slotMinutes + ' min; cost ' + plan.cost.toFixed(2) +
      ' against ' + plan.baselineCost.toFixed(2) + ' in self-consumption on the same forecast'));
    box.appendChild(svg);
    var legend = html('p', 'plan-legend');
    Object.keys(NAMES).forEach(function (s) {
      var item = html('span', 'key');
      item.appendChild(html('i', 'swatch s-' + s));
      item.appendChild(document.createTextNode(NAMES[s]));
      legend.appendChild(item);
    });
    box.appendChild(legend);
    return box;
  }
  function draw(body) {
    host.textContent = '';
    if (!body.plans.length) {
      host.appendChild(html('p', 'muted', 'No plan from the optimiser: it draws here while a storage system is in operationMode optimise and the optimiser’s own plan runs.'));
    }
    body.plans.forEach(function (plan) { host.appendChild(chart(plan, body.timezone)); });
    host.dataset.drawn = String(Number(host.dataset.drawn || 0) + 1);
  }
  function load() {
    fetch('/status/plan.json', { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(draw)
      .catch(function (err) { host.textContent = 'cannot load the plan (' + err.message + ')'; })
      .finally(function () { setTimeout(load, 60000); });
  }
  load();
})();
`;

const COLOURS: Record<string, string> = {
  importPrice: '#c53030',
  exportPrice: '#dd6b20',
  pvW: '#d69e2e',
  loadW: '#5b6475',
  batteryW: '#2b6cb0',
  curtailW: '#805ad5',
  socEnd: '#1f8a4c',
};

export const PLAN_CHART_CSS = `svg.plan{width:100%;display:block}.plan .frame{fill:none;stroke:var(--line)}
.plan .title{font-size:11px;fill:var(--muted)}.plan .tick{font-size:10px;fill:var(--muted);text-anchor:end}
.plan .time{font-size:10px;fill:var(--muted);text-anchor:middle}.plan .zero{stroke:#9aa3b2}
.plan .midnight{stroke:#9aa3b2;stroke-dasharray:3 3}.plan .hour{stroke:#eceef2}.plan .series{fill:none;stroke-width:1.6}
.plan-legend .key{margin-right:1rem;white-space:nowrap}.swatch{display:inline-block;width:1rem;height:.25rem;vertical-align:middle;margin-right:.3rem}
${Object.entries(COLOURS)
  .map(([s, c]) => `.plan .s-${s}{stroke:${c}}.swatch.s-${s}{background:${c}}`)
  .join('\n')}
`;
