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
 * their default interval, so the saves between bucket closes that live views cause (at most one
 * per 5 minutes, each a durable commit) are in the figure.
 * Nothing else writes in that window (logger silent, no HTTP), so the process's
 *  - `wchar` (/proc/self/io: bytes handed to write()/pwrite()) is what SQLite writes to the
 *    database and WAL: what the card receives once the kernel flushes, and
 *  - `write_bytes` (pages dirtied) is shown beside it: on a day squeezed into seconds the page
 *    cache merges rewrites of the same WAL pages that a real day would flush one by one, so it
 *    is the smaller, less honest figure.
 * Baseline, same run: the same bucket rows inserted by a bare better-sqlite3 loop into a WAL
 * database with the same table, one transaction per 15-minute period.
 *
 *   node --import tsx bench/disk-writes.ts [--days N (default 3: the last day is a settled one)] [--devices N]
 */
import fs, { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { SiteConfig } from '../src/config/types.js';
import { ManualClock } from '../src/core/clock.js';
import { silentLogger } from '../src/core/log.js';
import { demoSiteConfig } from '../src/demo/default-site.js';
import { prefillHistory } from '../src/demo/prefill.js';
import { Daemon } from '../src/main.js';
import { parseConfig } from '../src/profiles/site-config.js';
import { defaultSimConfig } from '../src/sim/config.js';
import { SimSite } from '../src/sim/site.js';
import { sqliteDriver } from '../src/store/driver.js';

// the build that suits this Node (src/store/driver.ts)
const BetterSqlite3 = sqliteDriver();

const DAY_MS = 86_400_000;
const { values } = parseArgs({ options: { days: { type: 'string', default: '3' }, devices: { type: 'string' } } });
const days = Number(values.days);
const devices = values.devices === undefined ? undefined : Number(values.devices);
const PER_HOST = 18;

/** N devices as bench/scale.ts lays them out, every host's units read from the one simulator. */
function largeSiteConfig(n: number, dataDir: string): SiteConfig {
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
devices:
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

async function gateway(dataDir: string) {
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
  const config =
    devices === undefined
      ? demoSiteConfig(
          { inverter: ep, meter: ep },
          { httpHost: '127.0.0.1', httpPort: 0, dataDir, pollSeconds: 10, batteryBlocks: 7 },
        )
      : largeSiteConfig(devices, dataDir);
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
      before = io();
      await prefillHistory(ctx, site, from);
      after = io();
      off();
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

const dir = mkdtempSync(join(tmpdir(), 'sitegw-disk-bench-'));
try {
  const g = await gateway(join(dir, 'gw'));
  const b = baseline(g.dbFile, dir);
  const perDay = (x: number) => x / days;
  console.log(
    `${devices === undefined ? 'ten-device site' : `${g.devices}-device site (bench/scale.ts layout)`}, ${days} simulated day(s), poll 10 s, ${b.rows} buckets (${Math.round(b.rows / days / 96)} streams x 96 a day)`,
  );
  console.log('');
  console.log('| SD-card writes per simulated day | MB/day | ratio to bare insert loop |');
  console.log('|---|---:|---:|');
  console.log(
    `| baseline: bare better-sqlite3 inserts of the same rows, one transaction per 15 min | ${mb(perDay(b.wchar))} | 1.00x |`,
  );
  console.log(
    `| gateway: database + WAL (write syscalls to the data directory) | ${mb(perDay(g.wchar))} | ${(g.wchar / b.wchar).toFixed(2)}x |`,
  );
  console.log(
    `| gateway: pages dirtied (write_bytes, merged by the page cache) | ${mb(perDay(g.writeBytes))} | ${(g.writeBytes / b.wchar).toFixed(2)}x |`,
  );
  console.log(
    `| not counted above: the energy keeps' write() calls into /dev/shm (memory, not the card) | ${mb(perDay(g.outside))} | |`,
  );
  if (g.settled !== undefined)
    console.log(
      `| gateway: a settled day, the average of days 2 to ${days} (write syscalls) | ${mb(g.settled)} | ${(g.settled / perDay(b.wchar)).toFixed(2)}x |`,
    );
  if (g.lastDay !== undefined)
    console.log(`| gateway: the last of the ${days} days alone (write syscalls) | ${mb(g.lastDay)} | |`);
  console.log(
    `| database file after the run (all tables, schema included) | ${mb(g.dbBytes / days)} stored per day | |`,
  );
  console.log('');
  // a day's cost grows until every stream's buckets have leaf pages of their own: the last day says what a site pays
  const judged = g.settled ?? g.lastDay ?? perDay(g.wchar);
  // issue 46: 2 MB a day for the ten-device home site, 20 MB for 200 devices (0.1 MB a device)
  const target = Math.max(2e6, g.devices * 0.1e6);
  console.log(
    `target: <= ${mb(target)} MB/day (${g.settled !== undefined ? 'a settled day' : g.lastDay !== undefined ? 'the last day' : 'the average day; --days 3 or more for a settled one'}) -> ${judged <= target ? 'met' : 'MISSED'}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
