import { describe, expect, it } from 'vitest';
import { gridOperatorSection } from '../../src/api/http/status-page.js';
import type { GridOperatorStatus } from '../../src/gridop/client.js';
import {
  CLOCK_OFFSET_PROBLEM_SECONDS,
  clockOffsetProblem,
  gridOperatorBody,
  readingsDroppedProblem,
} from '../../src/gridop/status-body.js';
import type { StatusView } from '../../src/ops/status-view.js';
import { PAYLOAD_VERSION } from '../../src/uplink/topics.js';
import { loadContract } from '../support/contract.js';

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
      readingsUnsent: 0,
      readingsDropped: 0,
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

  it('counts the meter readings waiting for the server and those dropped, as the uplink contract lists them', () => {
    const body = gridOperatorBody(status({ reachable: false, readingsUnsent: 12, readingsDropped: 6 }));
    expect(body).toMatchObject({ readingsUnsent: 12, readingsDropped: 6 });
    const contract = loadContract('sitegw/s');
    const message = { v: PAYLOAD_VERSION, state: 'online', siteId: 's', gridOperator: body };
    expect(contract.check('sitegw/s/status', message)).toEqual([]);
    // a 2.5.0 gateway's status, without them, is still valid: the fields are a compatible addition
    const { readingsUnsent: _u, readingsDropped: _d, ...before } = body;
    expect(contract.check('sitegw/s/status', { ...message, gridOperator: before })).toEqual([]);
    expect(
      contract.check('sitegw/s/status', { ...message, gridOperator: { ...body, readingsDropped: -1 } }),
    ).not.toEqual([]);
  });

  it('names an outage that is losing readings, and nothing when none were dropped', () => {
    expect(readingsDroppedProblem(0)).toBeNull();
    expect(readingsDroppedProblem(4)).toMatch(
      /^4 meter readings for the grid operator dropped: its server has been gone longer than the 12 intervals/,
    );
  });

  it('marks dropped readings on the status page, and says what waits', () => {
    const view = (over: Partial<GridOperatorStatus>) =>
      ({
        site: { id: 's', name: 'S', timezone: 'Australia/Adelaide' },
        gridOperator: gridOperatorBody(status(over)),
      }) as StatusView;
    expect(gridOperatorSection(view({}))).not.toMatch(/readings/);
    expect(gridOperatorSection(view({ readingsUnsent: 3 }))).toContain(
      '<p class="muted">3 intervals of meter readings wait for the server.</p>',
    );
    const lost = gridOperatorSection(view({ readingsUnsent: 12, readingsDropped: 6 }));
    expect(lost).toContain(
      '<span class="badge degraded">readings lost</span> 6 meter readings dropped since the start',
    );
    expect(lost).toContain('12 intervals of meter readings wait for the server');
    // the server is back and took them: the loss stays said
    expect(gridOperatorSection(view({ readingsDropped: 6 }))).toMatch(
      /readings lost<\/span> 6 meter readings dropped[^·]*<\/p>/,
    );
  });
});
