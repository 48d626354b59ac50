/**
 * The optimiser's plan in the modes the device's control gives (plan.ts slotBodies): Huawei and
 * Victron give no hold (docs/control.md "Vendor control maps"), so a hold slot must reach control
 * as self-consumption, not be refused (SLOT_MODE_UNSUPPORTED) and leave the battery unplanned.
 */
import { describe, expect, it } from 'vitest';
import { SLOT_MODES } from '../../src/control/plan-body.js';
import { optimise, slotBodies } from '../../src/optimiser/plan.js';
import { dailyCase } from './cases.js';

const NO_HOLD = ['charge', 'discharge', 'self-consumption'] as const;

describe('the plan in the device’s modes', () => {
  // a spring day of day-ahead prices on the simulator's site: the optimum charges, exports,
  // holds the battery for the evening peak, and leaves it to self-consumption in other slots
  const plan = optimise(dailyCase(106, 2024, 2));
  const modes = new Set(plan.slots.map((s) => s.mode));

  it('the case has every mode to map', () => {
    expect([...modes].sort()).toEqual(['charge', 'discharge', 'hold', 'self-consumption']);
  });

  it('a device with all four modes gets the plan as it is', () => {
    const bodies = slotBodies(plan.slots, SLOT_MODES);
    expect(bodies.map((b) => b.mode)).toEqual(plan.slots.map((s) => s.mode));
    bodies.forEach((b, t) => {
      const s = plan.slots[t]!;
      expect(b.interval).toBe(s.interval);
      if (s.mode === 'charge' || s.mode === 'discharge') expect(b.powerW).toBe(s.powerW);
      else expect(b).not.toHaveProperty('powerW');
    });
  });

  it('a device without hold gets self-consumption for each hold, and every other slot unchanged', () => {
    const bodies = slotBodies(plan.slots, NO_HOLD);
    expect(bodies.some((b) => b.mode === 'hold')).toBe(false);
    bodies.forEach((b, t) => {
      const s = plan.slots[t]!;
      if (s.mode === 'hold') expect(b).toEqual({ interval: s.interval, mode: 'self-consumption' });
      else expect(b).toEqual(slotBodies([s], SLOT_MODES)[0]);
    });
  });

  it('any mode the device lacks becomes self-consumption, never a mode it lacks', () => {
    const bodies = slotBodies(plan.slots, ['discharge', 'self-consumption']);
    expect(new Set(bodies.map((b) => b.mode))).toEqual(new Set(['discharge', 'self-consumption']));
  });
});
