/**
 * A cloud plan (docs/mqtt-contract.md "Plans") on a data disk that refuses writes: answered by
 * name (STORAGE_UNAVAILABLE) with the request's id, as HTTP's 503 is, never as an internal error
 * without one; the plan in force stays. `query_only` makes every write fail with SQLITE_READONLY,
 * a storage fault, on a real database.
 */
import { describe, expect, it } from 'vitest';
import { planOf } from '../../src/store/control.js';
import { answerPlanCommand } from '../../src/uplink/plan-command.js';
import { demoControl } from '../support/demo-control.js';

const START = Date.parse('2026-01-15T00:05:00Z');

const command = (body: unknown) => Buffer.from(JSON.stringify(body));
const slots = [{ interval: '2026-01-15T01:00:00Z/2026-01-15T02:00:00Z', mode: 'charge', powerW: 1000 }];

describe('a cloud plan on a disk that refuses writes', () => {
  it('is refused as STORAGE_UNAVAILABLE with its requestId, a delete too, and the stored plan stays', () => {
    const { db, control: c } = demoControl({ start: START });
    expect(answerPlanCommand(c, command({ requestId: 'r1', deviceId: 'inverter', slots }))).toMatchObject({
      requestId: 'r1',
      status: 'accepted',
    });
    const before = planOf(db, 'inverter')!;
    db.pragma('query_only = ON');
    for (const [id, body] of [
      ['r2', { requestId: 'r2', deviceId: 'inverter', slots }],
      ['r3', { requestId: 'r3', deviceId: 'inverter', delete: true }],
    ] as const) {
      const a = answerPlanCommand(c, command(body));
      expect(a).toMatchObject({ requestId: id, status: 'error', code: 'STORAGE_UNAVAILABLE' });
      expect(a.status === 'error' ? a.message : '').toMatch(/data disk takes no writes/);
    }
    db.pragma('query_only = OFF');
    expect(planOf(db, 'inverter')?.planId).toBe(before.planId);
  });
});
