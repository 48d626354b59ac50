/**
 * A solve that crosses a quarter hour: the optimiser's plan starts at the quarter hour the loop
 * read the clock in, and by the time control stores it that slot has ended. Before, the whole
 * plan was refused (SLOT_IN_PAST), the loop deleted its own plan, and the battery ran in
 * self-consumption until the next quarter hour (CI's rehearsal: test/e2e/optimiser-vendors found
 * no plan, at 120× on a loaded machine). Now the ended slot is left out and the rest is stored.
 * The loop's clock lags control's by the solve's time; both are the same manual clock underneath.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { OPTIMISER_SOURCE } from '../../src/control/control.js';
import type { Clock } from '../../src/core/clock.js';
import { streamIds } from '../../src/core/streams.js';
import { OptimiserLoop } from '../../src/optimiser/loop.js';
import { planOf, setMode } from '../../src/store/control.js';
import { demoControl } from '../support/demo-control.js';

const SOLVE_MS = 2000;

describe('the optimiser loop across a quarter hour', () => {
  it('stores its plan without the slot that ended during the solve', async () => {
    const log = pino({ level: 'silent' });
    const { config, site, db, clock, bus, control } = demoControl({
      batteryBlocks: 2,
      // control stores at 00:15:01; the loop read 00:14:59, in the quarter hour before
      start: Date.parse('2026-01-15T00:15:01Z'),
      log,
    });
    for (const b of site.byRole('battery')) site.learn(b.config.id, { capacityWh: 5000 });
    const before: Clock = {
      now: () => clock.now() - SOLVE_MS,
      mono: () => clock.mono() - SOLVE_MS,
      speed: clock.speed,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (t) => clock.clearTimeout(t),
      sleep: (ms) => clock.sleep(ms),
    };
    const optimiser = new OptimiserLoop({ config, site, db, clock: before, bus, log, control });
    setMode(db, 'inverter', 'optimise', 'test', clock.now());
    optimiser.start();
    bus.emit('reading', { streamId: streamIds.batteryAggregate('inverter'), ts: clock.now(), values: { soc: 50 } });
    await optimiser.settled();
    expect(optimiser.outcome('inverter')).toMatchObject({ result: 'planned' });
    const plan = planOf(db, 'inverter');
    expect(plan?.source).toBe(OPTIMISER_SOURCE);
    expect(new Date(plan!.slots[0]!.startMs).toISOString()).toBe('2026-01-15T00:15:00.000Z');
    optimiser.stop();
  });
});
