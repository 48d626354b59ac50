/**
 * The gateway under bench/scale.ts: the built daemon (dist/, as `sitegw run` starts it) in this
 * child, started with the unit's node flags by the parent (plain JavaScript: no loader's memory), plus what the parent asks over IPC:
 * every device poll's time (the jitter of the poll schedule) and outcome, apart for the devices
 * on RS-485 lines and on TCP; one bucket close timed as the bucketer does it (all streams' buckets
 * in one transaction); then the close's `bucketsClosed` events emitted again, each a WebSocket
 * push of that bucket to the clients connected (bench/lib/ws-clients.mjs), and this process's CPU.
 */
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const { loadConfig } = await import(new URL('dist/profiles/site-config.js', root).href);
const { Daemon } = await import(new URL('dist/main.js', root).href);
const { createLogger } = await import(new URL('dist/core/log.js', root).href);
const { ensureDemoCredentials } = await import(new URL('dist/demo/credentials.js', root).href);

const loaded = await loadConfig(process.argv[2]);
if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
const daemon = await Daemon.start({ config: loaded.config, log: createLogger('silent') });
const period = loaded.config.poll.intervalSeconds * 1000;
const rtu = new Set(loaded.config.devices.filter((d) => d.connection.type === 'rtu').map((d) => d.id));
const last = new Map();
const fresh = () => ({ late: [], polls: 0, failed: 0, pollMs: 0 });
let groups = { tcp: fresh(), rtu: fresh() };
daemon.ctx.bus.on('devicePolled', (e) => {
  const t = performance.now();
  const g = groups[rtu.has(e.deviceId) ? 'rtu' : 'tcp'];
  const before = last.get(e.deviceId);
  last.set(e.deviceId, t);
  g.polls++;
  g.pollMs += e.ms;
  if (!e.ok) g.failed++;
  if (before !== undefined) g.late.push(Math.abs(t - before - period));
});
// each is one device_facts row saved (src/site/learned.ts): a device's first poll, or a live
// channel it reports for the first time; at 200 devices a slow RS-485 line's first polls trail
// into the window and are all it writes between closes (bench/README.md)
let factsSaves = 0;
let lastFactsAt = performance.now();
daemon.ctx.bus.on('streamsChanged', () => {
  factsSaves++;
  lastFactsAt = performance.now();
});
// the close's events (not the pushes' own), emitted again for each push the parent asks for
const closed = [];
let pushing = false;
daemon.ctx.bus.on('bucketsClosed', (e) => {
  if (!pushing) closed.push(e);
});
// storage writes (write_bytes): wchar would count the Modbus sockets' bytes too
const wchar = () => Number(/^write_bytes:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))[1]);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const now = () => performance.timeOrigin + performance.now();

function summary(g) {
  const s = [...g.late].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), polls: g.polls, failed: g.failed, pollMs: g.polls ? g.pollMs / g.polls : 0 };
}

process.on('message', (m) => {
  if (m.quiet) {
    // every device polled at least once, and no learned fact saved for the last `quiet` ms
    const polled = daemon.site.devices.size === last.size;
    process.send({ quiet: polled && performance.now() - lastFactsAt >= m.quiet, polled: last.size });
  } else if (m.reset) {
    groups = { tcp: fresh(), rtu: fresh() };
    factsSaves = 0;
    process.send({ reset: true, wchar: wchar() });
  } else if (m.stats) {
    process.send({ tcp: summary(groups.tcp), rtu: summary(groups.rtu), wchar: wchar(), factsSaves });
  } else if (m.close) {
    // the bucket in progress closed now, as the close timer does at its boundary
    const w0 = wchar();
    const at = now();
    const t0 = performance.now();
    const buckets = daemon.ctx.bucketer.closeUntil(Math.ceil(daemon.ctx.clock.now() / 900_000) * 900_000);
    const ms = performance.now() - t0;
    process.send({ closeMs: ms, buckets: buckets.length, closeBytes: wchar() - w0, at });
  } else if (m.push) {
    // the push's CPU: building and writing the messages (synchronous), and the turn after it
    const c0 = cpu();
    const at = now();
    pushing = true;
    for (const e of closed) daemon.ctx.bus.emit('bucketsClosed', e);
    pushing = false;
    setImmediate(() => process.send({ at, cpuMs: cpu() - c0 }));
  } else if (m.stop) {
    void daemon.stop().then(() => process.exit(0));
  }
});
const creds = await ensureDemoCredentials(daemon);
process.send({
  ready: true,
  streams: daemon.site.streams().length,
  tokenUrl: creds.tokenUrl,
  client: creds.client,
  url: daemon.url,
});
