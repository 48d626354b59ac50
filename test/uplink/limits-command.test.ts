/**
 * The requestId of a cloud limit schedule (`{prefix}/cmd/limits`) follows the rule of every
 * uplink command (src/uplink/commands.ts, docs/mqtt-contract.md "Commands"): 1 to 100 letters,
 * digits or `. _ : -`, echoed only when valid, otherwise refused as INVALID_REQUEST_ID with a null
 * requestId, before anything is stored.
 */
import { describe, expect, it } from 'vitest';
import { getLimitSchedule } from '../../src/limits/schedule.js';
import { openDatabase } from '../../src/store/db.js';
import { answerLimitsCommand } from '../../src/uplink/limits-command.js';

const NOW = Date.parse('2026-06-21T10:00:00Z');
const slots = [{ interval: '2026-06-21T10:00:00Z/2026-06-21T11:00:00Z', exportW: 0 }];
const command = (body: unknown) => Buffer.from(JSON.stringify(body));

describe('the requestId of a cloud limit schedule', () => {
  it('a valid one is echoed with the stored schedule', () => {
    const db = openDatabase(':memory:');
    expect(answerLimitsCommand(db, NOW, command({ requestId: 'fleet-1.a:b_c', slots }))).toMatchObject({
      requestId: 'fleet-1.a:b_c',
      status: 'accepted',
      schedule: { source: 'cloud', slots },
    });
  });

  it.each([
    ['101 characters', 'r'.repeat(101)],
    ['a space', 'fleet 1'],
    ['a slash', 'fleet/1'],
    ['empty', ''],
    ['a number', 7],
  ])('one with %s is refused as INVALID_REQUEST_ID, echoed as null, and nothing is stored', (_, requestId) => {
    const db = openDatabase(':memory:');
    expect(answerLimitsCommand(db, NOW, command({ requestId, slots }))).toMatchObject({
      requestId: null,
      status: 'error',
      code: 'INVALID_REQUEST_ID',
      message: expect.stringMatching(/1 to 100 letters, digits or \. _ : -/),
    });
    expect(getLimitSchedule(db)).toBeUndefined();
  });
});
