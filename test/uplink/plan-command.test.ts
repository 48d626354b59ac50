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

describe('a cloud plan command sent again (docs/mqtt-contract.md "Plans")', () => {
  const slots2 = [{ interval: '2026-01-15T03:00:00Z/2026-01-15T04:00:00Z', mode: 'discharge', powerW: 800 }];

  it('is answered with the plan its requestId stored, the same planId, and makes no new plan', () => {
    const { db, control: c, clock } = demoControl({ start: START });
    const first = answerPlanCommand(c, command({ requestId: 'fleet-1', deviceId: 'inverter', slots }));
    expect(first.status).toBe('accepted');
    const planId = first.status === 'accepted' ? first.plan?.planId : undefined;
    clock.advance(60_000);
    // even with another body: the requestId names the command
    for (const body of [
      { requestId: 'fleet-1', deviceId: 'inverter', slots },
      { requestId: 'fleet-1', deviceId: 'inverter', slots: slots2 },
    ]) {
      const again = answerPlanCommand(c, command(body));
      expect(again).toMatchObject({ requestId: 'fleet-1', status: 'accepted', plan: { planId } });
      expect(planOf(db, 'inverter')?.planId).toBe(planId);
    }
    expect(again(c, 'fleet-1')).toEqual(first);
  });

  it('after a later plan replaced it: refused DUPLICATE_REQUEST, the later plan stays; a removal sent again removes nothing new', () => {
    const { db, control: c } = demoControl({ start: START });
    answerPlanCommand(c, command({ requestId: 'a', deviceId: 'inverter', slots }));
    const b = answerPlanCommand(c, command({ requestId: 'b', deviceId: 'inverter', slots: slots2 }));
    const bId = b.status === 'accepted' ? b.plan?.planId : undefined;
    expect(answerPlanCommand(c, command({ requestId: 'a', deviceId: 'inverter', slots }))).toMatchObject({
      requestId: 'a',
      status: 'error',
      code: 'DUPLICATE_REQUEST',
    });
    expect(planOf(db, 'inverter')?.planId).toBe(bId);
    expect(answerPlanCommand(c, command({ requestId: 'd', deviceId: 'inverter', delete: true }))).toMatchObject({
      status: 'accepted',
      plan: null,
    });
    const e = answerPlanCommand(c, command({ requestId: 'e', deviceId: 'inverter', slots }));
    // the removal 'd' arriving again (a late second delivery) leaves the plan 'e' stored alone
    expect(answerPlanCommand(c, command({ requestId: 'd', deviceId: 'inverter', delete: true }))).toMatchObject({
      status: 'accepted',
      plan: null,
    });
    expect(planOf(db, 'inverter')?.planId).toBe(e.status === 'accepted' ? e.plan?.planId : 'none');
  });

  it('requestId follows the resync rule: an invalid one is refused INVALID_REQUEST_ID and never echoed', () => {
    const { db, control: c } = demoControl({ start: START });
    for (const requestId of ['x'.repeat(101), '', 'has space', 7]) {
      const a = answerPlanCommand(c, command({ requestId, deviceId: 'inverter', slots }));
      expect(a).toMatchObject({ requestId: null, status: 'error', code: 'INVALID_REQUEST_ID' });
    }
    expect(answerPlanCommand(c, command({ requestId: 'x'.repeat(100), deviceId: 'inverter', slots }))).toMatchObject({
      requestId: 'x'.repeat(100),
      status: 'accepted',
    });
    expect(planOf(db, 'inverter')).toBeDefined();
  });

  it('an empty slots list is refused, the plan in force stays', () => {
    const { db, control: c } = demoControl({ start: START });
    answerPlanCommand(c, command({ requestId: 'p', deviceId: 'inverter', slots }));
    const before = planOf(db, 'inverter')?.planId;
    expect(answerPlanCommand(c, command({ requestId: 'q', deviceId: 'inverter', slots: [] }))).toMatchObject({
      requestId: 'q',
      status: 'error',
      code: 'INVALID_COMMAND',
      message: expect.stringMatching(/delete/),
    });
    expect(planOf(db, 'inverter')?.planId).toBe(before);
  });
});

function again(c: Parameters<typeof answerPlanCommand>[0], requestId: string) {
  return answerPlanCommand(c, command({ requestId, deviceId: 'inverter', slots }));
}
