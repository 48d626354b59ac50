/**
 * SunSpec 704 and 123 as the active-power-limit capability (src/profiles/sunspec-limit.ts) against
 * the simulated inverter's registers in process (src/sim/power-limit.ts): the offsets agree with
 * the model tables (json/model_704.json, json/model_123.json), the output follows the limit after
 * the inverter's lag, 704 falls to its reversion values after its timer and 123 drops the limit.
 */
import { describe, expect, it } from 'vitest';
import type { RegisterReader } from '../../src/core/register-reader.js';
import type { RegisterWriter } from '../../src/core/storage-control.js';
import { MODEL_123 } from '../../src/modbus/sunspec/models-controls.js';
import { MODEL_704 } from '../../src/modbus/sunspec/models-der.js';
import { blockLength, offsets } from '../../src/modbus/sunspec/points.js';
import {
  discoverSunSpecLimit,
  M123,
  M123_LENGTH,
  M704,
  M704_LENGTH,
  SunSpec123Limit,
  SunSpec704Limit,
} from '../../src/profiles/sunspec-limit.js';
import { defaultSimConfig } from '../../src/sim/model.js';
import { SimSite } from '../../src/sim/site.js';

// a clear June noon in Berlin: the array gives well over 4 kW
const T0 = Date.parse('2026-06-21T11:00:00Z');

function rig(models: (123 | 704)[]) {
  const cfg = defaultSimConfig();
  cfg.weather.cloudiness = 0;
  cfg.inverter.limitModels = models;
  // the battery full: every watt the inverter gives goes to the house and the grid
  for (const b of cfg.battery.blocks) b.initialSocPct = b.socMaxPct;
  const s = new SimSite(cfg, T0);
  const bus: RegisterReader & RegisterWriter = {
    readHolding: async (u, a, n) => s.unit('inverter', u)!.holding[0]!.read(a, n),
    readInput: async () => {
      throw new Error('holding registers only');
    },
    writeHolding: async (u, a, values) => s.write('inverter', u, a, values),
  };
  return { s, bus, acW: () => s.snapshot().inverter.acW };
}

describe('the offsets', () => {
  it('are the model tables’ (704 L 65, 123 L 24)', () => {
    const o704 = offsets(MODEL_704.fixed);
    for (const [name, at] of Object.entries(M704)) expect([name, o704.get(name)?.offset]).toEqual([name, at]);
    expect(blockLength(MODEL_704.fixed)).toBe(M704_LENGTH);
    const o123 = offsets(MODEL_123.fixed);
    for (const [name, at] of Object.entries(M123)) expect([name, o123.get(name)?.offset]).toEqual([name, at]);
    expect(blockLength(MODEL_123.fixed)).toBe(M123_LENGTH);
  });
});

describe('SunSpec 704', () => {
  it('limits the output after the lag, keeps it with each write, and falls to the reversion values after its timer', async () => {
    const { s, bus, acW } = rig([704]);
    const limit = await discoverSunSpecLimit(bus, 1, 30);
    expect(limit).toBeInstanceOf(SunSpec704Limit);
    expect(limit!.revert).toEqual({ kind: 'revert-values', seconds: 30 });
    expect(await limit!.ratedW(bus)).toBe(6000);
    expect(acW()).toBeGreaterThan(3000);
    await (limit as SunSpec704Limit).setFailSafe(bus, 600);
    const writes = await limit!.apply(bus, { kind: 'limit', watts: 1500 });
    for (const w of writes) expect(w.readBack).toEqual(w.values);
    // 1500 W of 6000 W: 25.00 % in hundredths
    expect(writes[0]!.values).toEqual([2500]);
    s.update(T0 + 500);
    expect(acW()).toBeGreaterThan(3000);
    s.update(T0 + 2000);
    expect(acW()).toBeCloseTo(1500, 0);
    // a write every 20 s keeps the limit past the 30 s timer
    s.update(T0 + 20_000);
    await limit!.apply(bus, { kind: 'limit', watts: 2000 });
    s.update(T0 + 45_000);
    expect(acW()).toBeCloseTo(2000, 0);
    // no write for 30 s: the reversion value (the fail-safe) holds
    s.update(T0 + 52_500);
    expect(acW()).toBeCloseTo(600, 0);
    await limit!.apply(bus, { kind: 'none' });
    s.update(T0 + 55_000);
    expect(acW()).toBeGreaterThan(3000);
  });
});

describe('SunSpec 123', () => {
  it('limits the output after the lag and drops the limit after its timer (reverts to unlimited)', async () => {
    const { s, bus, acW } = rig([123]);
    const limit = await discoverSunSpecLimit(bus, 1, 30);
    expect(limit).toBeInstanceOf(SunSpec123Limit);
    expect(limit!.revert.kind).toBe('revert-unlimited');
    const writes = await limit!.apply(bus, { kind: 'limit', watts: 1500 });
    // 25.0 % in tenths, window 0, revert 30 s; then the enable
    expect(writes.map((w) => w.values)).toEqual([[250, 0, 30], [1]]);
    s.update(T0 + 2000);
    expect(acW()).toBeCloseTo(1500, 0);
    s.update(T0 + 29_000);
    expect(acW()).toBeCloseTo(1500, 0);
    s.update(T0 + 32_000);
    expect(acW()).toBeGreaterThan(3000);
  });

  it('704 is preferred where the device has both; a device with neither has none', async () => {
    expect(await discoverSunSpecLimit(rig([123, 704]).bus, 1, 30)).toBeInstanceOf(SunSpec704Limit);
    expect(await discoverSunSpecLimit(rig([]).bus, 1, 30)).toBeUndefined();
  });

  it('a limit is never written above what was asked', async () => {
    const { bus } = rig([123]);
    const limit = (await discoverSunSpecLimit(bus, 1, 30))!;
    // 1000 W of 6000: 16.666 %, written as 16.6 %
    const w = await limit.apply(bus, { kind: 'limit', watts: 1000 });
    expect(w[0]!.values[0]).toBe(166);
  });
});
