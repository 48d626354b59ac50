/**
 * The status page's stylesheet and script, kept as strings so they ship inside dist/ with no
 * build step and no file lookup at run time.
 */

export const STATUS_CSS = `:root{--ok:#1f8a4c;--warn:#b7791f;--bad:#c53030;--ink:#1d2330;--muted:#5b6475;--line:#d7dbe3}
*{box-sizing:border-box}body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:var(--ink)}
header{display:flex;justify-content:space-between;align-items:center;padding:.8rem 1.5rem;background:#1d2330;color:#fff}
header h1{font-size:1.2rem;margin:0}header button{background:none;color:#fff;border:1px solid #fff6;border-radius:4px;padding:.3rem .8rem;cursor:pointer}
main{max-width:72rem;margin:1rem auto;padding:0 1rem}section{background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002;padding:1rem 1.2rem;margin-bottom:1rem}
h2{font-size:1rem;margin:0 0 .6rem;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(22rem,1fr));gap:1rem}.grid2>section{margin-bottom:0}.grid2{margin-bottom:1rem}
.muted{color:var(--muted);font-size:.88em}.badge{display:inline-block;padding:.1rem .6rem;border-radius:999px;color:#fff;font-weight:600;margin:0}
.badge.ok{background:var(--ok)}.badge.degraded{background:var(--warn)}.badge.failing,.badge.not_present{background:var(--bad)}
.problems{margin:.4rem 0 0;padding-left:1.2rem;color:var(--bad)}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;color:var(--muted);font-weight:600}.dot{display:inline-block;width:.6rem;height:.6rem;border-radius:50%;margin-right:.4rem;background:var(--ok)}
tr.offline .dot{background:var(--bad)}tr.offline td:first-child strong{color:var(--bad)}
svg.flow{width:100%;max-width:26rem;display:block;margin:0 auto}
.arm line{stroke:#9aa3b2;stroke-width:4;stroke-dasharray:8 8}.arm.in line,.arm.out line{stroke:#2b6cb0;animation:flow 1s linear infinite}
.arm circle{fill:#fff;stroke:#2b6cb0;stroke-width:2}.arm.idle circle{stroke:#9aa3b2}
.arm text{text-anchor:middle;font-size:13px}.arm .name{font-weight:600}.arm .value{font-size:12px;fill:var(--muted)}.soc{text-anchor:start;font-size:12px;fill:var(--ok);font-weight:600}
.hub{fill:#1d2330}.outage #flow-grid circle{stroke:var(--bad)}.legend{text-align:center;margin:.2rem 0 0}
@keyframes flow{to{stroke-dashoffset:-16}}
.events{list-style:none;padding:0;margin:0}.events li{padding:.2rem 0}
footer{text-align:center;padding:1rem}
.login{max-width:24rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
.login label{display:block;margin:.8rem 0 .2rem}.login input{width:100%;padding:.5rem}.login button{margin-top:1.2rem;width:100%;padding:.6rem;font-size:1rem}
.error{background:#fde8e8;color:#8a1c1c;padding:.6rem;border-radius:4px}
`;

/**
 * Polls /status/live every 2 s and swaps in the sections the server rendered. A failed poll
 * (gateway restarting, session ended) is shown in the footer; a 401 goes back to the login.
 */
export const STATUS_JS = `(function () {
  'use strict';
  var updated = document.getElementById('updated');
  // the gateway's time in the site's zone, 24-hour, whatever the browser's own zone and locale
  var clock = new Intl.DateTimeFormat('en-GB', { timeZone: document.body.dataset.timezone, hour: '2-digit',
    minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
  function tick() {
    fetch('/status/live', { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (res) {
        if (res.status === 401) { window.location.assign('/login'); return null; }
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(function (body) {
        if (!body) return;
        Object.keys(body.sections).forEach(function (id) {
          var el = document.getElementById(id);
          if (el) el.innerHTML = body.sections[id];
        });
        updated.textContent = 'updated ' + clock.format(new Date(body.now));
        document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
      })
      .catch(function (err) { updated.textContent = 'cannot reach the gateway (' + err.message + ')'; })
      .finally(function () { setTimeout(tick, 2000); });
  }
  setTimeout(tick, 2000);
})();
`;
