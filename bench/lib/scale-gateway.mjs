/**
 * The gateway under bench/scale.ts: the built daemon (dist/, as `sitegw run` starts it) in this
 * child, started with the unit's node flags by the parent (plain JavaScript: no loader's memory), plus what the parent asks over IPC:
 * every device poll's time (the jitter of the poll schedule), and at the end one bucket close
 * timed as the bucketer does it (all streams' buckets in one transaction).
 */
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const { loadConfig } = await import(new URL('dist/profiles/site-config.js', root).href);
const { Daemon } = await import(new URL('dist/main.js', root).href);
const { createLogger } = await import(new URL('dist/core/log.js', root).href);

const loaded = await loadConfig(process.argv[2]);
if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
const daemon = await Daemon.start({ config: loaded.config, log: createLogger('silent') });
const period = loaded.config.poll.intervalSeconds * 1000;
const last = new Map();
let late = [];
let polls = 0;
daemon.ctx.bus.on('devicePolled', (e) => {
  const t = performance.now();
  const before = last.get(e.deviceId);
  last.set(e.deviceId, t);
  polls++;
  if (before !== undefined) late.push(Math.abs(t - before - period));
});
// storage writes (write_bytes): wchar would count the Modbus sockets' bytes too
const wchar = () => Number(/^write_bytes:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))[1]);

process.on('message', (m) => {
  if (m.reset) {
    late = [];
    polls = 0;
    process.send({ reset: true, wchar: wchar() });
  } else if (m.stats) {
    const s = [...late].sort((a, b) => a - b);
    const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
    process.send({ p50: at(0.5), p99: at(0.99), polls, wchar: wchar() });
  } else if (m.close) {
    // the bucket in progress closed now, as the close timer does at its boundary
    const w0 = wchar();
    const t0 = performance.now();
    const closed = daemon.ctx.bucketer.closeUntil(Math.ceil(daemon.ctx.clock.now() / 900_000) * 900_000);
    const ms = performance.now() - t0;
    process.send({ closeMs: ms, buckets: closed.length, closeBytes: wchar() - w0 });
    void daemon.stop().then(() => process.exit(0));
  }
});
process.send({ ready: true, streams: daemon.site.streams().length });
