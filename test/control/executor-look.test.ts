import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { type ControlBus, StorageExecutor } from '../../src/control/executor.js';
import type { StorageCommand, StorageControl } from '../../src/core/storage-control.js';
import { demoControl } from '../support/demo-control.js';

const TICK = 1000;

/** An executor whose device offers `offer()` as its storage control, stepped every tick for `seconds`. */
function rig(offer: () => StorageControl | undefined) {
  const { config, db, clock } = demoControl();
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
  const looks: number[] = [];
  const applied: StorageCommand[] = [];
  // nothing reaches the bus but through a control's apply, which the test's control does not read
  const bus = new Proxy({}, { get: () => () => Promise.reject(new Error('the bus is not used here')) }) as ControlBus;
  const exec = new StorageExecutor({
    deviceId: 'battery',
    db,
    clock,
    log,
    env: config.control,
    bus,
    control: async () => {
      looks.push(clock.mono());
      return offer();
    },
    counted: () => undefined,
    tickMs: TICK,
    reserveSoc: () => 10,
    gridMeter: true,
  });
  const control: StorageControl = {
    life: { seconds: 60 } as StorageControl['life'],
    apply: async (_bus, command) => {
      applied.push(command);
      return [];
    },
  };
  const run = async (seconds: number) => {
    for (let s = 0; s < seconds; s++) {
      clock.advance(TICK);
      await exec.wake();
    }
  };
  return { exec, clock, looks, warnings, applied, control, run };
}

describe('the storage executor looking for its control', () => {
  it('after a look that finds the device offering none, looks again a tick later, doubling to five minutes; warns at the 1st, 2nd, 4th, 8th look', async () => {
    const r = rig(() => undefined);
    await r.exec.wake();
    await r.run(1200);
    const gaps = r.looks.slice(1).map((t, i) => (t - r.looks[i]!) / 1000);
    expect(gaps).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
    // before: two looks (the command's and the fallback's) and a warning at every tick
    expect(r.warnings).toHaveLength(4);
    expect(r.warnings[0]).toMatch(/offers no storage control \(1 looks in a row\).*looking again in 1 s/);
    expect(r.warnings[3]).toMatch(/\(8 looks in a row\).*looking again in 128 s/);
    await r.exec.stop(false);
  });

  it('a look that fails (the device did not answer) is made again at the next step; found, the command goes out and no look follows', async () => {
    let found: StorageControl | undefined;
    let failing = true;
    const r = rig(() => {
      if (failing) throw new Error('unit 1 did not answer');
      return found;
    });
    found = r.control;
    await r.exec.wake();
    await r.run(10);
    // every step: the command's look and the fallback's; the device may be back any moment
    const failed = r.looks.length;
    expect(failed).toBeGreaterThanOrEqual(2 * 11);
    expect(r.warnings[0]).toMatch(/storage command failed/);
    expect(r.applied).toEqual([]);
    failing = false;
    await r.run(1); // the next step finds it
    expect(r.looks.length).toBe(failed + 1);
    expect(r.applied).toEqual([{ mode: 'self-consumption' }]);
    await r.run(600);
    expect(r.looks.length).toBe(failed + 1);
    expect(r.exec.storageControl).toBe(r.control);
    await r.exec.stop(false);
  });

  it('a stop that releases the battery looks once more, whatever the wait', async () => {
    let found: StorageControl | undefined;
    const r = rig(() => found);
    await r.exec.wake();
    await r.run(5); // looks at 0, 1 and 3 s; the next waits until 7 s
    expect(r.looks.length).toBe(3);
    found = r.control;
    await r.exec.stop(true);
    expect(r.looks.length).toBe(4);
    expect(r.applied).toEqual([{ mode: 'self-consumption' }]);
  });
});
