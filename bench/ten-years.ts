/**
 * Ten years on an SD card (issue 32): a generated database of 100 streams × ten years of PT15M
 * buckets (35 million rows) against the same streams over one year, in the same run:
 *  - the database's size, per year;
 *  - a day's PT15M query (96 entries, read and written as the route's answer, telemetryJson: the
 *    fresh path, no answer kept) and a year's P1D query, on both, each the median of many;
 *  - a bucket close (100 streams' buckets in one transaction, as the bucketer writes them) at the
 *    end of each and on an empty database;
 *  - retention (site.yaml retention.fifteenMinuteYears, src/telemetry/retention.ts): the one-year
 *    database rolled into hour rows in its bounded steps, its time and size afterwards, and the
 *    year's P1D query over the hour rows; from those the SD-card budget per year with the setting.
 * The streams are a commercial site's mix: 40 inverters (power, AC, DC, energy in/out, state),
 * 30 battery blocks (power, soc, soh, energy in/out), 30 meters (power, energy in/out); values
 * with two decimals, as the bucketer rounds them, so SQLite stores them as it would.
 *
 *   node --import tsx bench/ten-years.ts [--years 10] [--streams 100] [--keep DIR]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { ChannelId, DeviceKind } from '../src/core/channels.js';
import { ManualClock } from '../src/core/clock.js';
import { type BucketRow, insertBuckets } from '../src/store/buckets.js';
import { type Database, openDatabase } from '../src/store/db.js';
import { streamKey } from '../src/store/streams.js';
import { type TelemetryQuery, telemetryJson } from '../src/telemetry/query.js';
import { Retention } from '../src/telemetry/retention.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    years: { type: 'string', default: '10' },
    streams: { type: 'string', default: '100' },
    keep: { type: 'string' },
  },
});
const YEARS = Number(values.years);
const STREAMS = Number(values.streams);
const DAY = 86_400_000;
const Q = 900_000;
// the last bucket ends at END; a "year" is 365.25 days of buckets
const END = Date.parse('2036-01-01T00:00:00Z');
const YEAR = Math.round(365.25 * 96) * Q;

interface Kind {
  kind: DeviceKind;
  channels: ChannelId[];
}
const INVERTER: Kind = {
  kind: 'inverter',
  channels: ['power_W', 'power_AC_W', 'power_DC_W', 'energy_Wh_increment', 'energy_Wh_decrement', 'state'],
};
const BATTERY: Kind = {
  kind: 'battery_pack',
  channels: ['power_W', 'soc', 'soh', 'energy_Wh_increment', 'energy_Wh_decrement'],
};
const METER: Kind = { kind: 'meter', channels: ['power_W', 'energy_Wh_increment', 'energy_Wh_decrement'] };
const kindOf = (i: number): Kind => (i < STREAMS * 0.4 ? INVERTER : i < STREAMS * 0.7 ? BATTERY : METER);
const r2 = (x: number) => Math.round(x * 100) / 100;

function row(stream: number, i: number, t: number, energy: number[]): BucketRow {
  const k = kindOf(i);
  const tod = ((t % DAY) / DAY) * 2 * Math.PI;
  const p = r2(3000 * Math.sin(tod + i) + ((t / Q + i * 7) % 13) * 17.31);
  energy[2 * i] = r2(energy[2 * i]! + Math.max(0, p) / 4);
  energy[2 * i + 1] = r2(energy[2 * i + 1]! - Math.max(0, -p) / 4);
  return {
    stream,
    startS: t / 1000,
    coveredMs: Q,
    power_W: p,
    power_AC_W: k === INVERTER ? r2(p * 0.97) : null,
    power_DC_W: k === INVERTER ? r2(p * 1.02) : null,
    soc: k === BATTERY ? r2(50 + 40 * Math.sin(tod + i)) : null,
    soh: k === BATTERY ? 97.5 : null,
    energyIn: energy[2 * i]!,
    energyOut: energy[2 * i + 1]!,
    state: k === INVERTER ? (p > 0 ? 'ok' : 'standby') : null,
  };
}

/**
 * The rows are made by SQLite itself (a recursive CTE per month), in the order the bucketer
 * writes them: every stream's bucket of a quarter hour, then the next quarter hour. That order
 * decides how full the B-tree's pages are, so the size is the size a site's closes make; a JS
 * loop through insertBucket (the first version) made the same rows 20 times slower. Values as
 * row() makes them: power with two decimals, counters rising, per kind its channels.
 */
function generate(file: string, from: number, to: number): { db: Database; keys: number[] } {
  const db = openDatabase(file);
  // generating only: the site's own closes run with the store's pragmas (the measurements below)
  db.pragma('synchronous = OFF');
  const keys = Array.from({ length: STREAMS }, (_, i) => streamKey(db, `s${i}`));
  const inv = Math.floor(STREAMS * 0.4);
  const bat = Math.floor(STREAMS * 0.7);
  const fill = db.prepare(`
    WITH RECURSIVE q(t) AS (SELECT ? UNION ALL SELECT t + 900 FROM q WHERE t + 900 < ?),
    s(i, id) AS (SELECT CAST(substr(key, 2) AS INTEGER), id FROM streams),
    v AS (SELECT t, i, id, round(((t / 900 * 7919 + i * 104729) % 600000) / 100.0 - 3000, 2) AS p FROM q, s)
    INSERT INTO buckets (stream, start_s, covered_ms, power_W, power_AC_W, power_DC_W, soc, soh, energy_in, energy_out, state)
    SELECT id, t, 900000, p,
      CASE WHEN i < ${inv} THEN round(p * 0.97, 2) END,
      CASE WHEN i < ${inv} THEN round(p * 1.02, 2) END,
      CASE WHEN i >= ${inv} AND i < ${bat} THEN round(10 + ((t / 900 + i) % 8000) / 100.0, 2) END,
      CASE WHEN i >= ${inv} AND i < ${bat} THEN 97.5 END,
      round(1000000 + (t - ${from / 1000}) / 900 * 187.31 + i, 2),
      round(-1000000 - (t - ${from / 1000}) / 900 * 93.17 - i, 2),
      CASE WHEN i < ${inv} THEN CASE WHEN p > 0 THEN 'ok' ELSE 'standby' END END
    FROM v ORDER BY t, i`);
  const MONTH = 30 * DAY;
  for (let m = from; m < to; m += MONTH) {
    const until = Math.min(m + MONTH, to);
    db.transaction(() => fill.run(m / 1000, until / 1000))();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.pragma('synchronous = NORMAL');
  return { db, keys };
}

const size = (f: string) => statSync(f).size + (statSync(`${f}-wal`, { throwIfNoEntry: false })?.size ?? 0);

function query(i: number, start: number, end: number, resolution: TelemetryQuery['resolution']): TelemetryQuery {
  const k = kindOf(i);
  return {
    streamId: `s${i}`,
    deviceId: `s${i}`,
    deviceKind: k.kind,
    start,
    end,
    resolution,
    include: new Set(['default', 'energy']),
    channels: k.channels,
    timezone: 'Europe/Berlin',
    socScale: 'percent',
  };
}

/** median µs of `n` runs of fn(k) */
function time(n: number, fn: (k: number) => unknown): number {
  const xs: number[] = [];
  for (let k = 0; k < n; k++) {
    const t0 = process.hrtime.bigint();
    fn(k);
    xs.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return median(xs);
}

interface Figures {
  dayUs: number;
  yearP1dUs: number;
  closeUs: number;
}

function measure(db: Database, keys: number[], closeAt: number): Figures {
  // the same days and streams on every database: the last year's, ending at END
  const day = (k: number) => END - (1 + ((k * 37) % 360)) * DAY;
  const dayUs = time(200, (k) => telemetryJson(db, query(k % STREAMS, day(k), day(k) + DAY, 'PT15M')));
  const yearP1dUs = time(21, (k) => telemetryJson(db, query((k * 13) % STREAMS, END - 365 * DAY, END, 'P1D')));
  const energy = new Array<number>(2 * STREAMS).fill(2_000_000);
  const closeUs = time(40, (k) =>
    insertBuckets(
      db,
      keys.map((key, i) => row(key, i, closeAt + k * Q, energy)),
    ),
  );
  return { dayUs, yearP1dUs, closeUs };
}

const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'sitegw-ten-years-'));
const mb = (b: number) => (b / 1e6).toFixed(1);
const ms = (us: number) => (us / 1000).toFixed(2);
try {
  const t0 = Date.now();
  const one = generate(join(dir, 'one.db'), END - YEAR, END);
  const oneSize = size(join(dir, 'one.db'));
  const tGen1 = (Date.now() - t0) / 1000;
  const t1 = Date.now();
  const ten = generate(join(dir, 'ten.db'), END - YEARS * YEAR, END);
  const tenSize = size(join(dir, 'ten.db'));
  const tGen10 = (Date.now() - t1) / 1000;
  console.error(`generated: one year in ${tGen1.toFixed(0)} s, ${YEARS} years in ${tGen10.toFixed(0)} s`);
  const empty = openDatabase(join(dir, 'empty.db'));
  const emptyKeys = Array.from({ length: STREAMS }, (_, i) => streamKey(empty, `s${i}`));

  // interleaved: one, ten, one, ten, … so the machine's load falls on both alike
  const f1: Figures[] = [];
  const f10: Figures[] = [];
  const f0: number[] = [];
  for (let r = 0; r < 3; r++) {
    f1.push(measure(one.db, one.keys, END + r * 40 * Q));
    f10.push(measure(ten.db, ten.keys, END + r * 40 * Q));
    const energy = new Array<number>(2 * STREAMS).fill(0);
    f0.push(
      time(40, (k) =>
        insertBuckets(
          empty,
          emptyKeys.map((key, i) => row(key, i, END + (r * 40 + k) * Q, energy)),
        ),
      ),
    );
  }
  const pick = (fs: Figures[], k: keyof Figures) => fs.map((f) => f[k]);
  const span = (xs: number[]) => `${ms(Math.min(...xs))}–${ms(Math.max(...xs))}`;

  // retention on the one-year database: everything before its end rolled into hours
  const rolledFile = join(dir, 'one.db');
  const t2 = Date.now();
  const retention = new Retention({
    db: one.db,
    clock: new ManualClock(END + 100 * 365.25 * DAY),
    keepYears: 100 - 1,
    closedUntil: () => END + 200 * Q,
    uplinkTopic: 'telemetry',
    log: pino({ level: 'silent' }),
    pauseMs: 0,
  });
  // keepYears 99 from a clock 100 years on: the cutoff is a year after END, so all is rolled
  await retention.pass();
  const tRoll = (Date.now() - t2) / 1000;
  one.db.exec('VACUUM');
  one.db.pragma('wal_checkpoint(TRUNCATE)');
  const rolledSize = size(rolledFile);
  const rolledP1d = time(21, (k) => telemetryJson(one.db, query((k * 13) % STREAMS, END - 365 * DAY, END, 'P1D')));
  const perYear15 = oneSize;
  const perYearHour = rolledSize;

  console.log(
    `${STREAMS} streams (40 % inverters, 30 % battery blocks, 30 % meters), PT15M buckets; one year = ${(YEAR / Q / 1e3).toFixed(1)}k buckets a stream; medians (range over 3 interleaved passes)`,
  );
  console.log('');
  console.log(`| ten years on an SD card, ${STREAMS} streams | one year (baseline) | ${YEARS} years | ratio |`);
  console.log('|---|---:|---:|---:|');
  console.log(
    `| database size | ${mb(oneSize)} MB | ${mb(tenSize)} MB (${mb(tenSize / YEARS)} MB a year) | ${(tenSize / oneSize).toFixed(2)}× |`,
  );
  const row3 = (label: string, k: keyof Figures) => {
    const a = median(pick(f1, k));
    const b = median(pick(f10, k));
    console.log(
      `| ${label} | ${ms(a)} ms (${span(pick(f1, k))}) | ${ms(b)} ms (${span(pick(f10, k))}) | ${(b / a).toFixed(2)}× (target ≤ 2) |`,
    );
  };
  row3("a day's PT15M query (96 entries, read and written as the route's JSON)", 'dayUs');
  row3("a year's P1D query (365 entries from 35k buckets)", 'yearP1dUs');
  row3(`a bucket close at the end (${STREAMS} buckets, one transaction)`, 'closeUs');
  console.log(`| a bucket close on an empty database (the start) | ${ms(median(f0))} ms (${span(f0)}) | | |`);
  console.log('');
  console.log('| retention (retention.fifteenMinuteYears) | figure |');
  console.log('|---|---:|');
  console.log(`| one year of ${STREAMS} streams as PT15M buckets | ${mb(perYear15)} MB |`);
  console.log(
    `| the same year rolled into hour rows (after VACUUM) | ${mb(perYearHour)} MB (${((perYearHour / perYear15) * 100).toFixed(0)} %) |`,
  );
  console.log(`| time to roll the year up (bounded steps, no pause) | ${tRoll.toFixed(0)} s |`);
  console.log(`| a year's P1D query over the hour rows | ${ms(rolledP1d)} ms |`);
  for (const keep of [1, 2, 5].filter((k) => k < YEARS)) {
    console.log(
      `| ${YEARS} years with fifteenMinuteYears: ${keep} | ${mb(keep * perYear15 + (YEARS - keep) * perYearHour)} MB (then ${mb(perYearHour)} MB a year) |`,
    );
  }
  console.log(`| ${YEARS} years without it | ${mb(tenSize)} MB (${mb(tenSize / YEARS)} MB a year) |`);
  one.db.close();
  ten.db.close();
  empty.close();
} finally {
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
}
