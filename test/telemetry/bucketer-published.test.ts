/**
 * What live views (/metrics, Home Assistant) are given of the energy counts (docs/design.md "Field
 * faults: what the numbers survive"): the counts as last saved, durably, so a kill right after a
 * live view showed a count takes nothing back; after a start, nothing until the stream's first
 * reading, then never less than what was shown before the kill.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamDef } from '../../src/core/streams.js';
import { openDatabase } from '../../src/store/db.js';
import { Bucketer, ENERGY_SAVE_MS } from '../../src/telemetry/bucketer.js';

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
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-published-'));
    dirs.push(dir);
    const file = join(dir, 'sitegw.db');
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
});
