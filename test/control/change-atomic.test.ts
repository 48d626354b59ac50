/**
 * A control change that writes twice (a plan and the mode it switches to; a mode and the removal
 * of the optimiser's plan) is one transaction: a database that takes the first write and refuses
 * the second keeps neither. The refusal is a real SQLite trigger that aborts the second write, as a
 * disk filling between the two would.
 */
import { describe, expect, it } from 'vitest';
import { OPTIMISER_SOURCE } from '../../src/control/control.js';
import { modeOf, planOf } from '../../src/store/control.js';
import { demoControl } from '../support/demo-control.js';

const START = Date.parse('2026-01-15T00:05:00Z');
const SLOTS = [{ interval: '2026-01-15T00:00:00Z/2026-01-15T01:00:00Z', mode: 'charge' as const, powerW: 1000 }];

describe('a control change that writes twice', () => {
  it('a plan that switches self-consumption to plan: the mode refused keeps the plan out too', () => {
    const { site, db, control } = demoControl({ start: START });
    const inverter = site.devices.get('inverter')!;
    db.exec(`CREATE TRIGGER refuse_mode BEFORE INSERT ON control_mode BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    expect(() => control.putPlan(inverter, SLOTS, 'partner:p')).toThrow(/disk full/);
    expect(planOf(db, 'inverter')).toBeUndefined();
    expect(modeOf(db, 'inverter')).toBeUndefined();
  });

  it("leaving optimise: the optimiser's plan whose removal is refused keeps the mode too", () => {
    const { site, db, control } = demoControl({ start: START });
    const inverter = site.devices.get('inverter')!;
    control.putPlan(inverter, SLOTS, OPTIMISER_SOURCE);
    expect(modeOf(db, 'inverter')?.mode).toBe('plan');
    db.exec(`CREATE TRIGGER refuse_delete BEFORE DELETE ON control_plans BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    expect(() => control.setMode(inverter, 'backup', 'customer')).toThrow(/disk full/);
    expect(modeOf(db, 'inverter')?.mode).toBe('plan');
    expect(planOf(db, 'inverter')?.source).toBe(OPTIMISER_SOURCE);
  });
});

describe('removing a plan (issue 44 item 8)', () => {
  it('switches plan back to self-consumption, named after who removed it; backup stays', () => {
    const { site, db, control } = demoControl({ start: START });
    const inverter = site.devices.get('inverter')!;
    control.putPlan(inverter, SLOTS, 'partner:p');
    expect(modeOf(db, 'inverter')?.mode).toBe('plan');
    expect(control.deletePlan(inverter, undefined, 'partner:p')).toBe(true);
    expect(modeOf(db, 'inverter')).toMatchObject({ mode: 'self-consumption', changedBy: 'partner:p' });

    control.putPlan(inverter, SLOTS, 'customer');
    control.setMode(inverter, 'backup', 'customer');
    control.deletePlan(inverter);
    expect(modeOf(db, 'inverter')?.mode).toBe('backup');
  });

  it('a mode write the disk refuses keeps the plan too', () => {
    const { site, db, control } = demoControl({ start: START });
    const inverter = site.devices.get('inverter')!;
    control.putPlan(inverter, SLOTS, 'partner:p');
    db.exec(`CREATE TRIGGER refuse_mode BEFORE UPDATE ON control_mode BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    expect(() => control.deletePlan(inverter)).toThrow(/disk full/);
    expect(planOf(db, 'inverter')).toBeDefined();
  });
});
