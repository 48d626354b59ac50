/**
 * The limits feature's lanes (src/limits/feature.ts): an inverter whose writes never come back
 * (a dead link whose timeout has not run out) holds up neither another inverter's limit nor the
 * fail-safe. Two inverters with their own buses; the capability is a recording one, the loop,
 * the sources and the event bus are the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { ActivePowerLimit, PowerLimitCommand } from '../../src/core/active-power-limit.js';
import type { EventBus } from '../../src/core/events.js';
import { streamIds } from '../../src/core/streams.js';
import { T0, twoInverters } from './two-inverters.js';

function limitOf(hangs: boolean, applied: PowerLimitCommand[]): ActivePowerLimit {
  return {
    revert: { kind: 'revert-unlimited', seconds: 60 },
    ratedW: async () => 5000,
    apply: (_bus, command) => {
      applied.push(command);
      return hangs ? new Promise(() => undefined) : Promise.resolve([]);
    },
  };
}

/** one poll's readings as the poller publishes them: each inverter's AC output, then the grid meter's power */
const inverterReadings = (bus: EventBus, ts: number, acW: number, ids = ['inv', 'inv2']) => {
  for (const id of ids) bus.emit('reading', { streamId: streamIds.inverter(id), ts, values: { power_AC_W: -acW } });
};
const meterReading = (bus: EventBus, ts: number, gridW: number) =>
  bus.emit('reading', { streamId: streamIds.gridMeter('gm'), ts, values: { power_W: gridW } });
/** the cap of a 1000 W house at exportW 0 (less the 0.5 % margin of 2 × 5000 W), shared by the two inverters */
const HALF_OF_950 = { kind: 'limit', watts: Math.floor((1000 - 0.005 * 10_000) / 2) };

/** exportW 0 and a first poll: the house draws 1000 W, each inverter gives 2000 W, and each is held at its half of 950 W */
async function heldAtHalf() {
  const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
  const { f, bus, clock } = twoInverters(['  exportW: 0'], (id) => limitOf(false, applied[id]!));
  await f.start();
  await new Promise((r) => setTimeout(r, 10));
  inverterReadings(bus, T0 + 1000, 2000);
  meterReading(bus, T0 + 1000, -3000);
  await new Promise((r) => setTimeout(r, 10));
  expect(applied.inv2).toEqual([HALF_OF_950]);
  return { f, bus, clock, applied };
}

describe('the limits feature', () => {
  it('a hung inverter holds up neither the other inverter nor the next steps', async () => {
    const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
    // the first inverter in the list is the one that hangs
    const { f, bus } = twoInverters(['  exportW: 0'], (id) => limitOf(id === 'inv', applied[id]!));
    await f.start();
    // the inverters' limits are looked for in the background at the start
    await new Promise((r) => setTimeout(r, 10));
    const poll = (ts: number, gridW: number, acW: number) => {
      inverterReadings(bus, ts, acW);
      meterReading(bus, ts, gridW);
    };
    // the house draws 1000 W, each inverter gives 2000 W: 3000 W exported
    poll(T0 + 1000, -3000, 2000);
    await new Promise((r) => setTimeout(r, 10));
    expect(applied.inv).toHaveLength(1);
    expect(applied.inv2).toEqual([HALF_OF_950]);
    // the house rises (two polls say so: controller.ts): the step writes the second inverter
    // again, the first is still on its way
    for (const ts of [T0 + 2000, T0 + 3000]) {
      poll(ts, 500, 475);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(applied.inv2!.length).toBe(2);
    expect(applied.inv).toHaveLength(1);
    await Promise.race([f.stop(), new Promise((r) => setTimeout(r, 50))]);
  });

  it('an own export limiter without a rating is written the export limit in force whole, and the fail-safe at a stop', async () => {
    const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
    // inv: its own export limiter (SolarEdge, Victron: no rating register); inv2: an output limit
    const { f, bus } = twoInverters(['  exportW: 700', '  failSafeW: 300'], (id) =>
      id === 'inv'
        ? {
            holds: 'export',
            revert: { kind: 'none' },
            ratedW: () => Promise.reject(new Error('LIMIT_RATING_UNKNOWN')),
            apply: async (_b, c) => {
              applied.inv!.push(c);
              return [];
            },
          }
        : limitOf(false, applied.inv2!),
    );
    await f.start();
    await new Promise((r) => setTimeout(r, 10));
    inverterReadings(bus, T0 + 1000, 2000);
    meterReading(bus, T0 + 1000, -3000);
    await new Promise((r) => setTimeout(r, 10));
    expect(applied.inv).toEqual([{ kind: 'limit', watts: 700 }]);
    // the output-limited inverter takes the whole cap: the other has no rating to share it by
    expect(applied.inv2).toEqual([{ kind: 'limit', watts: Math.floor(1000 + 700 - 0.005 * 5000) }]);
    await f.stop();
    expect(applied.inv!.at(-1)).toEqual({ kind: 'limit', watts: 300 });
    expect(applied.inv2!.at(-1)).toEqual({ kind: 'limit', watts: 300 });
  });

  it('says so when a generation limit is in force and an inverter limits only its export', async () => {
    const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
    const { f, bus } = twoInverters(['  generationW: 1000'], (id) =>
      id === 'inv' ? { ...limitOf(false, applied.inv!), holds: 'export' } : limitOf(false, applied.inv2!),
    );
    await f.start();
    await new Promise((r) => setTimeout(r, 10));
    inverterReadings(bus, T0 + 1000, 2000);
    meterReading(bus, T0 + 1000, -3000);
    await new Promise((r) => setTimeout(r, 10));
    // its own limiter gets no limit (there is no export limit to hold); the other takes its share
    expect(applied.inv).toEqual([]);
    expect(applied.inv2).toEqual([{ kind: 'limit', watts: 500 }]);
    expect(f.health().problems).toEqual([
      'a generation limit is in force and inv can limit only the export (their own limiter): their output is not held',
    ]);
    await f.stop();
  });

  it('an own export limiter delivering less than its share: the output-limited inverter takes the rest of the cap', async () => {
    const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
    const { f, bus } = twoInverters(['  exportW: 3000'], (id) =>
      id === 'inv' ? { ...limitOf(false, applied.inv!), holds: 'export' } : limitOf(false, applied.inv2!),
    );
    await f.start();
    await new Promise((r) => setTimeout(r, 10));
    // the house draws 1000 W; inv (its own limiter, a small array) gives 500 W, inv2 2000 W
    inverterReadings(bus, T0 + 1000, 500, ['inv']);
    inverterReadings(bus, T0 + 1000, 2000, ['inv2']);
    meterReading(bus, T0 + 1000, -1500);
    await new Promise((r) => setTimeout(r, 10));
    expect(applied.inv).toEqual([{ kind: 'limit', watts: 3000 }]);
    // the cap is 1000 + 3000 − 50 W; inv's 500 W are taken from it, not its rating's half
    expect(applied.inv2).toEqual([{ kind: 'limit', watts: 1000 + 3000 - 50 - 500 }]);
    await f.stop();
  });

  it('a step between the meter and the inverters of one poll acts on the last whole poll, not the new grid with the old output', async () => {
    const { f, bus, clock, applied } = await heldAtHalf();
    const held = HALF_OF_950;
    // the next poll: the meter is read (the limit has taken effect: 50 W imported), then the
    // loop's own timer runs a step before the inverters' readings of that poll arrive
    meterReading(bus, T0 + 2000, 50);
    clock.advance(1000);
    await new Promise((r) => setTimeout(r, 10));
    inverterReadings(bus, T0 + 2000, 475);
    await new Promise((r) => setTimeout(r, 10));
    // 50 W with the old 4000 W of output would be a house of 4050 W and the limit lifted to 2000 W each
    expect(applied.inv2).toEqual([held]);
    expect(applied.inv).toEqual([held]);
    await f.stop();
  });

  it('an inverter that stops answering is left out: the other holds the export with the meter, which sees both', async () => {
    const { f, bus, clock, applied } = await heldAtHalf();
    // inv stops answering at its half (475 W); the house of 1000 W stays
    for (let s = 2; s <= 9; s++) {
      clock.advance(1000);
      inverterReadings(bus, T0 + s * 1000, 475, ['inv2']);
      meterReading(bus, T0 + s * 1000, 50);
      await new Promise((r) => setTimeout(r, 10));
    }
    // inv2 takes what the meter leaves: 50 + its own 475 W, less the margin of its 5000 W; inv is not written meanwhile
    expect(applied.inv2!.at(-1)).toEqual({ kind: 'limit', watts: 50 + 475 - 25 });
    expect(applied.inv).toEqual([HALF_OF_950]);
    expect(f.health().problems).toContain(
      'a limit is in force and inv do not answer: left out of the loop, the others hold the export at the meter',
    );
    await Promise.race([f.stop(), new Promise((r) => setTimeout(r, 50))]);
  });

  it('an inverter whose readings never come does not keep the other from being held', async () => {
    const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
    // inv's limit answers, its readings never do (a profile whose telemetry block the device refuses)
    const { f, bus, clock } = twoInverters(['  exportW: 0'], (id) => limitOf(false, applied[id]!));
    await f.start();
    await new Promise((r) => setTimeout(r, 10));
    for (let s = 1; s <= 8; s++) {
      clock.advance(1000);
      inverterReadings(bus, T0 + s * 1000, 2000, ['inv2']);
      meterReading(bus, T0 + s * 1000, -3000);
      await new Promise((r) => setTimeout(r, 10));
    }
    // 3000 W exported with inv's output in it: inv2 may deliver -3000 + 2000 W, so nothing
    expect(applied.inv2).toEqual([{ kind: 'limit', watts: 0 }]);
    await Promise.race([f.stop(), new Promise((r) => setTimeout(r, 50))]);
  });

  it('an inverter that missed its first look is looked for again after a second, not after the longest wait', async () => {
    const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
    let looks = 0;
    const { f, bus, clock } = twoInverters(['  exportW: 0'], (id) => {
      const limit = limitOf(false, applied[id]!);
      // inv does not answer its first look (the gateway up before it, or a loaded box)
      if (id !== 'inv') return limit;
      return { ...limit, ratedW: async () => (looks++ === 0 ? Promise.reject(new Error('no answer')) : 5000) };
    });
    await f.start();
    await new Promise((r) => setTimeout(r, 10));
    const poll = (ts: number) => {
      inverterReadings(bus, ts, 2000);
      meterReading(bus, ts, -3000);
    };
    poll(T0 + 500);
    await new Promise((r) => setTimeout(r, 10));
    expect(looks).toBe(1);
    expect(applied.inv).toEqual([]);
    for (let s = 1; s <= 2; s++) {
      clock.advance(1000);
      await new Promise((r) => setTimeout(r, 10));
      poll(T0 + 500 + s * 1000);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(looks).toBe(2);
    expect(applied.inv).toEqual([HALF_OF_950]);
    await f.stop();
  });
});
