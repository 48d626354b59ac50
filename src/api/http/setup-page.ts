/**
 * The owner's setup page (src/api/http/setup.ts): one form per section of site.yaml, each sent
 * on its own as changes to the paths its fields name (data-path), so a section not touched is
 * not rewritten. No inline script or style (the status page's Content-Security-Policy): styles
 * come from /status.css, behaviour from /setup.js.
 */
import { escapeHtml as e } from '../../auth/consent-page.js';
import { head } from './status-page.js';

interface Field {
  path: string;
  label: string;
  type?: 'text' | 'number' | 'checkbox' | 'password';
  /** what the field means, shown under it */
  note?: string;
}

interface Form {
  id: string;
  title: string;
  fields: Field[];
  /** the section may be left out of site.yaml: the form offers to remove it */
  optional?: string;
  note?: string;
}

/** A broker's form: the uplink and Home Assistant ask the same three things. */
function broker(id: 'uplink' | 'homeassistant', title: string, urlNote: string): Form {
  return {
    id,
    title,
    optional: id,
    fields: [
      { path: `${id}.url`, label: 'Broker URL', note: urlNote },
      { path: `${id}.username`, label: 'User name' },
      { path: `${id}.password`, label: 'Password', type: 'password', note: 'left empty: unchanged' },
    ],
  };
}

const FORMS: Form[] = [
  {
    id: 'site',
    title: 'Site',
    fields: [
      { path: 'site.name', label: 'Name' },
      { path: 'site.timezone', label: 'Time zone', note: 'IANA name, e.g. Europe/Berlin' },
      { path: 'site.currency', label: 'Currency', note: 'ISO 4217, e.g. EUR' },
      { path: 'site.location.latitude', label: 'Latitude', type: 'number' },
      { path: 'site.location.longitude', label: 'Longitude', type: 'number' },
    ],
  },
  {
    id: 'tariff',
    title: 'Tariff',
    note: 'A flat price per kWh. Saving it replaces a time-of-use or dynamic tariff; those are set in site.yaml (docs/tariffs.md).',
    optional: 'tariff',
    fields: [
      { path: 'tariff.importPrice', label: 'Import price per kWh', type: 'number' },
      { path: 'tariff.exportPrice', label: 'Export price per kWh', type: 'number' },
    ],
  },
  broker('uplink', 'Uplink (MQTT to the cloud)', 'mqtt://, mqtts://, ws:// or wss://'),
  broker('homeassistant', 'Home Assistant', 'the broker of Home Assistant’s MQTT integration'),
  {
    id: 'control',
    title: 'Battery control',
    fields: [
      { path: 'control.enabled', label: 'Allow writes to the storage system', type: 'checkbox' },
      { path: 'control.reserveSoc', label: 'Reserve state of charge, %', type: 'number' },
    ],
  },
  {
    id: 'limits',
    title: 'Grid limits',
    note: 'Whole watts; an empty field removes the limit (docs/limits.md).',
    fields: [
      { path: 'limits.exportW', label: 'Most export, W', type: 'number' },
      { path: 'limits.importW', label: 'Most import, W', type: 'number' },
      { path: 'limits.generationW', label: 'Most generation, W', type: 'number' },
    ],
  },
];

function field(f: Field): string {
  const id = `f-${f.path.replaceAll('.', '-')}`;
  const type = f.type ?? 'text';
  const input = `<input id="${id}" name="${e(f.path)}" data-path="${e(f.path)}" data-type="${type}" type="${type}"${type === 'number' ? ' step="any"' : ''}${type === 'password' ? ' autocomplete="new-password"' : ''}>`;
  const note = f.note ? ` <span class="muted">${e(f.note)}</span>` : '';
  return type === 'checkbox'
    ? `<label for="${id}">${input} ${e(f.label)}</label>`
    : `<label for="${id}">${e(f.label)}${note}</label>${input}`;
}

function form(f: Form): string {
  const remove = f.optional ? ` <button type="button" data-remove="${e(f.optional)}">Remove this section</button>` : '';
  return `<section><h2>${e(f.title)}</h2>${f.note ? `<p class="muted">${e(f.note)}</p>` : ''}
<form data-section="${e(f.id)}" class="setup">${f.fields.map(field).join('\n')}
<p><button type="submit">Save and restart</button>${remove}</p><div class="result" role="status"></div></form></section>`;
}

export function setupPage(o: { site: string; available: boolean }): string {
  return `${head(`${o.site} setup`)}
<body><header><h1>${e(o.site)}: setup</h1><p><a href="/">Status</a></p></header>
<main>
${o.available ? '' : '<p class="error" role="alert">This gateway was not started from a site.yaml (the demo builds its site in memory): nothing here can be saved.</p>'}
<p id="in-force" class="muted">Loading the configuration in force…</p>
${FORMS.map(form).join('\n')}
<section><h2>Devices</h2><div id="devices"></div>
<form id="scan-form"><p class="muted">Scan a Modbus TCP bus (an inverter's port, a Modbus gateway) for devices to add; a serial line is scanned with <code>sitegw scan</code> while the service is stopped.</p>
<label for="scan-tcp">Host[:port]</label><input id="scan-tcp" autocomplete="off" placeholder="192.168.1.50:502">
<label for="scan-units">Unit ids</label><input id="scan-units" value="1-10">
<p><button type="submit">Scan</button></p><div class="result" role="status"></div></form>
<form id="pick-form" hidden><div id="found"></div><p><button type="submit">Add the ticked devices and restart</button></p><div class="result" role="status"></div></form></section>
<section><h2>Partner clients</h2><p class="muted">An app or service that reads the Energy Site API (OAuth2 client credentials); it sees the devices ticked here. Its secret is shown once.</p>
<div id="clients"></div>
<form id="client-form"><label for="client-id">Client id</label><input id="client-id" autocomplete="off">
<label for="client-name">Name</label><input id="client-name" autocomplete="off">
<fieldset id="client-devices"><legend>Devices</legend></fieldset>
<p><button type="submit">Create client</button></p><div class="result" role="status"></div></form></section>
</main>
<script src="/setup.js"></script>
</body></html>
`;
}

/** Labels above their fields, the outcome of a save under its button. */
export const SETUP_CSS = `
form.setup label { display: block; margin-top: .6em; }
form.setup input:not([type=checkbox]) { display: block; width: 100%; max-width: 28em; }
form.setup .result.ok, #client-form .result.ok { color: #1a7f37; }
form.setup .result.error, #client-form .result.error { color: #b42318; }
#client-form label, #scan-form label { display: block; margin-top: .6em; }
#pick-form .result.ok, #scan-form .result.ok { color: #1a7f37; }
#pick-form .result.error, #scan-form .result.error { color: #b42318; }
#client-form fieldset label { display: inline; margin-right: 1em; }
`;

/**
 * A refusal's body (a named code and, for a site.yaml the checks refused, each mistake with its
 * line, path and hint) as the lines a page shows under its form: the setup page and the first-run
 * page (onboarding-page.ts) both.
 */
export const REFUSAL_JS = `function refusal(body) {
    var lines = [body.code + ': ' + body.message];
    (body.errors || []).forEach(function (e) {
      lines.push((e.line ? 'line ' + e.line + ': ' : '') + (e.path ? e.path + ': ' : '') + e.message + (e.hint ? ' (' + e.hint + ')' : ''));
    });
    return lines.join('\\n');
  }`;

/** The page's behaviour: fill the forms from config.json, send one section's changes, wait for the restart. */
export const SETUP_JS = `(function () {
  'use strict';
  ${REFUSAL_JS}
  var current = null;
  function get(obj, path) {
    return path.split('.').reduce(function (o, k) { return o == null ? undefined : o[k]; }, obj);
  }
  function load() {
    return fetch('/setup/config.json', { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); });
  }
  function fill(data) {
    current = data;
    document.querySelectorAll('[data-path]').forEach(function (input) {
      var v = get(data.config, input.dataset.path);
      if (input.dataset.type === 'checkbox') input.checked = v === true;
      else if (input.dataset.type === 'password') input.value = '';
      else input.value = v == null ? '' : String(v);
    });
    var s = data.config.site || {};
    // the site's own clock, 24-hour, whatever the browser's zone (as the status page)
    var since = new Date(data.start.at).toLocaleString('en-GB', { timeZone: s.timezone, hourCycle: 'h23' });
    document.querySelector('h1').textContent = s.name + ': setup';
    document.getElementById('in-force').textContent = 'In force since ' + since + ': ' + s.name + ', ' + s.timezone +
      (data.config.tariff ? ', tariff ' + data.config.tariff.type : ', no tariff') + (data.file ? ' (from ' + data.file + ')' : '');
    document.body.dataset.start = data.start.id;
    clients();
    var list = document.getElementById('devices');
    list.textContent = '';
    (data.config.devices || []).forEach(function (d) {
      var p = document.createElement('p');
      p.dataset.device = d.id;
      p.textContent = d.id + ': ' + d.role + ', profile ' + d.profile;
      list.appendChild(p);
    });
  }
  var ROLES = ['inverter', 'battery', 'grid-meter', 'consumption-meter'];
  var found = [];
  var scanForm = document.getElementById('scan-form');
  var pickForm = document.getElementById('pick-form');
  scanForm.addEventListener('submit', function (ev) {
    ev.preventDefault();
    say(scanForm, 'Scanning…');
    fetch('/setup/scan', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ tcp: document.getElementById('scan-tcp').value, units: document.getElementById('scan-units').value })
    }).then(function (r) {
      return r.json().then(function (body) {
        if (r.status !== 200) return say(scanForm, refusal(body), 'error');
        found = body.found;
        say(scanForm, 'Found ' + found.length + ' device' + (found.length === 1 ? '' : 's') + '.', 'ok');
        var box = document.getElementById('found');
        box.textContent = '';
        found.forEach(function (f, i) {
          var row = document.createElement('p');
          row.dataset.found = String(i);
          var tick = document.createElement('input');
          tick.type = 'checkbox'; tick.className = 'pick'; tick.setAttribute('aria-label', 'add ' + f.device.id);
          var id = document.createElement('input');
          id.className = 'pick-id'; id.value = f.device.id; id.setAttribute('aria-label', 'device id');
          var role = document.createElement('select');
          role.className = 'pick-role'; role.setAttribute('aria-label', 'role');
          ROLES.forEach(function (r) { var o = document.createElement('option'); o.value = r; o.textContent = r; o.selected = r === f.device.role; role.appendChild(o); });
          var note = document.createElement('span');
          note.className = 'muted'; note.textContent = ' ' + f.note;
          row.appendChild(tick); row.appendChild(id); row.appendChild(role); row.appendChild(note);
          box.appendChild(row);
        });
        pickForm.hidden = found.length === 0;
      });
    }, function (err) { say(scanForm, 'Not sent: ' + err.message, 'error'); });
  });
  pickForm.addEventListener('submit', function (ev) {
    ev.preventDefault();
    var at = (current.config.devices || []).length;
    var changes = [];
    pickForm.querySelectorAll('[data-found]').forEach(function (row) {
      if (!row.querySelector('.pick').checked) return;
      var d = Object.assign({}, found[Number(row.dataset.found)].device);
      d.id = row.querySelector('.pick-id').value;
      d.role = row.querySelector('.pick-role').value;
      changes.push({ path: ['devices', at + changes.length], value: d });
    });
    send(pickForm, changes);
  });
  function changesOf(form) {
    var section = form.dataset.section;
    var changes = [];
    var inputs = form.querySelectorAll('[data-path]');
    // a tariff that is not flat is replaced as a whole by the flat one
    if (section === 'tariff' && !(current.config.tariff && current.config.tariff.type === 'flat')) {
      var t = { type: 'flat' };
      inputs.forEach(function (i) { if (i.value !== '') t[i.dataset.path.split('.')[1]] = Number(i.value); });
      return [{ path: ['tariff'], value: t }];
    }
    inputs.forEach(function (i) {
      var path = i.dataset.path.split('.');
      var type = i.dataset.type;
      if (type === 'checkbox') changes.push({ path: path, value: i.checked });
      else if (type === 'password') { if (i.value !== '') changes.push({ path: path, value: i.value }); }
      else if (i.value === '') changes.push({ path: path, value: null });
      else changes.push({ path: path, value: type === 'number' ? Number(i.value) : i.value });
    });
    // a field left as it is in force is not written again (its comment and layout stay)
    return changes.filter(function (c) {
      return c.value === null ? get(current.config, c.path.join('.')) !== undefined : get(current.config, c.path.join('.')) !== c.value;
    });
  }
  function say(form, text, cls) {
    var out = form.querySelector('.result');
    out.className = 'result ' + (cls || '');
    out.textContent = '';
    text.split('\\n').forEach(function (line) { var p = document.createElement('p'); p.textContent = line; out.appendChild(p); });
  }
  function waitForRestart(form, before, tries) {
    setTimeout(function () {
      load().then(function (data) {
        if (data.start.id === before) return waitForRestart(form, before, tries + 1);
        fill(data);
        say(form, 'Saved and in force.', 'ok');
      }, function () {
        if (tries > 120) say(form, 'The gateway has not come back: look at its log (journalctl -u sitegw).', 'error');
        else waitForRestart(form, before, tries + 1);
      });
    }, 1000);
  }
  function send(form, changes) {
    if (changes.length === 0) return say(form, 'Nothing changed.');
    say(form, 'Checking…');
    fetch('/setup/config', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ changes: changes })
    }).then(function (r) {
      return r.json().then(function (body) {
        if (r.status === 202) {
          say(form, 'Saved (the old file is kept as ' + body.backup + '). Restarting…');
          document.body.dataset.restarting = '1';
          return waitForRestart(form, body.start.id, 0);
        }
        say(form, refusal(body), 'error');
      });
    }, function (err) { say(form, 'Not sent: ' + err.message, 'error'); });
  }
  document.querySelectorAll('form.setup').forEach(function (form) {
    form.addEventListener('submit', function (ev) { ev.preventDefault(); send(form, changesOf(form)); });
  });
  document.querySelectorAll('[data-remove]').forEach(function (b) {
    b.addEventListener('click', function () {
      var form = b.closest('form');
      if (current && current.config[b.dataset.remove] === undefined) return say(form, 'Not configured.');
      send(form, [{ path: [b.dataset.remove], value: null }]);
    });
  });
  function clients() {
    return fetch('/setup/clients.json', { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        var list = document.getElementById('clients');
        list.textContent = '';
        data.clients.forEach(function (c) {
          var p = document.createElement('p');
          p.dataset.client = c.id;
          p.textContent = c.id + ' (' + c.name + '): ' + (c.devices.length ? c.devices.join(', ') : 'no device');
          list.appendChild(p);
        });
        var box = document.getElementById('client-devices');
        // a device added since (a scan, a restart) gets its box too
        data.devices.forEach(function (d) {
          if (box.querySelector('input[value="' + d + '"]')) return;
          var label = document.createElement('label');
          var input = document.createElement('input');
          input.type = 'checkbox'; input.value = d; input.checked = true;
          label.appendChild(input); label.appendChild(document.createTextNode(' ' + d));
          box.appendChild(label);
        });
      });
  }
  var clientForm = document.getElementById('client-form');
  clientForm.addEventListener('submit', function (ev) {
    ev.preventDefault();
    var devices = [];
    clientForm.querySelectorAll('#client-devices input:checked').forEach(function (i) { devices.push(i.value); });
    var name = document.getElementById('client-name').value;
    fetch('/setup/clients', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ id: document.getElementById('client-id').value, name: name || undefined, devices: devices })
    }).then(function (r) {
      return r.json().then(function (body) {
        if (r.status !== 201) return say(clientForm, refusal(body), 'error');
        say(clientForm, 'Client ' + body.client.id + ' created. Its secret, shown only this once:\\n' + body.secret, 'ok');
        clients();
      });
    });
  });
  load().then(fill, function (err) { document.getElementById('in-force').textContent = 'Cannot read the configuration: ' + err.message; });
})();
`;
