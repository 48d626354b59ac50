import { describe, expect, it } from 'vitest';
import type { GridOperatorStatus } from '../../src/gridop/client.js';
import { CLOCK_OFFSET_PROBLEM_SECONDS, clockOffsetProblem, gridOperatorBody } from '../../src/gridop/status-body.js';

const status = (over: Partial<GridOperatorStatus> = {}): GridOperatorStatus => ({
  reachable: true,
  lastError: null,
  lastContact: Date.parse('2026-12-02T09:14:05.250Z'),
  clockOffsetSeconds: 0,
  endDevice: '/edev/1',
  lfdi: '3E4F45AB31EDFE5B67E343E5E4562E31984E23E5',
  sfdi: '167261211391',
  limits: null,
  invalidBodies: 0,
  responsesPending: 0,
  readingsUnsent: 0,
  readingsDropped: 0,
  ...over,
});

describe("the grid operator's status as the status page and the uplink show it", () => {
  it('names the control in force, its values and its end in whole seconds', () => {
    const body = gridOperatorBody(
      status({
        limits: {
          source: 'grid-operator',
          exportW: 1500,
          connect: true,
          controlId: 'C1,D1',
          kind: 'control',
          until: Date.parse('2026-12-02T10:00:00.600Z'),
        },
      }),
    );
    expect(body).toEqual({
      reachable: true,
      lastContact: '2026-12-02T09:14:05Z',
      lastError: null,
      clockOffsetSeconds: 0,
      control: { kind: 'control', id: 'C1,D1', until: '2026-12-02T10:00:00Z' },
      values: { exportW: 1500, connect: true },
      responsesPending: 0,
    });
  });

  it('says nothing is in force before the first read', () => {
    const body = gridOperatorBody(
      status({ reachable: false, lastContact: null, lastError: 'GET /dcap: ECONNREFUSED' }),
    );
    expect(body.control).toEqual({ kind: 'none', id: null, until: null });
    expect(body.values).toEqual({});
    expect(body.lastContact).toBeNull();
  });

  it("names a wall clock that differs from the server's by more than the bound, in which direction", () => {
    expect(clockOffsetProblem(null)).toBeNull();
    expect(clockOffsetProblem(CLOCK_OFFSET_PROBLEM_SECONDS)).toBeNull();
    expect(clockOffsetProblem(-CLOCK_OFFSET_PROBLEM_SECONDS)).toBeNull();
    expect(clockOffsetProblem(120)).toMatch(/^the wall clock is 120 s behind the grid operator's server/);
    expect(clockOffsetProblem(-3600)).toMatch(/^the wall clock is 3600 s ahead of the grid operator's server/);
  });
});
