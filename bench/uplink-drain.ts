/**
 * The uplink draining a backlog: seven days of a ten-device site (672 closed bucket periods,
 * one telemetry message each) waiting in the SQLite outbox, published to a local mosquitto at
 * QoS 1 and deleted on PUBACK. Baseline in the same run: bare mqtt.js publishing the same
 * payloads to the same topic at QoS 1 with the same number in flight (the broker's receive
 * maximum), no SQLite. Rounds alternate between the two; medians are reported.
 *
 * Also: bytes the outbox makes SQLite write per day, as WAL growth (auto-checkpoint off, so
 * every committed page stays in the WAL) of the same seven days closed with and without the
 * outbox hook: while connected (each message deleted after its PUBACK) and while offline.
 *
 *   node --import tsx bench/uplink-drain.ts [rounds]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { EventBus } from '../src/core/events.js';
import { parseConfig } from '../src/profiles/site-config.js';
import { Site } from '../src/site/site.js';
import { type Database, openDatabase } from '../src/store/db.js';
import { enqueue, outboxStats, readAfter, remove, withSeq } from '../src/store/outbox.js';
import { BUCKET_MS } from '../src/telemetry/align.js';
import { Bucketer } from '../src/telemetry/bucketer.js';
import { Drainer } from '../src/uplink/drain.js';
import { telemetryBodies } from '../src/uplink/payloads.js';
import { Pending } from '../src/uplink/pending.js';
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

type Mode = 'none' | 'connected' | 'offline';

/** Closes DAYS of buckets through the real bucketer; returns the WAL bytes written. */
function fill(file: string, mode: Mode): { walBytes: number; db: Database } {
  const db = openDatabase(file);
  db.pragma('wal_autocheckpoint = 0');
  const s = site();
  const ctx = { siteId: s.id, stream: (id: string) => s.stream(id), socScale: 'percent' as const };
  const bus = new EventBus();
  const b = new Bucketer({ db, streams: s.streams(), pollPeriodMs: POLL_MS, bus });
  b.start();
  let seqs: number[] = [];
  if (mode !== 'none')
    bus.inTransaction('bucketsClosing', (closed) => (seqs = enqueue(db, telemetryBodies(ctx, closed), closed[0]!.end)));
  const walBefore = walSize(file);
  const streams = s.streams();
  for (let t = START, i = 0; t < START + DAYS * 86_400_000; t += POLL_MS, i++) {
    for (const st of streams) {
      const w = 1000 * Math.sin(i / 50 + st.id.length);
      b.ingest({
        streamId: st.id,
        ts: t,
        values: { power_W: w, power_AC_W: w, power_DC_W: -w, soc: 50 + (i % 40), soh: 98, state: 'ok' },
      });
    }
    if ((t + POLL_MS) % BUCKET_MS === 0) {
      b.closeUntil(t + POLL_MS);
      // connected: the PUBACK comes back right away and the drainer deletes the row
      if (mode === 'connected' && seqs.length) remove(db, seqs);
      seqs = [];
    }
  }
  return { walBytes: walSize(file) - walBefore, db };
}

function walSize(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
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
  const n = outboxStats(db).depth;
  const client = await mqtt.connectAsync(url, { protocolVersion: 5, clean: true, reconnectPeriod: 0 });
  const receiveMaximum = (client as unknown as { _serverProperties?: { receiveMaximum?: number } })._serverProperties
    ?.receiveMaximum;
  const drainer = new Drainer(new Pending(db, { siteId: 'x', stream: () => undefined, socScale: 'percent' }, () => 0), {
    prefix: 'bench/site',
    maxInflight: 1000,
    ratePerSecond: 1_000_000,
    onRefused: () => undefined,
    onFault: (err) => console.error(err),
  });
  const t0 = performance.now();
  drainer.attach(client, receiveMaximum);
  while (drainer.delivered < n) await new Promise((r) => setTimeout(r, 1));
  // the last deletes are part of the drain
  drainer.flush();
  const ms = performance.now() - t0;
  if (outboxStats(db).depth !== 0) throw new Error('outbox not empty after the drain');
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
  const none = fill(join(dir, 'none.db'), 'none');
  const connected = fill(join(dir, 'connected.db'), 'connected');
  const offline = fill(join(dir, 'offline.db'), 'offline');
  const backlog = outboxStats(offline.db);
  const payloads = readAfter(offline.db, 0, 1_000_000).map((r) => withSeq(r.seq, r.body));
  for (const x of [none, connected]) x.db.close();
  offline.db.pragma('wal_checkpoint(TRUNCATE)');
  offline.db.close();

  const { url, proc } = await startMosquitto();
  const ours: number[] = [];
  const bare: number[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const copy = join(dir, `round-${r}.db`);
      copyFileSync(join(dir, 'offline.db'), copy);
      const d = await drainOnce(url, copy);
      if (d.n !== backlog.depth) throw new Error(`round ${r}: backlog ${d.n}, expected ${backlog.depth}`);
      ours.push(d.ms);
      bare.push(await bareOnce(url, payloads));
    }
  } finally {
    proc.kill('SIGTERM');
  }
  const n = backlog.depth;
  const rate = (ms: number) => Math.round((n / ms) * 1000);
  const kb = (b: number) => `${(b / 1024).toFixed(0)} KiB`;
  const rows: [string, string][] = [
    [
      'backlog',
      `${n} messages (${DAYS} days x 96 bucket periods, ${site().streams().length} streams of 10 devices), ${kb(backlog.bytes)} of payload`,
    ],
    ['outbox drain to mosquitto (median)', `${rate(median(ours))} msg/s (${median(ours).toFixed(0)} ms)`],
    [
      'bare mqtt.js QoS 1, same payloads and window (median)',
      `${rate(median(bare))} msg/s (${median(bare).toFixed(0)} ms)`,
    ],
    ['ratio outbox / bare (time)', `${(median(ours) / median(bare)).toFixed(2)}x (target <= 1.5x)`],
    ['SQLite WAL written per day, buckets only', kb(none.walBytes / DAYS)],
    ['  + outbox, connected (insert, delete on PUBACK)', `+${kb((connected.walBytes - none.walBytes) / DAYS)} per day`],
    ['  + outbox, offline (insert, kept)', `+${kb((offline.walBytes - none.walBytes) / DAYS)} per day`],
    ['at the default pace (50 msg/s) the backlog takes', `${(n / 50).toFixed(0)} s`],
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
  process.stdout.write(
    `(${ROUNDS} rounds; WAL bytes include page images that a checkpoint writes once more into the database file)\n`,
  );
  rmSync(dir, { recursive: true, force: true });
}

await main();
