/**
 * SD-card wear: bytes written to the database and its WAL per simulated day by a ten-device
 * site (hybrid inverter, seven battery blocks, grid meter, house meter), polled every 10 s.
 * `--devices N` runs a site of N devices instead, laid out as bench/scale.ts lays them (per 18
 * devices an inverter, battery blocks behind it, a meter; the first meter the grid's), all read
 * from one simulator: a whole day of a large site, where a 30 s window of a live run cannot say
 * what a day writes (its first minute holds every device's first-poll facts, bench/README.md).
 *
 * The day runs at full speed through the daemon's own code: the simulator's model read through
 * the poller, profiles and bucketer into SQLite, buckets closed at every 15-minute boundary in
 * one transaction each, exactly as live (the demo's history pre-fill path, without sockets).
 * A live view reads the energy counts every 10 s of the day, as Home Assistant's states do at
 * their default interval, so any save a live view causes between bucket closes is in the figure
 * (since issue 46 only the first after a start: src/telemetry/bucketer.ts lifetime()).
 * Nothing else writes in that window (logger silent, no HTTP), so the process's
 *  - `wchar` (/proc/self/io: bytes handed to write()/pwrite()) is what SQLite writes to the
 *    database and WAL: what the card receives once the kernel flushes, and
 *  - `write_bytes` (pages dirtied) is shown beside it: on a day squeezed into seconds the page
 *    cache merges rewrites of the same WAL pages that a real day would flush one by one, so it
 *    is the smaller, less honest figure.
 * Baseline, same run: the same bucket rows inserted by a bare better-sqlite3 loop into a WAL
 * database with the same table, one transaction per 15-minute period.
 *
 * The same site is run a second time with the uplink connected (each close's telemetry stamped on
 * its bucket rows, other messages in the outbox, all acknowledged as PUBACKs come), unless
 * `--no-outbox`; the limits' and the grid operator's writes,
 * which happen on a change and never at a close, are measured as one write each.
 *
 *   node --import tsx bench/disk-writes.ts [--days N (default 3: the last day is a settled one)] [--devices N] [--no-outbox]
 */
import fs, { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { SiteConfig } from '../src/config/types.js';
import { ManualClock } from '../src/core/clock.js';
import { silentLogger } from '../src/core/log.js';
import { demoSiteConfig } from '../src/demo/default-site.js';
import { prefillHistory } from '../src/demo/prefill.js';
import { type SavedState, saveState } from '../src/gridop/saved.js';
import { Daemon } from '../src/main.js';
import { parseConfig } from '../src/profiles/site-config.js';
import { defaultSimConfig } from '../src/sim/config.js';
import { SimSite } from '../src/sim/site.js';
import { sqliteDriver } from '../src/store/driver.js';
import { replaceLimitSchedule } from '../src/store/limits.js';
import { holdFold } from '../src/store/recent-buckets.js';
import { payloadContext } from '../src/uplink/payloads.js';
import { Pending } from '../src/uplink/pending.js';

// the build that suits this Node (src/store/driver.ts)
const BetterSqlite3 = sqliteDriver();

const DAY_MS = 86_400_000;
const { values } = parseArgs({
  options: { days: { type: 'string', default: '3' }, devices: { type: 'string' }, 'no-outbox': { type: 'boolean' } },
});
const days = Number(values.days);
const devices = values.devices === undefined ? undefined : Number(values.devices);
const PER_HOST = 18;

/** N devices as bench/scale.ts lays them out, every host's units read from the one simulator. */
function largeSiteConfig(n: number, dataDir: string, uplinkUrl: string | undefined): SiteConfig {
  const hosts = Math.ceil(n / PER_HOST);
  const lines: string[] = [];
  for (let h = 0; h < hosts; h++) {
    const batteries = Math.floor((n - 2 * hosts) / hosts) + (h < (n - 2 * hosts) % hosts ? 1 : 0);
    const tcp = (unitId: number) => `{ type: tcp, host: 127.0.0.${h + 2}, port: 9, unitId: ${unitId} }`;
    lines.push(`  - { id: inv-${h}, role: inverter, profile: sunspec, connection: ${tcp(1)} }`);
    for (let b = 0; b < batteries; b++)
      lines.push(
        `  - { id: bat-${h}-${b}, role: battery, profile: sunspec, inverter: inv-${h}, connection: ${tcp(b + 2)} }`,
      );
    // the simulator's grid meter is unit 1 of its meter host, the house meter unit 2
    lines.push(
      `  - { id: meter-${h}, role: ${h === 0 ? 'grid-meter' : 'consumption-meter'}, profile: sunspec, connection: ${tcp(h === 0 ? 1 : 2)} }`,
    );
  }
  const r = parseConfig(
    `version: 1
site: { id: disk, name: Disk bench, timezone: Europe/Berlin, currency: EUR, location: { latitude: 52.5, longitude: 13.4 } }
http: { host: 127.0.0.1, port: 0 }
dataDir: ${JSON.stringify(dataDir)}
poll: { intervalSeconds: 10 }
${uplinkUrl === undefined ? '' : `uplink: { url: ${JSON.stringify(uplinkUrl)} }\n`}devices:
${lines.join('\n')}
`,
    'disk bench site.yaml',
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

/**
 * Bytes the gateway's JavaScript writes outside the data directory: the energy keeps in /dev/shm
 * (store/energy-keep.ts), a tmpfs that costs the card nothing. wchar counts them too, so they are
 * taken out of it and shown on a row of their own. Counted by wrapping fs.writeFileSync (the
 * keeps' one call) for every importer of node:fs.
 */
let outsideBytes = 0;
let dataDirOf = '';
const writeFileSync0 = fs.writeFileSync;
fs.writeFileSync = ((
  file: fs.PathOrFileDescriptor,
  data: string | NodeJS.ArrayBufferView,
  opts?: fs.WriteFileOptions,
) => {
  if (typeof file === 'string' && !file.startsWith(dataDirOf))
    outsideBytes += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  return writeFileSync0(file, data, opts);
}) as typeof fs.writeFileSync;
syncBuiltinESMExports();

function io(): { wchar: number; writeBytes: number; outside: number } {
  const text = readFileSync('/proc/self/io', 'utf8');
  const field = (k: string) => Number(new RegExp(`^${k}:\\s*(\\d+)$`, 'm').exec(text)![1]);
  return { wchar: field('wchar') - outsideBytes, writeBytes: field('write_bytes'), outside: outsideBytes };
}

const size = (f: string) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};

const mb = (b: number) => (b / 1e6).toFixed(2);

/**
 * `outbox`: the site has an uplink, and it is connected as far as the disk can tell: every close
 * stamps its telemetry's seq on its bucket rows (and writes any other message into the outbox) in
 * its own transaction, and once that commits everything waiting is read and acknowledged through
 * src/uplink/pending.ts, what the uplink's drainer calls (src/uplink/drain.ts: read() for what to
 * publish, ack() for what a broker acknowledged, within 50 ms of the PUBACKs): outbox rows
 * deleted, the telemetry's ack position moved and saved hourly, and the day's fold held until it
 * is saved, as the uplink holds it (store/recent-buckets.ts holdFold). No broker runs: the
 * daemon's own link finds none at the configured address and its drain stays paused through the
 * pre-fill anyway (main.ts whileFilling), so the acknowledgement is made here, in process, at once
 * after each close, on the readings' clock.
 */
async function gateway(dataDir: string, outbox: boolean) {
  dataDirOf = dataDir;
  const sim = defaultSimConfig();
  // unit ids 2..17 behind each inverter in a large site
  sim.battery.blocks = Array.from({ length: devices === undefined ? 7 : 16 }, () =>
    structuredClone(sim.battery.blocks[0]!),
  );
  const end = Date.UTC(2026, 5, 22, 0, 0);
  const from = end - days * DAY_MS;
  const site = new SimSite(sim, from);
  // live polling after the day is not measured: the devices' ports are dead on purpose
  const ep = { host: '127.0.0.1', port: 9 };
  // nothing listens there: the link retries in the background and the bench acknowledges itself
  const uplinkUrl = outbox ? 'mqtt://127.0.0.1:9' : undefined;
  const config =
    devices === undefined
      ? demoSiteConfig(
          { inverter: ep, meter: ep },
          { httpHost: '127.0.0.1', httpPort: 0, dataDir, pollSeconds: 10, batteryBlocks: 7, uplinkUrl },
        )
      : largeSiteConfig(devices, dataDir, uplinkUrl);
  const want = devices ?? 10;
  if (config.devices.length !== want) throw new Error(`expected ${want} devices, got ${config.devices.length}`);
  let before = io();
  let after = before;
  // from the last day's first reading: with --days 2 or more, a day once every stream's buckets
  // fill leaf pages of their own (about 58 rows, 0.6 days), so each close touches a page a stream
  let lastDay: ReturnType<typeof io> | undefined;
  // from the second day's first reading: the days after the first, whose checkpoints and folds
  // fall on any of them (the last day alone holds one checkpoint more or less)
  let secondDay: ReturnType<typeof io> | undefined;
  let acked = 0;
  let outboxPeak = 0;
  const daemon = await Daemon.start({
    config,
    clock: new ManualClock(end + 15_000),
    log: silentLogger(),
    listen: false,
    beforePolling: async (ctx) => {
      let viewed = -Infinity;
      const lastFrom = end - DAY_MS;
      const off = ctx.bus.on('reading', (r) => {
        if (r.ts >= lastFrom && lastDay === undefined && days > 1) lastDay = io();
        if (r.ts >= from + DAY_MS && secondDay === undefined && days > 2) secondDay = io();
        if (r.ts - viewed < 10_000) return;
        viewed = r.ts;
        ctx.ops.streamsNow();
      });
      // after the close's commit: the connected uplink's PUBACKs, as its drainer acknowledges them,
      // and its hold on the fold moving with them (in place of the paused uplink's own)
      let readingTs = from;
      const offTs = ctx.bus.on('reading', (r) => void (readingTs = Math.max(readingTs, r.ts)));
      const pending = outbox
        ? new Pending(ctx.db, payloadContext(ctx.site, config.api.socScale), () => readingTs)
        : null;
      if (pending)
        holdFold(ctx.db, {
          through: () => pending.through,
          now: () => readingTs,
          maxAgeMs: config.uplink!.outbox.maxAgeDays * DAY_MS,
        });
      const offAck = pending
        ? ctx.bus.on('bucketsClosed', () => {
            const rows = pending.read(0, 100_000);
            if (rows.length === 0) return;
            for (const r of rows) outboxPeak = Math.max(outboxPeak, Buffer.byteLength(r.body));
            pending.ack(rows);
            acked += rows.length;
          })
        : () => undefined;
      before = io();
      await prefillHistory(ctx, site, from);
      after = io();
      off();
      offTs();
      offAck();
    },
  });
  const dbFile = join(dataDir, 'sitegw.db');
  await daemon.stop();
  // after the stop the WAL is checkpointed into the file: what the day costs in storage
  const dbBytes = size(dbFile) + size(`${dbFile}-wal`);
  return {
    wchar: after.wchar - before.wchar,
    writeBytes: after.writeBytes - before.writeBytes,
    outside: after.outside - before.outside,
    lastDay: lastDay === undefined ? undefined : after.wchar - lastDay.wchar,
    settled: secondDay === undefined ? undefined : (after.wchar - secondDay.wchar) / (days - 1),
    dbBytes,
    dbFile,
    devices: config.devices.length,
    acked,
    outboxPeak,
  };
}

/** The same bucket rows, inserted by a bare loop: one transaction per 15-minute period. */
function baseline(fromDb: string, dir: string): { wchar: number; rows: number } {
  const src = new BetterSqlite3(fromDb, { readonly: true });
  const rows = src
    .prepare(
      'SELECT stream, start_s, covered_ms, power_W, power_AC_W, power_DC_W, soc, soh, energy_in, energy_out, state FROM buckets_all ORDER BY start_s, stream',
    )
    .raw()
    .all() as unknown[][];
  src.close();
  const db = new BetterSqlite3(join(dir, 'bare.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE buckets (stream INTEGER NOT NULL, start_s INTEGER NOT NULL, covered_ms INTEGER NOT NULL, power_W REAL, power_AC_W REAL,
    power_DC_W REAL, soc REAL, soh REAL, energy_in REAL, energy_out REAL, state TEXT, PRIMARY KEY (stream, start_s)) WITHOUT ROWID`);
  const ins = db.prepare('INSERT INTO buckets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const before = io().wchar;
  for (let i = 0; i < rows.length; ) {
    const start = rows[i]![1];
    let j = i;
    while (j < rows.length && rows[j]![1] === start) j++;
    const batch = rows.slice(i, j);
    db.transaction(() => {
      for (const r of batch) ins.run(...r);
    })();
    i = j;
  }
  const wchar = io().wchar - before;
  db.close();
  return { wchar, rows: rows.length };
}

/**
 * What the limits and the grid operator write: neither writes at a close. A limit schedule is
 * replaced whole when a partner, the customer or the cloud sends one (src/store/limits.ts), and the
 * grid operator's programs go to a file beside the database when what its server says changes
 * (src/gridop/saved.ts); so each is measured as one write on the settled database of the run: a
 * day-ahead schedule of 96 quarter-hour slots, and a program of 96 quarter-hour controls.
 */
function occasional(dbFile: string, dataDir: string): { limitsWrite: number; gridopWrite: number } {
  const db = new BetterSqlite3(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const day = Date.UTC(2026, 5, 22);
  const q = 900_000;
  const before = io().wchar;
  replaceLimitSchedule(db, {
    scheduleId: '4f0c1c9e-8d0e-4d8e-9a51-1f2a3b4c5d6e',
    source: 'partner:bench',
    createdMs: day,
    slots: Array.from({ length: 96 }, (_, i) => ({
      startMs: day + i * q,
      endMs: day + (i + 1) * q,
      exportW: 4000 + (i % 7) * 100,
      importW: null,
      generationW: null,
    })),
  });
  const limitsWrite = io().wchar - before;
  db.close();
  const base = { unsupported: [] as string[] };
  const at = day / 1000;
  const state: SavedState = {
    version: 1,
    savedAt: day,
    discoveryUrl: 'https://gridop.example/dcap',
    lfdi: '3e4f45ab31edfe5b67e343e5e4562e31984e23e5',
    offsetSeconds: 0,
    programs: [
      {
        mRID: 'A1000000000000000000000000000001',
        primacy: 1,
        controls: Array.from({ length: 96 }, (_, i) => ({
          href: `/derp/0/derc/${i}`,
          mRID: `B${String(i).padStart(31, '0')}`,
          description: 'export limit',
          creationTime: at,
          currentStatus: 0,
          statusTime: at,
          start: at + i * 900,
          duration: 900,
          responseRequired: 3,
          base: { ...base, exportW: 4000 + (i % 7) * 100 },
        })),
        defaultControl: {
          href: '/derp/0/dderc',
          mRID: 'C1000000000000000000000000000001',
          base: { ...base, exportW: 5000 },
        },
      },
    ],
    randomization: [],
    phases: Array.from(
      { length: 96 },
      (_, i) => [`B${String(i).padStart(31, '0')}`, 'received'] as [string, 'received'],
    ),
  };
  const before2 = io().wchar;
  saveState(join(dataDir, 'gridop-state.json'), state);
  return { limitsWrite, gridopWrite: io().wchar - before2 };
}

const dir = mkdtempSync(join(tmpdir(), 'sitegw-disk-bench-'));
// the daemons' energy keeps in a tmpfs folder of this run, removed with it (a clean stop leaves the
// file on purpose: store/energy-keep.ts): in memory as on a site, so they cost no write_bytes
const keeps = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'sitegw-disk-bench-keep-'));
process.env.SITEGW_ENERGY_KEEP_DIR = keeps;
try {
  const g = await gateway(join(dir, 'gw'), false);
  const b = baseline(g.dbFile, dir);
  const u = values['no-outbox'] ? undefined : await gateway(join(dir, 'gw-outbox'), true);
  const occ = occasional(g.dbFile, join(dir, 'gw'));
  const perDay = (x: number) => x / days;
  const kb = (x: number) => (x / 1e3).toFixed(1);
  console.log(
    `${devices === undefined ? 'ten-device site' : `${g.devices}-device site (bench/scale.ts layout)`}, ${days} simulated day(s), poll 10 s, ${b.rows} buckets (${Math.round(b.rows / days / 96)} streams x 96 a day)`,
  );
  console.log('');
  console.log('| SD-card writes per simulated day | MB/day | ratio to bare insert loop |');
  console.log('|---|---:|---:|');
  console.log(
    `| baseline: bare better-sqlite3 inserts of the same rows, one transaction per 15 min | ${mb(perDay(b.wchar))} | 1.00x |`,
  );
  const rows = (x: Awaited<ReturnType<typeof gateway>>, what: string) => {
    console.log(
      `| ${what}: database + WAL (write syscalls to the data directory) | ${mb(perDay(x.wchar))} | ${(x.wchar / b.wchar).toFixed(2)}x |`,
    );
    console.log(
      `| ${what}: pages dirtied (write_bytes, merged by the page cache) | ${mb(perDay(x.writeBytes))} | ${(x.writeBytes / b.wchar).toFixed(2)}x |`,
    );
    if (x.settled !== undefined)
      console.log(
        `| ${what}: a settled day, the average of days 2 to ${days} (write syscalls) | ${mb(x.settled)} | ${(x.settled / perDay(b.wchar)).toFixed(2)}x |`,
      );
    if (x.lastDay !== undefined)
      console.log(`| ${what}: the last of the ${days} days alone (write syscalls) | ${mb(x.lastDay)} | |`);
  };
  rows(g, 'gateway without an uplink');
  if (u) {
    rows(u, 'gateway with the uplink connected (telemetry stamped on its buckets, acknowledged on PUBACK)');
    const share = (x: number | undefined, y: number | undefined) =>
      x === undefined || y === undefined ? '' : ` (a settled day: ${mb(x - y)})`;
    console.log(
      `| the outbox's share: with minus without${share(u.settled, g.settled)}; ${u.acked} messages acknowledged, the largest ${kb(u.outboxPeak)} kB | ${mb(perDay(u.wchar - g.wchar))} | |`,
    );
  }
  console.log(
    `| not counted above: the energy keeps' write() calls into /dev/shm (memory, not the card) | ${mb(perDay(g.outside))} | |`,
  );
  console.log(
    `| database file after the run (all tables, schema included) | ${mb(g.dbBytes / days)} stored per day | |`,
  );
  console.log(
    `| limits: one limit schedule of 96 slots replaced (src/store/limits.ts; per write, none at a close) | ${mb(occ.limitsWrite)} per write (${kb(occ.limitsWrite)} kB) | |`,
  );
  console.log(
    `| grid operator: its state file with 96 controls saved (src/gridop/saved.ts; per change, none at a close) | ${mb(occ.gridopWrite)} per write (${kb(occ.gridopWrite)} kB) | |`,
  );
  console.log('');
  // a day's cost grows until every stream's buckets have leaf pages of their own: the last day says what a site pays
  const judged = (x: Awaited<ReturnType<typeof gateway>>) => x.settled ?? x.lastDay ?? perDay(x.wchar);
  // issue 46: 2 MB a day for the ten-device home site, 20 MB for 200 devices (0.1 MB a device)
  const target = Math.max(2e6, g.devices * 0.1e6);
  const kind =
    g.settled !== undefined
      ? 'a settled day'
      : g.lastDay !== undefined
        ? 'the last day'
        : 'the average day; --days 3 or more for a settled one';
  for (const [x, what] of [
    [g, 'without an uplink'],
    [u, 'with the uplink connected'],
  ] as const)
    if (x)
      console.log(
        `target: <= ${mb(target)} MB/day (${kind}), ${what}: ${mb(judged(x))} -> ${judged(x) <= target ? 'met' : 'MISSED'}`,
      );
} finally {
  rmSync(dir, { recursive: true, force: true });
  rmSync(keeps, { recursive: true, force: true });
}
