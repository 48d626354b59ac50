/**
 * The installer's status page, rendered on the server from the StatusView. Every value is
 * escaped; no inline script or style (the page is served with a strict Content-Security-Policy),
 * so presentation is CSS classes from /status.css and behaviour is /status.js. The same section
 * renderers serve the first page and the live updates (/status/live), so there is one renderer.
 */
import { escapeHtml } from '../../auth/consent-page.js';
import type { DeviceView, PowerFlow, StatusView } from '../../ops/status-view.js';
import { siteDateTime, siteHourMinute } from './status-time.js';

const e = escapeHtml;

export function watts(w: number | null): string {
  if (w === null) return '—';
  const a = Math.abs(w);
  return a < 1000 ? `${Math.round(a)} W` : `${(a / 1000).toFixed(2)} kW`;
}

const ROLE: Record<string, string> = {
  inverter: 'Inverter',
  battery: 'Battery',
  'grid-meter': 'Grid meter',
  'consumption-meter': 'House meter',
};

export function head(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${e(title)} · sitegw</title><link rel="stylesheet" href="/status.css"></head>`;
}

/** One arm of the flow diagram: hub ↔ node, animated in the direction energy moves. */
function arm(
  id: string,
  label: string,
  x: number,
  y: number,
  w: number | null,
  towardHub: boolean | null,
  extra = '',
): string {
  const dir = w === null || Math.abs(w) < 1 || towardHub === null ? 'idle' : towardHub ? 'in' : 'out';
  const [x1, y1, x2, y2] = dir === 'out' ? [200, 150, x, y] : [x, y, 200, 150];
  return `<g class="arm ${dir}" id="flow-${id}" data-watts="${w ?? ''}">
<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}"/>
<circle cx="${x}" cy="${y}" r="34"/>
<text x="${x}" y="${y - 4}" class="name">${e(label)}</text>
<text x="${x}" y="${y + 14}" class="value">${e(watts(w))}</text>${extra}
</g>`;
}

function direction(w: number | null, plus: string, minus: string): string {
  if (w === null) return 'no reading';
  return Math.abs(w) < 1 ? 'idle' : w > 0 ? plus : minus;
}

export function flowSection(f: PowerFlow): string {
  const soc = f.batterySoc === null ? '' : `<text x="262" y="265" class="soc">${Math.round(f.batterySoc)} %</text>`;
  const grid = f.gridState === 'not_present' ? ' outage' : '';
  const gridName = f.gridState === 'not_present' ? 'Grid (off)' : f.gridState === null ? 'Grid (no meter)' : 'Grid';
  return `<svg viewBox="0 0 400 310" role="img" aria-label="Power flow" class="flow${grid}">
${arm('pv', 'PV', 200, 40, f.pvW, f.pvW === null ? null : true)}
${arm('grid', gridName, 50, 150, f.gridW, f.gridW === null ? null : f.gridW > 0)}
${arm('house', 'House', 350, 150, f.houseW, f.houseW === null ? null : false)}
${arm('battery', 'Battery', 200, 260, f.batteryW, f.batteryW === null ? null : f.batteryW < 0, soc)}
<circle cx="200" cy="150" r="12" class="hub"/>
</svg>
<p class="legend">Grid: ${f.gridState === null ? 'no meter' : direction(f.gridW, 'importing', 'exporting')} · Battery: ${direction(f.batteryW, 'charging', 'discharging')} · Relay: ${e(f.gridState ?? 'no meter')}</p>`;
}

function values(d: DeviceView): string {
  const v = d.values;
  if (!v) return '<span class="muted">—</span>';
  const parts: string[] = [];
  if (v.power_W !== undefined) parts.push(`${watts(v.power_W)}${v.power_W < 0 ? ' out' : ''}`);
  if (v.power_AC_W !== undefined) parts.push(`AC ${watts(v.power_AC_W)}`);
  if (v.power_DC_W !== undefined) parts.push(`DC ${watts(v.power_DC_W)}`);
  if (v.soc !== undefined) parts.push(`SoC ${Math.round(v.soc)} %`);
  if (v.state !== undefined) parts.push(`relay ${v.state}`);
  // the live channels an installer looks at first (docs/design.md "Live channels")
  if (v.frequency_Hz !== undefined) parts.push(`${v.frequency_Hz.toFixed(2)} Hz`);
  if (v.temperature_C !== undefined) parts.push(`${v.temperature_C.toFixed(1)} °C`);
  if (v.status !== undefined) parts.push(v.status);
  return e(parts.join(' · '));
}

export function devicesSection(devices: DeviceView[], timezone: string): string {
  const rows = devices.map((d) => {
    const errs = Object.entries(d.errors).filter(([, n]) => n > 0);
    return `<tr class="${d.online ? 'online' : 'offline'}" data-device="${e(d.id)}">
<td><strong>${e(d.name ?? d.id)}</strong><br><span class="muted">${e(d.id)} · ${e(ROLE[d.role] ?? d.role)}${d.manufacturer ? ` · ${e(d.manufacturer)} ${e(d.model ?? '')}` : ''}</span></td>
<td><span class="dot"></span>${d.online ? 'online' : 'offline'}${!d.online && d.lastError ? `<br><span class="muted">${e(d.lastError)}</span>` : ''}</td>
<td>${values(d)}</td>
<td>${errs.length === 0 ? '0' : e(errs.map(([k, n]) => `${k} ${n}`).join(', '))}</td>
<td class="muted">${d.lastSeen ? e(siteDateTime(d.lastSeen, timezone)) : 'never'}</td>
</tr>`;
  });
  return `<table><thead><tr><th>Device</th><th>State</th><th>Now</th><th>Errors</th><th>Last answer</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

export function healthSection(v: StatusView): string {
  const h = v.health;
  const items = h.problems.map((p) => `<li>${e(p)}</li>`).join('');
  return `<p class="badge ${h.status}">${h.status}</p><p class="muted">up ${Math.floor(h.uptimeSeconds / 3600)} h ${Math.floor((h.uptimeSeconds % 3600) / 60)} min · sitegw ${e(v.version)} · ${e(siteDateTime(v.now, v.site.timezone))}</p>${items ? `<ul class="problems">${items}</ul>` : ''}`;
}

export function uplinkSection(v: StatusView): string {
  const u = v.uplink;
  if (!u.configured) return '<p class="muted">No uplink configured (no <code>uplink:</code> in site.yaml).</p>';
  return `<p><span class="badge ${u.connected ? 'ok' : 'degraded'}">${u.connected ? 'connected' : 'not connected'}</span> ${u.outboxDepth} messages waiting${u.lastError ? ` · last error: ${e(u.lastError)}` : ''}</p>`;
}

export function eventsSection(v: StatusView): string {
  if (v.gridEvents.length === 0) return '<p class="muted">No grid events yet.</p>';
  return `<ul class="events">${v.gridEvents.map((g) => `<li><span class="badge ${g.state === 'ok' ? 'ok' : 'degraded'}">${e(g.state)}</span> ${e(siteDateTime(g.timestamp, v.site.timezone))} <span class="muted">${e(g.deviceId)}</span></li>`).join('')}</ul>`;
}

export function controlSection(v: StatusView): string {
  const c = v.control;
  if (!c.enabled)
    return '<p class="muted">Control is off (control.enabled in site.yaml): the batteries run on their own.</p>';
  if (c.storages.length === 0) return '<p class="muted">No inverter with batteries.</p>';
  const rows = c.storages.map((x) => {
    const slot = x.slot
      ? `${e(x.slot.mode)}${x.slot.powerW === null ? '' : ` ${x.slot.powerW} W`} until ${e(siteHourMinute(x.slot.end, v.site.timezone))} (${e(x.slot.status)})`
      : '<span class="muted">none</span>';
    return `<tr><td>${e(x.deviceId)}</td><td>${e(x.mode)}</td><td>${slot}</td></tr>`;
  });
  return `<table><thead><tr><th>Storage</th><th>Mode</th><th>Current slot</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

const LIMIT_LABEL: Record<string, string> = { exportW: 'Export', importW: 'Import', generationW: 'Generation' };

/** The site limits in force with their sources, and what the inverters are held at (docs/limits.md). */
export function limitsSection(v: StatusView): string {
  const l = v.limits;
  if (!l) return '<p class="muted">No site limits.</p>';
  const rows = (['exportW', 'importW', 'generationW'] as const).flatMap((n) => {
    const f = l.inForce[n];
    return f
      ? [
          `<tr><td>${LIMIT_LABEL[n]}</td><td>${watts(f.watts)}</td><td>${e(f.source)}</td><td>${l.binding === n ? '<span class="badge degraded">holding</span>' : ''}</td></tr>`,
        ]
      : [];
  });
  if (rows.length === 0 && !l.failSafe) return '<p class="muted">No limit in force: the inverters run unlimited.</p>';
  const cap =
    l.capW === null
      ? '<p class="muted">The inverters run unlimited.</p>'
      : `<p>Inverters held at ${watts(l.capW)}${l.failSafe ? ' (fail-safe: the grid meter is silent)' : ''} · curtailed: ${l.curtailedW > 0 ? `up to ${watts(l.curtailedW)}` : 'nothing'}</p>`;
  return `${rows.length ? `<table><thead><tr><th>Limit</th><th>In force</th><th>Source</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>` : ''}${cap}`;
}

const OPERATOR_VALUE: Record<string, (v: number | boolean) => string> = {
  exportW: (v) => `export ≤ ${watts(v as number)}`,
  importW: (v) => `import ≤ ${watts(v as number)}`,
  generationW: (v) => `generation ≤ ${watts(v as number)}`,
  loadW: (v) => `load ≤ ${watts(v as number)} (not acted on)`,
  connect: (v) => (v ? 'connected' : 'disconnect'),
  energize: (v) => (v ? 'energize' : 'cease to energize'),
};

/** The grid operator's server and what it has in force (docs/grid-operator.md "Health and metrics"). */
export function gridOperatorSection(v: StatusView): string {
  const g = v.gridOperator;
  if (!g) return '<p class="muted">No grid operator (no <code>gridOperator:</code> in site.yaml).</p>';
  const tz = v.site.timezone;
  const server = g.reachable
    ? `<p><span class="badge ok">reachable</span> last read ${g.lastContact ? e(siteDateTime(g.lastContact, tz)) : ''}</p>`
    : `<p><span class="badge degraded">unreachable</span> ${g.lastContact ? `last read ${e(siteDateTime(g.lastContact, tz))}` : 'never read'}${g.lastError ? ` · ${e(g.lastError)}` : ''}</p>`;
  const values = Object.entries(g.values)
    .map(([k, x]) => OPERATOR_VALUE[k]?.(x) ?? `${k} ${x}`)
    .join(', ');
  const c = g.control;
  const inForce =
    c.kind === 'none'
      ? '<p class="muted">No control in force: the operator sets no limit.</p>'
      : `<p>${c.kind === 'control' ? 'Control' : 'Default control'} <code>${e(c.id ?? '')}</code>: ${e(values)}${c.until ? ` · until ${e(siteDateTime(c.until, tz))} (the server's clock)` : ''}</p>`;
  const offset =
    g.clockOffsetSeconds === null
      ? ''
      : `<p class="muted">The server's clock is ${g.clockOffsetSeconds} s from ours.</p>`;
  // a dropped reading is a gap in the utility's metering data: it stays on the page until a restart
  const waiting = g.readingsUnsent > 0 ? `${g.readingsUnsent} intervals of meter readings wait for the server` : '';
  const readings =
    g.readingsDropped > 0
      ? `<p><span class="badge degraded">readings lost</span> ${g.readingsDropped} meter readings dropped since the start: the server was gone longer than the intervals sitegw keeps, so the utility lacks that metering data${waiting ? ` · ${waiting}` : ''}</p>`
      : waiting
        ? `<p class="muted">${waiting}.</p>`
        : '';
  return `${server}${inForce}${offset}${readings}`;
}

/** Each Modbus proxy port (docs/modbus-proxy.md): its target, clients and what it answered. */
export function proxySection(v: StatusView): string {
  const ports = v.modbusProxy.ports;
  if (ports.length === 0) return '<p class="muted">No Modbus proxy (no <code>modbusProxy:</code> in site.yaml).</p>';
  const rows = ports.map((p) => {
    const a = p.answers;
    const cut = p.ended.garbage + p.ended.flood + p.ended.unread + p.ended.idle + p.ended.full;
    const clients = p.clients.length
      ? p.clients.map((c) => `${e(c.address)} <span class="muted">(${c.requests} requests)</span>`).join('<br>')
      : '<span class="muted">none</span>';
    return `<tr><td>${e(p.host)}:${p.port}</td><td>${e(p.target)}</td><td>${e(p.writes)}</td><td>${clients}</td><td>${a.forwarded} to the device, ${a.cached} from sitegw's reads, ${a.write_denied} writes refused, ${a.exception + a.failed + a.refused} errors</td><td>${cut}</td></tr>`;
  });
  return `<table><thead><tr><th>Port</th><th>Device</th><th>Writes</th><th>Clients</th><th>Answers</th><th>Cut off</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The sections that /status.js refreshes, by element id. */
export function liveSections(v: StatusView): Record<string, string> {
  return {
    health: healthSection(v),
    flow: flowSection(v.flow),
    devices: devicesSection(v.devices, v.site.timezone),
    uplink: uplinkSection(v),
    events: eventsSection(v),
    control: controlSection(v),
    proxy: proxySection(v),
    limits: limitsSection(v),
    gridop: gridOperatorSection(v),
  };
}

export function statusPage(v: StatusView): string {
  const s = liveSections(v);
  const section = (id: string, title: string) => `<section><h2>${title}</h2><div id="${id}">${s[id]}</div></section>`;
  return `${head(`${v.site.name} status`)}
<body data-timezone="${e(v.site.timezone)}"><header><h1>${e(v.site.name)}</h1><p><a href="/setup">Setup</a></p><form method="post" action="/logout"><button type="submit">Log out</button></form></header>
<main>
<div class="grid2">${section('health', 'Health')}${section('flow', 'Power flow')}</div>
${section('devices', 'Devices')}
<div class="grid2">${section('uplink', 'Uplink')}${section('events', 'Recent grid events')}</div>
<section><h2>Battery control</h2><div id="control">${s.control}</div>
${v.control.enabled ? '<form method="post" action="/control/self-consumption"><button type="submit">Back to self-consumption</button> <span class="muted">ends every plan; the batteries run on their own again</span></form>' : ''}</section>
${v.limits ? section('limits', 'Site limits') : ''}
${v.gridOperator ? section('gridop', 'Grid operator') : ''}
${v.modbusProxy.ports.length > 0 ? section('proxy', 'Modbus proxy') : ''}
<section><h2>History</h2><p class="views"><button type="button" data-history="day" class="on">Last day</button> <button type="button" data-history="week">Last week</button> <button type="button" data-history="month">Last month</button></p><div id="history"><p class="muted">Loading the history…</p></div></section>
${v.control.enabled ? '<section><h2>Battery plan</h2><div id="plan-chart"><p class="muted">Loading the plan…</p></div></section>' : ''}
</main>
<footer class="muted">Updates every 2 s · <span id="updated">rendered by the gateway</span></footer>
<script src="/status.js"></script>
</body></html>
`;
}

export function loginPage(opts: { error?: string; username?: string; status?: number } = {}): string {
  return `${head('Log in')}
<body><main class="login"><h1>Gateway status</h1><p class="muted">Log in with the site owner's user name and password.</p>
${opts.error ? `<p class="error" role="alert">${e(opts.error)}</p>` : ''}
<form method="post" action="/login">
<label for="username">User name</label><input id="username" name="username" autocomplete="username" value="${e(opts.username ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit">Log in</button>
</form></main></body></html>
`;
}
