/**
 * What live views (/metrics, Home Assistant) are given of the energy counts (docs/design.md "Field
 * faults: what the numbers survive"): the counts as last saved, durably, so a kill right after a
 * live view showed a count takes nothing back; after a start, nothing until the stream's first
 * reading, then never less than what was shown before the kill.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamDef } from '../../src/core/streams.js';
import { openDatabase } from '../../src/store/db.js';
import { BUCKET_MS } from '../../src/telemetry/align.js';
import { Bucketer, ENERGY_SAVE_AT_MS, ENERGY_SAVE_MS } from '../../src/telemetry/bucketer.js';

const MIN = 60_000;
const T0 = Date.parse('2026-11-23T00:00:00Z');
const stream = (id: string, deviceId: string, deviceKind: StreamDef['deviceKind']): StreamDef => ({
  id,
  deviceId,
  deviceKind,
  channels: ['power_W', 'energy_Wh_increment', 'energy_Wh_decrement'],
  energyFrom: 'power_W',
});
const battery = stream('inv1__bb_agg', 'inv1', 'battery_pack');
const meter = stream('gm1__GRID_METER_DERIVED', 'gm1', 'meter');

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** a database file in a folder of its own, removed after the test */
function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-published-'));
  dirs.push(dir);
  return join(dir, 'sitegw.db');
}

function gateway(file: string) {
  const db = openDatabase(file);
  const b = new Bucketer({ db, streams: [battery, meter], pollPeriodMs: MIN });
  b.start();
  let minute = 0;
  return {
    db,
    b,
    /** one poll at `m` minutes: the battery charges 1200 W, the meter imports 600 W and counts it */
    poll(m: number) {
      minute = m;
      b.ingest({ streamId: battery.id, ts: T0 + m * MIN, values: { power_W: 1200 } });
      b.ingest({
        streamId: meter.id,
        ts: T0 + m * MIN,
        values: { power_W: 600 },
        counters: { inWh: 1_000_000 + 10 * m },
      });
    },
    /** what a live view gets, once a save it caused is on the disk (the sync runs off the event loop) */
    shown: async () => {
      b.lifetime(battery.id);
      await b.energySynced();
      return [b.lifetime(battery.id)!.energyIn, b.lifetime(meter.id)!.energyIn];
    },
    get minute() {
      return minute;
    },
  };
}

describe('energy counts given to live views', () => {
  it('are the saved counts: a kill and a restart never show less, and nothing before the first reading', async () => {
    const file = dbFile();
    const before = gateway(file);
    before.poll(0);
    before.poll(1);
    const first = await before.shown();
    expect(first).toEqual([20, 1_000_010]);
    // within the save period the count shown stays: what is shown is on the disk
    before.poll(1.5);
    expect(await before.shown()).toEqual(first);
    for (let m = 2; m <= 9; m++) before.poll(m);
    const last = (await before.shown()) as number[];
    expect(last[0]).toBeCloseTo(180, 6);
    expect(last[1]).toBe(1_000_090);
    before.poll(9.5);
    // killed: no stop, no bucket close; the database is left as the last save wrote it
    before.db.close();

    const after = gateway(file);
    expect(await after.shown()).toEqual([null, null]);
    after.poll(10);
    const next = (await after.shown()) as number[];
    expect(next[0]).toBeGreaterThanOrEqual(last[0]!);
    expect(next[1]).toBeGreaterThanOrEqual(last[1]!);
    expect(after.b.stats().energySaves).toBeGreaterThan(0);
    after.db.close();
  });

  it('saves at most once per save period while live views ask, and not at all while none does', async () => {
    const db = openDatabase(':memory:');
    const b = new Bucketer({ db, streams: [battery], pollPeriodMs: MIN });
    b.start();
    for (let m = 0; m < 60; m++) b.ingest({ streamId: battery.id, ts: T0 + m * MIN, values: { power_W: 100 } });
    expect(b.stats().energySaves).toBe(0);
    for (let m = 60; m < 120; m++) {
      b.ingest({ streamId: battery.id, ts: T0 + m * MIN, values: { power_W: 100 } });
      b.lifetime(battery.id);
      await b.energySynced();
    }
    // the first ask saves at once, then one save half-way through each bucket (7.5, 22.5, 37.5 and
    // 52.5 minutes past the hour), never at a boundary, where the close saves
    expect(b.stats().energySaves).toBe(1 + 60 / (ENERGY_SAVE_MS / MIN));
    db.close();
  });

  it('a save between closes writes a few pages whatever the number of streams (272: 200 devices)', async () => {
    const file = dbFile();
    const db = openDatabase(file);
    const streams = Array.from({ length: 272 }, (_, i) => stream(`d${i}__s`, `d${i}`, 'meter'));
    const b = new Bucketer({ db, streams, pollPeriodMs: MIN });
    b.start();
    const poll = (m: number) => {
      for (const [i, s] of streams.entries())
        b.ingest({
          streamId: s.id,
          ts: T0 + m * MIN,
          values: { power_W: 500 + i },
          counters: { inWh: 2_000_000 + 1000 * i + 9 * m, outWh: 300_000 + i },
        });
    };
    for (let m = 0; m <= 15; m++) poll(m);
    b.closeUntil(T0 + BUCKET_MS);
    for (let m = 16; m * MIN <= ENERGY_SAVE_MS + ENERGY_SAVE_AT_MS; m++) poll(m);
    const wal = () => statSync(`${file}-wal`).size;
    const before = wal();
    b.lifetime(streams[0]!.id);
    await b.energySynced();
    expect(b.stats().energySaves).toBe(1);
    // every stream's counts moved: each is saved. A WAL frame is a 4 KiB page and its 24-byte header;
    // the whole energy state of 272 streams is 9 pages or more
    const pages = (wal() - before) / (4096 + 24);
    expect(pages).toBeGreaterThan(0);
    expect(pages).toBeLessThanOrEqual(4);
    // what was shown is what a start continues from, after a power cut (no stop, no keep file)
    const shown = streams.map((s) => b.lifetime(s.id)!.energyIn);
    db.close();
    const db2 = openDatabase(file);
    const after = new Bucketer({ db: db2, streams, pollPeriodMs: MIN });
    after.start();
    for (const [i, s] of streams.entries())
      after.ingest({ streamId: s.id, ts: T0 + 30 * MIN, values: { power_W: 500 + i } });
    await after.energySynced();
    for (const [i, s] of streams.entries()) expect(after.lifetime(s.id)!.energyIn).toBeGreaterThanOrEqual(shown[i]!);
    db2.close();
  });

  it('a start after a power cut continues from the last save between closes without counting the power held before it again', async () => {
    const file = dbFile();
    const db = openDatabase(file);
    const b = new Bucketer({ db, streams: [battery], pollPeriodMs: MIN });
    b.start();
    const poll = (x: Bucketer, m: number, w: number) =>
      x.ingest({ streamId: battery.id, ts: T0 + m * MIN, values: { power_W: w } });
    // 1200 W up to the close (300 Wh), then 600 W: 380 Wh at minute 22, shown by the save at 22.5
    for (let m = 0; m <= 15; m++) poll(b, m, 1200);
    b.closeUntil(T0 + BUCKET_MS);
    for (let m = 16; m <= 22; m++) poll(b, m, 600);
    b.lifetime(battery.id);
    await b.energySynced();
    expect(b.lifetime(battery.id)!.energyIn).toBe(380);
    db.close();

    const db2 = openDatabase(file);
    const after = new Bucketer({ db: db2, streams: [battery], pollPeriodMs: MIN });
    after.start();
    poll(after, 30, 600);
    poll(after, 31, 600);
    after.lifetime(battery.id);
    await after.energySynced();
    // 380 + 10 (minute 30 to 31); the whole state saved at 22.5 (before) also counted the 600 W of
    // minute 22 held 3 minutes more: 420. The 1200 W held at the close, counted again from minute
    // 15 to 18, would make it 450
    const wh = after.lifetime(battery.id)!.energyIn!;
    expect(wh).toBeGreaterThanOrEqual(390);
    expect(wh).toBeLessThanOrEqual(420);
    db2.close();
  });
});
