/**
 * An import limit sheds battery charging first and says so: control's decision (src/control/decide.ts)
 * clips a charge to the site's import limit in force (src/limits/feature.ts gridLimits) wherever it
 * is tighter than control.importLimitW, and a discharge to the site's export limit.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/control/decide.js';
import { SLOT_MS } from '../../src/control/plan-body.js';
import type { StoredSlot } from '../../src/store/control.js';
import { testEnvelope as env } from '../support/control-envelope.js';

const slot = (over: Partial<StoredSlot>): StoredSlot => ({
  startMs: 0,
  endMs: SLOT_MS,
  mode: 'charge',
  powerW: 3000,
  targetSoc: null,
  status: 'active',
  note: null,
  ...over,
});
// the house draws 1,200 W, the battery charges 3,000 W from the grid: 4,200 W imported
const charging = { socPct: 50, batteryW: 3000, gridW: 4200 };

describe('import limits shed battery charging first', () => {
  it('a schedule’s importW of 3000 W cuts the charge to what fits under it, and the slot says why', () => {
    const d = decide('plan', slot({}), charging, env, {}, false, undefined, false, {
      importW: { watts: 3000, label: 'limits.importW (schedule)' },
    });
    // 3000 − margin 150 − house 1200 = 1650 → 1650 in 50 W steps
    expect(d.command).toEqual({ mode: 'charge', powerW: 1650 });
    expect(d.limited).toBe('grid import kept under limits.importW (schedule) 3000 W');
  });

  it('an import limit below the house alone sheds the whole charge, never a discharge', () => {
    const d = decide('plan', slot({}), charging, env, {}, false, undefined, false, {
      importW: { watts: 1000, label: 'limits.importW (grid-operator)' },
    });
    expect(d.command).toEqual({ mode: 'charge', powerW: 0 });
    expect(d.limited).toMatch(/limits.importW \(grid-operator\) 1000 W/);
  });

  it('a site limit looser than control.importLimitW leaves control’s own', () => {
    const d = decide('plan', slot({}), { ...charging, gridW: 5800, batteryW: 3000 }, env, {}, false, undefined, false, {
      importW: { watts: 20_000, label: 'limits.importW (site.yaml)' },
    });
    expect(d.limited).toMatch(/control.importLimitW 5000 W/);
  });

  it('a discharge is clipped to the site’s export limit', () => {
    const d = decide(
      'plan',
      slot({ mode: 'discharge' }),
      { socPct: 80, batteryW: 0, gridW: -500 },
      env,
      {},
      false,
      undefined,
      false,
      { exportW: { watts: 0, label: 'limits.exportW (price)' } },
    );
    // export 0: the discharge may cover the house only (none here: PV exports 500 already)
    expect(d.command).toEqual({ mode: 'discharge', powerW: 0 });
    expect(d.limited).toMatch(/limits.exportW \(price\) 0 W/);
  });
});
