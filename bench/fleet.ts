/**
 * The fleet run (issue 21): many sites' uplinks against one mosquitto, two reference consumers
 * (`sitegw consume`) on one shared subscription and one database, and faults on the way: a broker
 * crash (SIGKILL) mid-close, one consumer killed mid-close (restarted half an hour later), a tenth
 * of the sites offline for an hour, and both consumers killed mid-close (back half an hour later,
 * so every site has a hole to resync). Sites run in worker processes (bench/lib/fleet-sites.ts), each
 * with its real outbox in its own SQLite file, on a ScaledClock (--speed, as `sitegw demo --speed`).
 *
 * At the end it proves the delivery: every bucket every site stored is in the consumer's
 * database exactly once, none missing, no seq hole left open; and reports messages/s, consumer
 * lag, the herd at bucket close, per-site bandwidth and the broker's memory per connected site.
 *
 *   node --import tsx bench/fleet.ts [--sites 200] [--hours 8] [--speed 120] [--jitter 60] [--no-faults] [--json FILE]
 */
import { type ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { sqliteDriver } from '../src/store/driver.js';
import { BUCKET_MS } from '../src/telemetry/align.js';
import type { WorkerArgs } from './lib/fleet-sites.js';
import { median } from './lib/stats.js';

const { values: opt } = parseArgs({
  options: {
    sites: { type: 'string', default: '200' },
    hours: { type: 'string', default: '8' },
    speed: { type: 'string', default: '120' },
    jitter: { type: 'string', default: '60' },
    workers: { type: 'string', default: '2' },
    'no-faults': { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const SITES = Number(opt.sites);
const HOURS = Number(opt.hours);
const SPEED = Number(opt.speed);
const JITTER = Number(opt.jitter);
const WORKERS = Number(opt.workers);
const FAULTS = !opt['no-faults'];
const HOUR = 3_600_000;
const ROOT = new URL('../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'sitegw-fleet-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => process.stderr.write(`[fleet ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${s}\n`);
const t0 = Date.now();

// ---- broker --------------------------------------------------------------------------------
if (spawnSync('mosquitto', ['-h']).error) throw new Error('mosquitto is not installed (apt-get install mosquitto)');
const brokerPort = 20_000 + Math.floor(Math.random() * 20_000);
const conf = join(dir, 'mosquitto.conf');
// max_queued_messages: the default 1000 per client drops QoS 1 messages for a consumer that falls
// behind the replay of the sites coming back; a fleet broker is sized for its consumers' backlog
writeFileSync(
  conf,
  [
    `user ${userInfo().username}`,
    `listener ${brokerPort} 127.0.0.1`,
    'allow_anonymous true',
    'persistence true',
    `persistence_location ${dir}/`,
    'max_queued_messages 100000',
    'log_dest none',
    '',
  ].join('\n'),
);
let broker: ChildProcess | null = null;
async function startBroker(): Promise<void> {
  broker = spawn('mosquitto', ['-c', conf], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise<boolean>((r) => {
      const c = mqtt.connect(`mqtt://127.0.0.1:${brokerPort}`, { reconnectPeriod: 0, connectTimeout: 500 });
      c.once('connect', () => (c.end(true), r(true)));
      c.once('error', () => (c.end(true), r(false)));
      c.once('close', () => r(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error('mosquitto did not start');
}
async function stopBroker(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const b = broker;
  broker = null;
  if (!b || b.exitCode !== null) return;
  await new Promise<void>((r) => (b.once('exit', () => r()), b.kill(signal)));
}
const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${broker!.pid}/status`, 'utf8'))![1]);

// ---- consumers ------------------------------------------------------------------------------
const consumerDb = join(dir, 'cloud.db');
const consumers: (ChildProcess | null)[] = [null, null];
function startConsumer(i: number): void {
  const p = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'src/cli.ts'),
      'consume',
      '--broker',
      `mqtt://127.0.0.1:${brokerPort}`,
      '--group',
      'fleet',
      '--db',
      consumerDb,
      '--client-id',
      `consumer-${i}`,
      '--gap-wait',
      '2',
      '--retry-after',
      '20',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  p.stderr!.on('data', (d) =>
    String(d)
      .split('\n')
      .filter(Boolean)
      .forEach((l) => resyncLog.push(`consumer-${i}: ${l}`)),
  );
  consumers[i] = p;
}
const resyncLog: string[] = [];

// ---- monitor: a plain (not shared) subscriber, for arrival times and sizes ------------------
const arrivals: { at: number; site: string; bytes: number; start: number; resync: boolean }[] = [];
const statusSizes: number[] = [];

async function main(): Promise<void> {
  await startBroker();
  const rssEmpty = rssKiB();
  startConsumer(0);
  startConsumer(1);
  const monitor = await mqtt.connectAsync(`mqtt://127.0.0.1:${brokerPort}`, {
    protocolVersion: 5,
    reconnectPeriod: 500,
  });
  const sub = () => monitor.subscribeAsync(['sitegw/+/telemetry', 'sitegw/+/status'], { qos: 0 });
  await sub();
  monitor.on('connect', () => void sub().catch(() => undefined));
  monitor.on('message', (topic, payload) => {
    const wire = payload.length + topic.length + 2 + 3;
    if (topic.endsWith('/status')) return void statusSizes.push(wire);
    const b = JSON.parse(String(payload));
    arrivals.push({
      at: Date.now(),
      site: b.siteId,
      bytes: wire,
      start: Date.parse(b.time),
      resync: b.resync !== undefined,
    });
  });

  // the site clock starts a minute before a day's first bucket closes
  const origin = Date.parse('2026-06-01T00:00:00Z') + BUCKET_MS - 60_000;
  const realStart = Date.now() + 3000;
  const siteNow = () => origin + (Date.now() - realStart) * SPEED;
  const realAt = (site: number) => realStart + (site - origin) / SPEED;
  const ids = Array.from({ length: SITES }, (_, i) => `site-${String(i + 1).padStart(4, '0')}`);
  const offline = FAULTS ? ids.filter((_, i) => i % 10 === 3) : [];
  const workers: ChildProcess[] = [];
  const ready: Promise<unknown>[] = [];
  for (let w = 0; w < WORKERS; w++) {
    const slice = ids.filter((_, i) => i % WORKERS === w);
    const a: WorkerArgs = {
      ids: slice,
      offline: offline.filter((x) => slice.includes(x)),
      brokerPort,
      speed: SPEED,
      origin,
      realStart,
      jitterSeconds: JITTER,
      dir,
    };
    const p = fork(join(ROOT, 'bench/lib/fleet-sites.ts'), [JSON.stringify(a)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    workers.push(p);
    ready.push(new Promise((r) => p.once('message', r)));
  }
  await Promise.all(ready);
  const ask = (p: ChildProcess, m: object) => new Promise<any>((r) => (p.once('message', r), p.send(m)));
  const status = async () => {
    const all = await Promise.all(workers.map((p) => ask(p, { cmd: 'status' })));
    return all.reduce(
      (a, s) => ({
        depth: a.depth + s.depth,
        connected: a.connected + s.connected,
        delivered: a.delivered + s.delivered,
      }),
      { depth: 0, connected: 0, delivered: 0 },
    );
  };
  log(
    `${SITES} sites in ${WORKERS} workers, speed ${SPEED}, ${HOURS} site hours, jitter ${JITTER} s, faults ${FAULTS ? 'on' : 'off'}`,
  );
  for (let i = 0; i < 100 && (await status()).connected < SITES; i++) await sleep(200);
  await sleep(1000);
  const rssConnected = rssKiB();
  log(`all connected; mosquitto RSS ${rssEmpty} KiB empty, ${rssConnected} KiB with ${SITES} sites + 3 clients`);

  const faults: string[] = [];
  const at = async (siteHours: number, what: string, fn: () => Promise<void> | void) => {
    const wait = realAt(origin + siteHours * HOUR) - Date.now();
    if (wait > 0) await sleep(wait);
    log(what);
    faults.push(`${(siteHours * 60).toFixed(0)} site min: ${what}`);
    await fn();
  };
  let rssPeak = rssConnected;
  const rssTimer = setInterval(() => broker && (rssPeak = Math.max(rssPeak, rssKiB())), 1000);
  if (FAULTS) {
    // mid-stream: 100 site s after the hour's close, inside the grace + jitter window its messages go out in
    const MID = 100 / 3600;
    // a crash, not a clean stop: what it had acknowledged to the sites and not yet passed on (or
    // saved: autosave_interval is 30 min by default) is gone, and the consumers find the holes
    await at(1 + MID, 'broker crash in the middle of a close (SIGKILL), started again 5 s later', async () => {
      await stopBroker('SIGKILL');
      await sleep(5000);
      await startBroker();
    });
    await at(2 + MID, 'consumer-1 killed (SIGKILL) in the middle of a close', () => void consumers[1]!.kill('SIGKILL'));
    await at(2.5, 'consumer-1 started again', () => startConsumer(1));
    await at(
      3,
      `${offline.length} sites offline (connections cut, reconnects refused)`,
      async () => void (await Promise.all(workers.map((p) => ask(p, { cmd: 'offline', ids: offline })))),
    );
    await at(
      4,
      `${offline.length} sites back online`,
      async () => void (await Promise.all(workers.map((p) => ask(p, { cmd: 'online', ids: offline })))),
    );
    // the whole group gone in the middle of a close: the broker drops what no member takes, so
    // every site has a hole the consumers must find and ask for with cmd/resync once back
    await at(5 + MID, 'both consumers killed (SIGKILL) in the middle of a close', () =>
      consumers.forEach((c) => c!.kill('SIGKILL')),
    );
    await at(5.5, 'both consumers started again', () => (startConsumer(0), startConsumer(1)));
  }
  await at(
    HOURS,
    'sites stop producing; draining',
    async () => void (await Promise.all(workers.map((p) => ask(p, { cmd: 'stopProducing' })))),
  );
  const producedUntil = siteNow();
  for (let i = 0; i < 300; i++) {
    const s = await status();
    if (s.depth === 0 && s.connected === SITES) break;
    await sleep(500);
  }
  // every stored bucket, per site (read-only, the workers still hold the files)
  const expected = new Set<string>();
  for (const id of ids) {
    const db = new (sqliteDriver())(join(dir, `${id}.db`), { readonly: true });
    for (const [k, s] of db
      .prepare('SELECT s.key, b.start_s FROM buckets_all b JOIN streams s ON s.id = b.stream')
      .raw()
      .all() as [string, number][])
      expected.add(`${id}|${k}|${new Date(s * 1000).toISOString()}`);
    db.close();
  }
  const cdb = new (sqliteDriver())(consumerDb, { readonly: true, fileMustExist: true });
  cdb.pragma('busy_timeout = 5000');
  const got = () =>
    new Set(
      (cdb.prepare('SELECT site_id, device_id, start FROM telemetry').raw().all() as [string, string, number][]).map(
        ([s, d, t]) => `${s}|${d}|${new Date(t).toISOString()}`,
      ),
    );
  const openHoles = () =>
    cdb.prepare(`SELECT COUNT(*) FROM holes WHERE status IN ('open','requested','accepted')`).pluck().get() as number;
  let have = got();
  const drainedAt = Date.now();
  for (let i = 0; i < 240 && ([...expected].some((k) => !have.has(k)) || openHoles() > 0); i++) {
    await sleep(500);
    have = got();
  }
  log(`consumer caught up ${((Date.now() - drainedAt) / 1000).toFixed(1)} s after the outboxes drained`);
  clearInterval(rssTimer);

  // ---- the proof --------------------------------------------------------------------------
  const missing = [...expected].filter((k) => !have.has(k));
  const extra = [...have].filter((k) => !expected.has(k));
  const rowsVsKeys = cdb
    .prepare('SELECT COUNT(*) AS rows, COUNT(DISTINCT site_id || device_id || start) AS keys FROM telemetry')
    .get() as { rows: number; keys: number };
  const holes = cdb.prepare('SELECT status, COUNT(*) AS n FROM holes GROUP BY status').all() as {
    status: string;
    n: number;
  }[];
  const ledger = cdb.prepare('SELECT COUNT(*) AS runs, COUNT(DISTINCT site_id) AS sites FROM seq_ranges').get() as {
    runs: number;
    sites: number;
  };
  const counts = cdb.prepare('SELECT SUM(messages) AS messages, SUM(duplicates) AS duplicates FROM sites').get() as {
    messages: number;
    duplicates: number;
  };
  const filledSeqs = cdb
    .prepare(`SELECT COALESCE(SUM(filled_seqs), 0) FROM holes WHERE status = 'filled'`)
    .pluck()
    .get() as number;
  const seqSpan = cdb.prepare('SELECT COALESCE(SUM(hi - lo + 1), 0) FROM seq_ranges').pluck().get() as number;
  // consumer lag: receipt (real) against the bucket's end on the site clock, live entries only
  const lagRows = cdb.prepare('SELECT site_id, start, received_at FROM telemetry WHERE resync IS NULL').raw().all() as [
    string,
    number,
    number,
  ][];
  const lagOf = (rows: [string, number, number][]) =>
    rows.map(([, start, rec]) => (rec - realAt(start + BUCKET_MS)) / 1000);
  const offlineSet = new Set(offline);
  const lagLive = lagOf(lagRows.filter(([s]) => !offlineSet.has(s))).sort((a, b) => a - b);
  const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
  cdb.close();

  // ---- rates ------------------------------------------------------------------------------
  const live = arrivals.filter((a) => !a.resync);
  const span = (Math.max(...arrivals.map((a) => a.at)) - Math.min(...arrivals.map((a) => a.at))) / 1000;
  // how a close's messages spread: arrival after the close's bucket end, site seconds
  const afterEnd = (a: (typeof arrivals)[number]) => ((a.at - realAt(a.start + BUCKET_MS)) * SPEED) / 1000;
  const spread = live
    .filter((a) => !offlineSet.has(a.site))
    .map(afterEnd)
    .sort((a, b) => a - b);
  // the herd: messages per 100 ms real window, counting only messages on time (published at
  // their close, not a backlog after a fault): grace 90 s + jitter + 30 s of site time
  const perWindow = new Map<number, number>();
  for (const a of live)
    if (afterEnd(a) <= 120 + JITTER)
      perWindow.set(Math.floor(a.at / 100), (perWindow.get(Math.floor(a.at / 100)) ?? 0) + 1);
  const peak100 = Math.max(...perWindow.values());
  const teleBytes = median(live.map((a) => a.bytes));
  const statusBytes = median(statusSizes);

  const rows: [string, string][] = [
    [
      'sites (uplinks, each its own SQLite outbox)',
      `${SITES} in ${WORKERS} worker processes, speed ${SPEED}× (${HOURS} site hours in ${((HOURS * HOUR) / SPEED / 60_000).toFixed(1)} min)`,
    ],
    ['consumers', '2 × `sitegw consume`, `$share/fleet/sitegw/+/…`, one SQLite file'],
    ['faults', FAULTS ? faults.join('; ') : 'none'],
    ['telemetry messages at the consumers (live / resync)', `${live.length} / ${arrivals.length - live.length}`],
    ['messages/s, whole run (real)', (arrivals.length / span).toFixed(1)],
    [
      'peak messages per 100 ms at a bucket close (real; on-time messages only)',
      `${peak100} (${((peak100 * 10) / SITES).toFixed(2)} per site per s)`,
    ],
    [
      `arrival after bucket end, site s (p5 / p50 / p95), jitter ${JITTER} s`,
      `${pct(spread, 5).toFixed(0)} / ${pct(spread, 50).toFixed(0)} / ${pct(spread, 95).toFixed(0)}`,
    ],
    [
      'consumer lag, live sites, real s (p50 / p95 / max)',
      `${pct(lagLive, 50).toFixed(2)} / ${pct(lagLive, 95).toFixed(2)} / ${lagLive.at(-1)!.toFixed(2)}`,
    ],
    ['buckets stored by the sites', String(expected.size)],
    [
      'buckets in the consumer db: missing / extra / rows per key',
      `${missing.length} / ${extra.length} / ${(rowsVsKeys.rows / rowsVsKeys.keys).toFixed(2)}`,
    ],
    ['seq messages processed once / duplicates dropped', `${counts.messages} / ${counts.duplicates}`],
    ['holes (by status)', holes.map((h) => `${h.status} ${h.n}`).join(', ') || 'none'],
    [
      'ledger: seq runs per site; processed + filled-hole seqs = span',
      `${(ledger.runs / ledger.sites).toFixed(2)}; ${counts.messages} + ${filledSeqs} = ${seqSpan} (${counts.messages + filledSeqs === seqSpan ? 'exact' : 'MISMATCH'})`,
    ],
    ['wire bytes: telemetry message / status message (median)', `${teleBytes} / ${statusBytes}`],
    [
      'per-site bandwidth per day (96 telemetry + status every 60 s)',
      `${((96 * (teleBytes + 4) + 1440 * (statusBytes + 4)) / 1e6).toFixed(2)} MB (telemetry ${((96 * (teleBytes + 4)) / 1e3).toFixed(0)} kB)`,
    ],
    [
      'mosquitto RSS: empty / all connected / peak',
      `${(rssEmpty / 1024).toFixed(1)} / ${(rssConnected / 1024).toFixed(1)} / ${(rssPeak / 1024).toFixed(1)} MiB`,
    ],
    [
      'broker memory per connected site',
      `${(((rssConnected - rssEmpty) * 1024) / SITES / 1024).toFixed(1)} KiB (peak ${(((rssPeak - rssEmpty) * 1024) / SITES / 1024).toFixed(1)} KiB)`,
    ],
  ];
  const table = ['| measure | value |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
  process.stdout.write(`${table}\n`);
  const ok =
    missing.length === 0 &&
    extra.length === 0 &&
    rowsVsKeys.rows === rowsVsKeys.keys &&
    counts.messages + filledSeqs === seqSpan &&
    ledger.runs === ledger.sites;
  process.stdout.write(`\nexactly once after de-duplication, none missing: ${ok ? 'YES' : 'NO'}\n`);
  if (!ok)
    process.stdout.write(
      `missing (first 5): ${missing.slice(0, 5).join(', ')}\nconsumer log (last 20):\n${resyncLog.slice(-20).join('\n')}\n`,
    );
  if (opt.json)
    writeFileSync(opt.json, JSON.stringify({ rows, ok, producedUntil, resyncLog: resyncLog.slice(-50) }, null, 2));

  for (const c of consumers) c?.kill('SIGTERM');
  await Promise.all(workers.map((p) => ask(p, { cmd: 'stop' }).catch(() => undefined)));
  await monitor.endAsync(true);
  await stopBroker();
  rmSync(dir, { recursive: true, force: true });
  process.exitCode = ok ? 0 : 1;
}

main().catch(async (err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  for (const c of consumers) c?.kill('SIGKILL');
  await stopBroker();
  process.exit(1);
});
