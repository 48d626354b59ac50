/**
 * The uplink draining a backlog: seven days of a ten-device site (672 closed bucket periods,
 * one telemetry message each) waiting as the daemon keeps it since schema 19: in the recent
 * buckets, each quarter hour's rows stamped with its message's seq at the close
 * (uplink/seq-counter.ts, store/uplink-telemetry.ts), the fold held while they are not
 * acknowledged. The drainer (uplink/drain.ts, through uplink/pending.ts) rebuilds each message
 * from its rows, publishes it to a local mosquitto at QoS 1 and moves the ack position on its
 * PUBACK. Baseline in the same run: bare mqtt.js publishing the same payloads to the same topic
 * at QoS 1 with the same number in flight (the broker's receive maximum), no SQLite. Rounds
 * alternate between the two; medians are reported. What the uplink costs the SD card is
 * bench/disk-writes.ts's (the site with and without it).
 *
 *   node --import tsx bench/uplink-drain.ts [rounds]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { EventBus } from '../src/core/events.js';
import { parseConfig } from '../src/profiles/site-config.js';
import { Site } from '../src/site/site.js';
import { openDatabase } from '../src/store/db.js';
import { holdFold } from '../src/store/recent-buckets.js';
import { BUCKET_MS } from '../src/telemetry/align.js';
import { Bucketer } from '../src/telemetry/bucketer.js';
import { Drainer, wireBody } from '../src/uplink/drain.js';
import { payloadContext } from '../src/uplink/payloads.js';
import { Pending } from '../src/uplink/pending.js';
import { SeqCounter } from '../src/uplink/seq-counter.js';
import { median } from './lib/stats.js';

const ROUNDS = Number(process.argv[2] ?? 9);
const DAYS = 7;
const POLL_MS = 60_000;
const START = Date.parse('2026-06-01T00:00:00Z');
const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-uplink-'));

const SITE_YAML = `
site: { id: bench-site, name: Bench, timezone: Europe/Berlin, currency: EUR, location: { latitude: 52.5, longitude: 13.4 } }
devices:
${[
  ['inverter-1', 'inverter'],
  ['inverter-2', 'inverter'],
  ['battery-1', 'battery', 'inverter-1'],
  ['battery-2', 'battery', 'inverter-1'],
  ['battery-3', 'battery', 'inverter-2'],
  ['battery-4', 'battery', 'inverter-2'],
  ['grid-meter', 'grid-meter'],
  ['house-1', 'consumption-meter'],
  ['house-2', 'consumption-meter'],
  ['house-3', 'consumption-meter'],
]
  .map(
    ([id, role, inv], i) =>
      `  - { id: ${id}, role: ${role}, profile: sunspec, ${inv ? `inverter: ${inv}, ` : ''}connection: { type: tcp, host: 10.0.0.${i + 1}, unitId: 1 } }`,
  )
  .join('\n')}
`;

function site(): Site {
  const r = parseConfig(SITE_YAML, 'bench site.yaml');
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return new Site(r.config);
}

/**
 * Closes DAYS of buckets through the real bucketer, each close stamped as the Uplink stamps it,
 * the fold held for messages not acknowledged (none are): the backlog of a week offline.
 */
function fill(file: string): void {
  const db = openDatabase(file);
  const s = site();
  const ctx = payloadContext(s, 'percent');
  let now = START;
  const bus = new EventBus();
  const seqs = new SeqCounter(db, () => now);
  bus.inTransaction('bucketsClosing', (closed) => seqs.stampClose(ctx, closed, now));
  bus.on('bucketsClosed', () => seqs.confirm());
  const pending = new Pending(db, ctx, () => now);
  holdFold(db, { through: () => pending.through, now: () => now, maxAgeMs: 30 * 86_400_000 });
  const b = new Bucketer({ db, streams: s.streams(), pollPeriodMs: POLL_MS, bus });
  b.start();
  const streams = s.streams();
  for (let t = START, i = 0; t < START + DAYS * 86_400_000; t += POLL_MS, i++) {
    now = t;
    for (const st of streams) {
      const w = 1000 * Math.sin(i / 50 + st.id.length);
      b.ingest({
        streamId: st.id,
        ts: t,
        values: { power_W: w, power_AC_W: w, power_DC_W: -w, soc: 50 + (i % 40), soh: 98, state: 'ok' },
      });
    }
    if ((t + POLL_MS) % BUCKET_MS === 0) {
      now = t + POLL_MS;
      b.closeUntil(t + POLL_MS);
    }
  }
  b.stop();
  holdFold(db, null);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

async function startMosquitto(): Promise<{ url: string; proc: ChildProcess }> {
  if (spawnSync('mosquitto', ['-h']).error) throw new Error('mosquitto is not installed (apt-get install mosquitto)');
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, `user ${userInfo().username}\nlistener ${port} 127.0.0.1\nallow_anonymous true\nlog_dest none\n`);
  const proc = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
  const url = `mqtt://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      const c = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
      await c.endAsync();
      return { url, proc };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('mosquitto did not start');
}

async function drainOnce(url: string, file: string): Promise<{ ms: number; n: number }> {
  const db = openDatabase(file);
  const pending = new Pending(db, payloadContext(site(), 'percent'), () => START + DAYS * 86_400_000);
  const n = pending.stats().depth;
  const client = await mqtt.connectAsync(url, { protocolVersion: 5, clean: true, reconnectPeriod: 0 });
  const receiveMaximum = (client as unknown as { _serverProperties?: { receiveMaximum?: number } })._serverProperties
    ?.receiveMaximum;
  const drainer = new Drainer(pending, {
    prefix: 'bench/site',
    maxInflight: 1000,
    ratePerSecond: 1_000_000,
    onRefused: () => undefined,
    onFault: (err) => console.error(err),
  });
  const t0 = performance.now();
  drainer.attach(client, receiveMaximum);
  while (drainer.delivered < n) await new Promise((r) => setTimeout(r, 1));
  // the last acknowledgements are part of the drain
  drainer.flush();
  const ms = performance.now() - t0;
  if (pending.stats().depth !== 0) throw new Error(`${pending.stats().depth} messages left after the drain`);
  drainer.detach();
  await client.endAsync();
  db.close();
  return { ms, n };
}

async function bareOnce(url: string, payloads: string[]): Promise<number> {
  const client = await mqtt.connectAsync(url, { protocolVersion: 5, clean: true, reconnectPeriod: 0 });
  const window =
    (client as unknown as { _serverProperties?: { receiveMaximum?: number } })._serverProperties?.receiveMaximum ??
    65535;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(window, payloads.length) }, async () => {
      while (next < payloads.length) await client.publishAsync('bench/site/telemetry', payloads[next++]!, { qos: 1 });
    }),
  );
  const ms = performance.now() - t0;
  await client.endAsync();
  return ms;
}

async function main(): Promise<void> {
  const file = join(dir, 'offline.db');
  fill(file);
  // the payloads as the drainer publishes them, rebuilt once from the same rows
  const db = openDatabase(file);
  const reader = new Pending(db, payloadContext(site(), 'percent'), () => START);
  const rows = [];
  // a read rebuilds at most ROWS_PER_READ bucket rows (uplink/pending.ts)
  for (let got = reader.read(0, 1_000_000); got.length > 0; got = reader.read(got.at(-1)!.seq, 1_000_000))
    rows.push(...got);
  const payloads = rows.map(wireBody);
  db.close();
  const bytes = payloads.reduce((n, p) => n + Buffer.byteLength(p), 0);

  const { url, proc } = await startMosquitto();
  const ours: number[] = [];
  const bare: number[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const copy = join(dir, `round-${r}.db`);
      copyFileSync(file, copy);
      const d = await drainOnce(url, copy);
      if (d.n !== rows.length) throw new Error(`round ${r}: backlog ${d.n}, expected ${rows.length}`);
      ours.push(d.ms);
      bare.push(await bareOnce(url, payloads));
      rmSync(copy, { force: true });
    }
  } finally {
    proc.kill('SIGTERM');
  }
  const n = rows.length;
  const rate = (ms: number) => Math.round((n / ms) * 1000);
  const table: [string, string][] = [
    [
      'backlog',
      `${n} messages (${DAYS} days x 96 bucket periods, ${site().streams().length} streams of 10 devices), ${(bytes / 1024).toFixed(0)} KiB of payload`,
    ],
    [
      'drain from the stamped buckets to mosquitto (median)',
      `${rate(median(ours))} msg/s (${median(ours).toFixed(0)} ms)`,
    ],
    [
      'bare mqtt.js QoS 1, same payloads and window (median)',
      `${rate(median(bare))} msg/s (${median(bare).toFixed(0)} ms)`,
    ],
    ['ratio drain / bare (time)', `${(median(ours) / median(bare)).toFixed(2)}x (target <= 1.5x)`],
    ['at the default pace (50 msg/s) the backlog takes', `${(n / 50).toFixed(0)} s`],
  ];
  const w = Math.max(...table.map((r) => r[0].length));
  for (const [k, v] of table) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
  process.stdout.write(`(${ROUNDS} rounds, alternating)\n`);
  rmSync(dir, { recursive: true, force: true });
}

await main();
