/**
 * The owner's release on a data disk that refuses writes (control/waiting-release.ts): in force
 * at once in control's views, a later change refused as the disk refuses it, and once the disk
 * takes writes the release is stored first and the change after it. `query_only` makes every
 * write fail with SQLITE_READONLY, a storage fault, as a full disk's SQLITE_FULL is. The executor
 * side (the device leaves the charge at once) is test/e2e/disk-full.test.ts on a real full tmpfs.
 */
import { describe, expect, it } from 'vitest';
import { modeOf, planOf } from '../../src/store/control.js';
import { isStorageFault } from '../../src/store/storage-faults.js';
import { demoControl } from '../support/demo-control.js';

describe("the owner's release on a disk that refuses writes", () => {
  it('is in force at once, holds later changes back, and is stored first once writes work', () => {
    const { site, db, control } = demoControl({ start: Date.parse('2026-01-15T00:05:00Z') });
    const inverter = site.devices.get('inverter')!;
    control.putPlan(
      inverter,
      [{ interval: '2026-01-15T00:00:00Z/2026-01-15T01:00:00Z', mode: 'charge', powerW: 1000 }],
      'partner:p',
    );
    expect(control.modeOf('inverter')).toBe('plan');

    db.pragma('query_only = ON');
    // before: the button threw (503) and the plan went on
    expect(() => control.releaseAll('owner (status page)')).not.toThrow();
    expect(control.modeOf('inverter')).toBe('self-consumption');
    expect(control.plan(inverter)).toBeUndefined();
    expect(control.status().storages[0]).toMatchObject({ mode: 'self-consumption', slot: null });
    let refused: unknown;
    try {
      control.setMode(inverter, 'backup', 'customer');
    } catch (err) {
      refused = err;
    }
    expect(isStorageFault(refused)).toBe(true);

    db.pragma('query_only = OFF');
    control.setMode(inverter, 'backup', 'customer');
    // the release was stored first (the plan is gone), the change after it
    expect(planOf(db, 'inverter')).toBeUndefined();
    expect(modeOf(db, 'inverter')).toMatchObject({ mode: 'backup', changedBy: 'customer' });
  });
});
