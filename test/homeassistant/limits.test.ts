/**
 * The export limit number's commands (src/homeassistant/limits.ts): a value is written as the
 * limit schedule through the schedule's own checks (one slot from the current second for 7 days,
 * source `homeassistant`); text, fractions, values over the schedule's maximum and retained
 * commands are refused by name and change nothing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gatewayIdentifier, topicsOf } from '../../src/homeassistant/discovery.js';
import {
  answerExportLimitCommand,
  limitStates,
  limitsDiscovery,
  limitTopicsOf,
} from '../../src/homeassistant/limits.js';
import { getLimitSchedule, LIMIT_HORIZON_MS, MAX_LIMIT_W } from '../../src/limits/schedule.js';
import { openDatabase } from '../../src/store/db.js';

const NOW = Date.parse('2026-06-21T10:30:00.400Z');

function limits() {
  return { db: openDatabase(':memory:'), now: () => NOW, status: () => undefined };
}

describe('the export limit number', () => {
  it('writes a value as the schedule: one slot from the current second for the horizon', () => {
    const l = limits();
    expect(answerExportLimitCommand(l, Buffer.from('1500.0'), false)).toEqual({ ok: true, exportW: 1500 });
    const s = getLimitSchedule(l.db)!;
    expect(s.source).toBe('homeassistant');
    const start = Date.parse('2026-06-21T10:30:00Z');
    expect(s.slots).toEqual([
      { startMs: start, endMs: start + LIMIT_HORIZON_MS, exportW: 1500, importW: null, generationW: null },
    ]);
  });

  it('refuses text, fractions, values over the maximum and retained commands by name; nothing is written', () => {
    const l = limits();
    const refused = (payload: string, retained = false) => {
      const a = answerExportLimitCommand(l, Buffer.from(payload), retained);
      return a.ok ? 'accepted' : a.code;
    };
    expect(refused('abc')).toBe('SLOT_INVALID');
    expect(refused('')).toBe('SLOT_INVALID');
    expect(refused('-5')).toBe('SLOT_INVALID');
    expect(refused('0x10')).toBe('SLOT_INVALID');
    expect(refused('NaN')).toBe('SLOT_INVALID');
    // the schedule's own checks: whole watts within its maximum
    expect(refused('12.5')).toBe('SLOT_INVALID');
    expect(refused(String(MAX_LIMIT_W + 1))).toBe('SLOT_INVALID');
    expect(refused('100', true)).toBe('RETAINED_COMMAND');
    expect(getLimitSchedule(l.db)).toBeUndefined();
  });

  it('states the export limit in force, None without one, and the curtailed power', () => {
    const t = limitTopicsOf('p');
    const status = { capW: null, binding: null, curtailedW: 0, failSafe: false };
    expect(limitStates({ ...status, inForce: {} }, t)).toEqual([
      ['p/limits/export_limit', 'None'],
      ['p/limits/curtailed_power', '0'],
    ]);
    expect(
      limitStates({ ...status, curtailedW: 2400, inForce: { exportW: { watts: 0, source: 'price' } } }, t),
    ).toEqual([
      ['p/limits/export_limit', '0'],
      ['p/limits/curtailed_power', '2400'],
    ]);
  });
});

describe('docs/home-assistant.md "Topics"', () => {
  it('lists the number and the sensor: their configs, states and command, and the subscription', () => {
    const doc = readFileSync(new URL('../../docs/home-assistant.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('## Topics'));
    const listed = new Set([...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]));
    const topics = topicsOf('homeassistant', 'sitegw-ha/demo-site', gatewayIdentifier('demo-site'));
    const ctx = { siteId: 'demo-site', siteName: 'Demo', version: '0.1.0', discoveryPrefix: 'homeassistant', topics };
    const template = (t: string) =>
      t
        .replace('sitegw-ha/demo-site/', '<stateTopicPrefix>/')
        .replace(/^homeassistant\//, '<discoveryPrefix>/')
        .replace('sitegw_demo-site/', 'sitegw_<siteId>/');
    const used = limitsDiscovery(ctx, limitTopicsOf('sitegw-ha/demo-site')).flatMap(([topic, body]) => {
      const c = JSON.parse(body) as Record<string, string | undefined>;
      return [topic, c.state_topic, c.command_topic].filter((x): x is string => x !== undefined).map(template);
    });
    expect(used.length).toBe(5);
    expect(used.filter((t) => !listed.has(t))).toEqual([]);
    expect(table).toContain('`<stateTopicPrefix>/limits/export_limit/set`');
  });
});
