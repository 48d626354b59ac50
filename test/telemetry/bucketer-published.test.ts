/**
 * What live views (/metrics, Home Assistant) are given of the energy counts (docs/design.md "Field
 * faults: what the numbers survive"): the counts as last saved, durably, so a kill right after a
 * live view showed a count takes nothing back; after a start, nothing until the stream's first
 * reading, then never less than what was shown before the kill. The counts move at each close; the
 * one save between closes is the first a live view causes after a start.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamDef } from '../../src/core/streams.js';
import { openDatabase } from '../../src/store/db.js';
import { BUCKET_MS } from '../../src/telemetry/align.js';
import { Bucketer } from '../../src/telemetry/bucketer.js';

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

/** a database file and an energy keep in a folder of their own, removed after the test */
function files(): { file: string; keep: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-published-'));
  dirs.push(dir);
  return { file: join(dir, 'sitegw.db'), keep: join(dir, 'energy.json') };
}

function gateway(file: string, liveStateFile?: string) {
  const db = openDatabase(file);
  const b = new Bucketer({ db, streams: [battery, meter], pollPeriodMs: MIN, liveStateFile, keepRealMs: 0 });
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
    const { file, keep } = files();
    const before = gateway(file, keep);
    before.poll(0);
    before.poll(1);
    const first = await before.shown();
    expect(first).toEqual([20, 1_000_010]);
    // until the close the count shown stays: what is shown is on the disk
    for (let m = 2; m <= 14; m++) before.poll(m);
    expect(await before.shown()).toEqual(first);
    before.poll(15);
    before.b.closeUntil(T0 + BUCKET_MS);
    const last = (await before.shown()) as number[];
    expect(last[0]).toBeCloseTo(300, 6);
    expect(last[1]).toBe(1_000_150);
    for (let m = 16; m <= 20; m++) before.poll(m);
    expect(await before.shown()).toEqual(last);
    // killed: no stop; the database is left as the close wrote it, the memory keep holds minute 20
    before.db.close();

    const after = gateway(file, keep);
    expect(await after.shown()).toEqual([null, null]);
    after.poll(21);
    const next = (await after.shown()) as number[];
    // the keep's counts (minute 20 and on), saved before they are shown
    expect(next[0]).toBeGreaterThan(last[0]!);
    expect(next[1]).toBeGreaterThan(last[1]!);
    expect(after.b.stats().energySaves).toBe(1);
    after.db.close();

    // a power cut after that: the keep is gone, the floor the first ask saved is not
    rmSync(keep);
    const third = gateway(file, keep);
    third.poll(22);
    const again = (await third.shown()) as number[];
    expect(again[0]).toBeGreaterThanOrEqual(next[0]!);
    expect(again[1]).toBeGreaterThanOrEqual(next[1]!);
    third.db.close();
  });

  it('saves once after a start when a live view asks, then only at the closes, and not at all while none asks', async () => {
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
    // the first ask saves at once; then the counts shown move with the closes, which save them anyway
    expect(b.stats().energySaves).toBe(1);
    const shown = b.lifetime(battery.id)!.energyIn!;
    b.closeUntil(T0 + 120 * MIN);
    expect(b.lifetime(battery.id)!.energyIn!).toBeGreaterThan(shown);
    expect(b.stats().energySaves).toBe(1);
    db.close();
  });

  it('the save after a start writes a few pages whatever the number of streams (272: 200 devices)', async () => {
    const { file, keep } = files();
    const streams = Array.from({ length: 272 }, (_, i) => stream(`d${i}__s`, `d${i}`, 'meter'));
    const life = () => {
      const db = openDatabase(file);
      const b = new Bucketer({ db, streams, pollPeriodMs: MIN, liveStateFile: keep, keepRealMs: 0 });
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
      return { db, b, poll };
    };
    const first = life();
    for (let m = 0; m <= 15; m++) first.poll(m);
    first.b.closeUntil(T0 + BUCKET_MS);
    for (let m = 16; m <= 22; m++) first.poll(m);
    // killed: the memory keep holds minute 22, the database the close at 15
    first.db.close();

    const second = life();
    second.poll(23);
    const wal = () => statSync(`${file}-wal`).size;
    const before = wal();
    second.b.lifetime(streams[0]!.id);
    await second.b.energySynced();
    expect(second.b.stats().energySaves).toBe(1);
    // every stream's counts moved: each is saved. A WAL frame is a 4 KiB page and its 24-byte header;
    // the whole energy state of 272 streams is 9 pages or more (a new life's first write also puts
    // the WAL's 32-byte header first)
    const pages = Math.floor((wal() - before) / (4096 + 24));
    expect(pages).toBeGreaterThan(0);
    expect(pages).toBeLessThanOrEqual(4);
    // what was shown is what a start continues from, after a power cut (no stop, no keep file)
    const shown = streams.map((s) => second.b.lifetime(s.id)!.energyIn);
    expect(shown[0]).toBe(2_000_000 + 9 * 23);
    second.db.close();
    rmSync(keep);
    const third = life();
    for (const [i, s] of streams.entries())
      third.b.ingest({ streamId: s.id, ts: T0 + 30 * MIN, values: { power_W: 500 + i } });
    await third.b.energySynced();
    for (const [i, s] of streams.entries()) expect(third.b.lifetime(s.id)!.energyIn).toBeGreaterThanOrEqual(shown[i]!);
    third.db.close();
  });

  it('a start after a power cut continues from the save after the last start without counting the power held before it again', async () => {
    const { file, keep } = files();
    const life = () => {
      const db = openDatabase(file);
      const b = new Bucketer({ db, streams: [battery], pollPeriodMs: MIN, liveStateFile: keep, keepRealMs: 0 });
      b.start();
      const poll = (m: number, w: number) =>
        b.ingest({ streamId: battery.id, ts: T0 + m * MIN, values: { power_W: w } });
      const shown = async () => {
        b.lifetime(battery.id);
        await b.energySynced();
        return b.lifetime(battery.id)!.energyIn!;
      };
      return { db, b, poll, shown };
    };
    // 1200 W up to the close (300 Wh), then 600 W: 380 Wh at minute 22, kept in memory; killed
    const first = life();
    for (let m = 0; m <= 15; m++) first.poll(m, 1200);
    first.b.closeUntil(T0 + BUCKET_MS);
    for (let m = 16; m <= 22; m++) first.poll(m, 600);
    first.db.close();
    // the next life starts from the keep, and its first live view saves 390 Wh (minute 23) as a floor
    const second = life();
    second.poll(23, 600);
    expect(await second.shown()).toBe(390);
    second.db.close();

    // a power cut: the keep is gone; the database has the close's state (1200 W held at minute 15) and the floor
    rmSync(keep);
    const third = life();
    third.poll(30, 600);
    third.poll(31, 600);
    // 390 + 10 (minute 30 to 31). The 1200 W held at the close, counted again from minute 15 to 18,
    // would add 60 Wh
    const wh = await third.shown();
    expect(wh).toBeGreaterThanOrEqual(400);
    expect(wh).toBeLessThan(450);
    third.db.close();
  });
});
