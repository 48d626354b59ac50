/**
 * The first-run page (onboarding.ts): the setup code, the owner, the site, a scan of a Modbus
 * TCP bus and the devices to keep, sent as one request; then it waits for the gateway to start
 * on the new site.yaml and goes to its sign-in. Presentation from /status.css, no CDN.
 */
import { REFUSAL_JS } from './setup-page.js';
import { head } from './status-page.js';

export function onboardingPage(where: { codeFile: string }): string {
  return `${head('First run')}
<body><header><h1>Set up this gateway</h1></header>
<main>
<form id="first-run" class="setup">
<section><h2>1. The setup code</h2>
<p class="muted">On the gateway: <code>sudo cat ${where.codeFile}</code> (it is in the service's log too).</p>
<label for="code">Setup code</label><input id="code" name="code" autocomplete="off" inputmode="numeric" required>
</section>
<section><h2>2. The site owner</h2>
<p class="muted">Signs in to the status page and to this setup page later.</p>
<label for="username">User name</label><input id="username" name="username" value="owner" required>
<label for="password">Password (8 characters or more)</label><input id="password" name="password" type="password" autocomplete="new-password" required>
</section>
<section><h2>3. The site</h2>
<label for="site-name">Name</label><input id="site-name" name="siteName" required>
<label for="timezone">Time zone (IANA)</label><input id="timezone" name="timezone" required>
<label for="currency">Currency (ISO 4217)</label><input id="currency" name="currency" value="EUR" required>
<label for="latitude">Latitude</label><input id="latitude" name="latitude" value="0" required>
<label for="longitude">Longitude</label><input id="longitude" name="longitude" value="0" required>
</section>
<section><h2>4. The devices</h2>
<p class="muted">Modbus TCP: the inverter's or the gateway's address. RS-485: the adapter's device and the line speed set on the devices. Scan as many buses as the site has.</p>
<label for="scan-units">Unit ids</label><input id="scan-units" value="1-3">
<label for="scan-target">Host[:port]</label><input id="scan-target" autocomplete="off" placeholder="192.168.1.50:502">
<button type="button" id="scan">Scan TCP</button>
<label for="scan-rtu-device">Serial device</label><input id="scan-rtu-device" autocomplete="off" placeholder="/dev/ttyUSB0">
<label for="scan-rtu-baud">Baud</label><input id="scan-rtu-baud" value="9600" inputmode="numeric">
<label for="scan-rtu-parity">Parity</label><select id="scan-rtu-parity"><option>none</option><option>even</option><option>odd</option></select>
<button type="button" id="scan-rtu">Scan serial line</button>
<div id="found"><p class="muted">Nothing scanned yet.</p></div>
</section>
<p><button type="submit" id="create">Create the site</button></p>
<p id="say" role="status"></p>
</form>
</main>
<script src="/onboarding.js"></script>
</body></html>`;
}

export const ONBOARDING_JS = `(function () {
  var found = [];
  var form = document.getElementById('first-run');
  var tz = document.getElementById('timezone');
  try { tz.value = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch (e) { tz.value = 'UTC'; }
  function say(text, kind) {
    var p = document.getElementById('say');
    p.textContent = text;
    p.className = kind === 'error' ? 'error' : 'muted';
  }
  ${REFUSAL_JS}
  function post(path, body) {
    return fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body)
    }).then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); });
  }
  function list() {
    var div = document.getElementById('found');
    div.textContent = '';
    if (found.length === 0) { div.innerHTML = '<p class="muted">No device answered.</p>'; return; }
    found.forEach(function (f, i) {
      var row = document.createElement('p');
      row.className = 'device';
      var keep = document.createElement('input');
      keep.type = 'checkbox'; keep.checked = true; keep.id = 'keep-' + i; keep.dataset.index = String(i);
      var id = document.createElement('input');
      id.value = f.device.id; id.id = 'id-' + i; id.setAttribute('aria-label', 'id of device ' + (i + 1));
      var label = document.createElement('label');
      label.htmlFor = keep.id;
      label.textContent = ' ' + f.device.role + ', ' + f.device.profile + (f.note ? ' (' + f.note + ')' : '') + ' as ';
      row.appendChild(keep); row.appendChild(label); row.appendChild(id);
      div.appendChild(row);
    });
  }
  function scan(where) {
    say('Scanning…');
    var body = {
      code: form.code.value,
      units: document.getElementById('scan-units').value,
      taken: found.map(function (f) { return f.device.id; })
    };
    Object.keys(where).forEach(function (k) { body[k] = where[k]; });
    post('/onboarding/scan', body).then(function (r) {
      if (r.status !== 200) return say(refusal(r.body), 'error');
      found = found.concat(r.body.devices);
      list();
      say(r.body.devices.length + ' device(s) found.');
    }, function (e) { say('Not sent: ' + e.message, 'error'); });
  }
  document.getElementById('scan').addEventListener('click', function () {
    scan({ target: document.getElementById('scan-target').value });
  });
  document.getElementById('scan-rtu').addEventListener('click', function () {
    scan({ rtu: {
      device: document.getElementById('scan-rtu-device').value,
      baudRate: Number(document.getElementById('scan-rtu-baud').value),
      parity: document.getElementById('scan-rtu-parity').value
    } });
  });
  function waitForStart(n) {
    fetch('/login', { cache: 'no-store' }).then(function (r) {
      if (r.status === 200) { window.location.href = '/login'; return; }
      throw new Error(String(r.status));
    }).catch(function () {
      if (n > 120) return say('The gateway did not come back: look at its log (journalctl -u sitegw).', 'error');
      setTimeout(function () { waitForStart(n + 1); }, 1000);
    });
  }
  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    var devices = [];
    found.forEach(function (f, i) {
      if (!document.getElementById('keep-' + i).checked) return;
      var d = JSON.parse(JSON.stringify(f.device));
      d.id = document.getElementById('id-' + i).value;
      devices.push({ device: d, note: f.note });
    });
    say('Checking…');
    post('/onboarding/site', {
      code: form.code.value,
      owner: { username: form.username.value, password: form.password.value },
      site: {
        siteName: form.siteName.value,
        timezone: form.timezone.value,
        currency: form.currency.value,
        latitude: Number(form.latitude.value),
        longitude: Number(form.longitude.value)
      },
      devices: devices
    }).then(function (r) {
      if (r.status !== 202) return say(refusal(r.body), 'error');
      document.body.dataset.starting = '1';
      say('site.yaml written. The gateway is starting…');
      waitForStart(0);
    }, function (e) { say('Not sent: ' + e.message, 'error'); });
  });
})();
`;
