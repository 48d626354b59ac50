/**
 * The optimiser's loop on a data disk that refuses writes (docs/design.md "Field faults: what the
 * numbers survive", disk row): the plan stored before runs on, the quarter-hour schedule goes on
 * and nothing is thrown from its timer (an uncaught exception stops the gateway); health says why,
 * and the next quarter hour after the disk takes writes again stores a fresh plan.
 * `query_only` makes every write fail with SQLITE_READONLY, a storage fault, on a real database.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { OPTIMISER_SOURCE } from '../../src/control/control.js';
import { streamIds } from '../../src/core/streams.js';
import { OptimiserLoop } from '../../src/optimiser/loop.js';
import { modeOf, planOf, setMode } from '../../src/store/control.js';
import { demoControl } from '../support/demo-control.js';

const Q = 15 * 60_000;

function loop() {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l).msg) });
  const { config, site, db, clock, bus, control } = demoControl({
    batteryBlocks: 2,
    start: Date.parse('2026-01-15T00:05:00Z'),
    log,
    configure: (c) => {
      c.tariff = {
        type: 'time-of-use',
        periods: [
          { from: '00:00', to: '02:00', importPrice: 0.05, exportPrice: 0 },
          { from: '02:00', to: '24:00', importPrice: 0.6, exportPrice: 0.3 },
        ],
      } as NonNullable<typeof c.tariff>;
    },
  });
  // what the blocks tell at their first poll (the demo's LFP blocks)
  for (const b of site.byRole('battery')) site.learn(b.config.id, { capacityWh: 5000 });
  const optimiser = new OptimiserLoop({ config, site, db, clock, bus, log, control });
  return { db, clock, bus, optimiser, lines, control, site };
}

describe('the optimiser loop on a disk that refuses writes', () => {
  it('keeps the plan stored before, keeps its schedule, logs once, and stores a fresh plan once writes work', async () => {
    const { db, clock, bus, optimiser, lines } = loop();
    setMode(db, 'inverter', 'optimise', 'test', clock.now());
    optimiser.start();
    bus.emit('reading', { streamId: streamIds.batteryAggregate('inverter'), ts: clock.now(), values: { soc: 50 } });
    await optimiser.settled();
    const first = planOf(db, 'inverter');
    expect(first?.source).toBe(OPTIMISER_SOURCE);
    expect(optimiser.outcome('inverter')?.result).toBe('planned');

    db.pragma('query_only = ON');
    // three quarter hours: each run's plan is refused; the old code threw out of the timer
    expect(() => clock.advance(3 * Q)).not.toThrow();
    await optimiser.settled();
    expect(optimiser.outcome('inverter')).toMatchObject({ result: 'unstored' });
    expect(optimiser.health().problems?.[0]).toMatch(/could not store its plan .* the plan stored before runs on/);
    expect(planOf(db, 'inverter')?.planId).toBe(first?.planId);
    expect(lines.filter((l) => /storing the optimiser plan failed/.test(l))).toHaveLength(1);

    db.pragma('query_only = OFF');
    clock.advance(Q);
    await optimiser.settled();
    expect(optimiser.outcome('inverter')?.result).toBe('planned');
    expect(optimiser.health()).toEqual({});
    const fresh = planOf(db, 'inverter');
    expect(fresh?.source).toBe(OPTIMISER_SOURCE);
    expect(fresh?.planId).not.toBe(first?.planId);
    optimiser.stop();
  });

  it("does not plan over an owner's release that waits for the disk", async () => {
    const { db, clock, bus, optimiser, control } = loop();
    setMode(db, 'inverter', 'optimise', 'test', clock.now());
    optimiser.start();
    bus.emit('reading', { streamId: streamIds.batteryAggregate('inverter'), ts: clock.now(), values: { soc: 50 } });
    await optimiser.settled();
    expect(optimiser.outcome('inverter')?.result).toBe('planned');
    db.pragma('query_only = ON');
    control.releaseAll('owner (status page)');
    db.pragma('query_only = OFF');
    // the next quarter hour: before, the loop read the stored mode (still optimise), stored the
    // release on its way and then its own plan with mode 'plan' over it
    clock.advance(Q);
    await optimiser.settled();
    expect(control.modeOf('inverter')).toBe('self-consumption');
    expect(modeOf(db, 'inverter')?.mode).not.toBe('plan');
    optimiser.stop();
  });
});
