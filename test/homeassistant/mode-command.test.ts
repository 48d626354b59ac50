/**
 * Home Assistant's operation mode select (docs/home-assistant.md "Battery control"): offered for
 * each storage system only while control is enabled, in Home Assistant's documented select schema;
 * a command goes through control's own checks (the API's PATCH), and whatever anyone publishes on
 * the command topic is refused with a reason, never thrown.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Control } from '../../src/control/control.js';
import {
  discoveryConfigs,
  gatewayIdentifier,
  HA_OPERATION_MODES,
  topicsOf,
} from '../../src/homeassistant/discovery.js';
import { answerModeCommand, answerReserveCommand, haStorages } from '../../src/homeassistant/mode-command.js';
import type { Site } from '../../src/site/site.js';
import { modeOf, reserveOf } from '../../src/store/control.js';
import { demoControl } from '../support/demo-control.js';
import { discoveryProblems } from '../support/ha-schema.js';

const topics = topicsOf('homeassistant', 'sitegw-ha/demo-site', gatewayIdentifier('demo-site'));
const ctx = { siteId: 'demo-site', siteName: 'Demo', version: '0.1.0', discoveryPrefix: 'homeassistant', topics };
const SET = topics.modeCommand('inverter');

function demo(enabled: boolean) {
  const { config, site, db, control } = demoControl({ enabled, batteryBlocks: 2 });
  return { config, site, db, control };
}

/** the discovery configs of one component (select, number) the site announces */
const configsOf = (component: string) => (site: Site, control: Control) =>
  [...discoveryConfigs(ctx, site.devices.values(), site.streams(), haStorages(control))].filter(([t]) =>
    t.startsWith(`homeassistant/${component}/`),
  );
const selects = configsOf('select');

describe('the operation mode select', () => {
  it('is offered for the storage system in the documented schema while control is enabled, and absent while it is off', () => {
    const on = demo(true);
    const found = selects(on.site, on.control);
    expect(found.map(([t]) => t)).toEqual(['homeassistant/select/sitegw_demo-site/inverter_operation_mode/config']);
    const [topic, body] = found[0]!;
    expect(discoveryProblems(topic, body, 'homeassistant')).toEqual([]);
    expect(JSON.parse(body)).toMatchObject({
      options: ['self-consumption', 'plan', 'backup', 'optimise'],
      command_topic: SET,
      state_topic: topics.mode('inverter'),
      retain: false,
      default_entity_id: 'select.demo_site_inverter_operation_mode',
    });
    // every mode of the API is offered; optimise is control's to refuse while no optimiser runs
    expect(HA_OPERATION_MODES).toContain('optimise');

    const off = demo(false);
    expect(selects(off.site, off.control)).toEqual([]);
    expect(selects(off.site, undefined as unknown as Control)).toEqual([]);
  });

  it('sets the mode through control, as the API does, and says who did', () => {
    const { db, control } = demo(true);
    const a = answerModeCommand(control, topics, SET, Buffer.from('backup'), false);
    expect(a).toMatchObject({ ok: true, mode: 'backup' });
    expect(control.modeOf('inverter')).toBe('backup');
    expect(modeOf(db, 'inverter')?.changedBy).toBe('homeassistant');
  });

  it('refuses bad payloads, retained commands, unknown topics and control off with a reason, and changes nothing', () => {
    const { control } = demo(true);
    const refused = (c: Control | undefined, topic: string, payload: Buffer | string, retained = false) => {
      const a = answerModeCommand(c, topics, topic, Buffer.from(payload), retained);
      expect(a.ok, String(payload)).toBe(false);
      return a.ok ? '' : a.code;
    };
    expect(refused(control, SET, 'optimise')).toBe('OPTIMISER_UNAVAILABLE');
    expect(refused(control, SET, 'turbo')).toBe('BAD_MODE');
    expect(refused(control, SET, '')).toBe('BAD_MODE');
    expect(refused(control, SET, Buffer.from([0xff, 0xfe, 0x00]))).toBe('BAD_MODE');
    expect(refused(control, SET, 'x'.repeat(100_000))).toBe('BAD_MODE');
    expect(refused(control, SET, '{"mode":"backup"}')).toBe('BAD_MODE');
    expect(refused(control, SET, 'backup', true)).toBe('RETAINED_COMMAND');
    expect(refused(control, topics.modeCommand('grid-meter'), 'backup')).toBe('NOT_A_STORAGE');
    expect(refused(undefined, SET, 'backup')).toBe('CONTROL_DISABLED');
    expect(control.modeOf('inverter')).toBe('self-consumption');

    const off = demo(false);
    expect(refused(off.control, SET, 'backup')).toBe('CONTROL_DISABLED');
    expect(off.control.modeOf('inverter')).toBe('self-consumption');
  });
});

describe('the reserve number', () => {
  const RESERVE = topics.reserveCommand('inverter');
  const numbers = configsOf('number');

  it('is offered with the range control accepts while control is enabled, and absent while it is off', () => {
    const on = demo(true);
    const found = numbers(on.site, on.control);
    expect(found.map(([t]) => t)).toEqual(['homeassistant/number/sitegw_demo-site/inverter_reserve_soc/config']);
    const [topic, body] = found[0]!;
    expect(discoveryProblems(topic, body, 'homeassistant')).toEqual([]);
    const { socMin, socMax } = on.config.control;
    expect(JSON.parse(body)).toMatchObject({
      min: socMin,
      max: socMax,
      unit_of_measurement: '%',
      command_topic: RESERVE,
      state_topic: topics.reserve('inverter'),
      retain: false,
    });
    expect(numbers(demo(false).site, demo(false).control)).toEqual([]);
  });

  it('stores a reserve through control, and says who did', () => {
    const { db, control } = demo(true);
    expect(answerReserveCommand(control, topics, RESERVE, Buffer.from('35'), false)).toMatchObject({
      ok: true,
      reserveSoc: 35,
    });
    expect(reserveOf(db, 'inverter')).toMatchObject({ soc: 35, changedBy: 'homeassistant' });
    expect(control.reserveOf('inverter')).toBe(35);
    expect(answerReserveCommand(control, topics, RESERVE, Buffer.from(' 40.5\n'), false)).toMatchObject({
      reserveSoc: 40.5,
    });
  });

  it('refuses text, NaN, out of range, retained and control off with a reason, and changes nothing', () => {
    const { db, control } = demo(true);
    const refused = (c: Control | undefined, payload: Buffer | string, retained = false, topic = RESERVE) => {
      const a = answerReserveCommand(c, topics, topic, Buffer.from(payload), retained);
      expect(a.ok, String(payload)).toBe(false);
      return a.ok ? '' : a.code;
    };
    for (const bad of [
      'abc',
      'NaN',
      '',
      'Infinity',
      '0x1e',
      '1e1',
      '30%',
      Buffer.from([0xff, 0xfe]),
      'x'.repeat(10_000),
    ])
      expect(refused(control, bad)).toBe('RESERVE_INVALID');
    expect(refused(control, '5')).toBe('RESERVE_OUT_OF_RANGE');
    expect(refused(control, '101')).toBe('RESERVE_OUT_OF_RANGE');
    expect(refused(control, '-1')).toBe('RESERVE_OUT_OF_RANGE');
    expect(refused(control, '30', true)).toBe('RETAINED_COMMAND');
    expect(refused(control, '30', false, topics.reserveCommand('grid-meter'))).toBe('NOT_A_STORAGE');
    expect(refused(undefined, '30')).toBe('CONTROL_DISABLED');
    const off = demo(false);
    expect(refused(off.control, '30')).toBe('CONTROL_DISABLED');
    expect(reserveOf(db, 'inverter')).toBeUndefined();
    expect(reserveOf(off.db, 'inverter')).toBeUndefined();
  });
});

describe('commands on a data disk that refuses writes', () => {
  // query_only makes every write fail with SQLITE_READONLY, a storage fault, as a full disk's SQLITE_FULL is
  it('refuses a mode and a reserve by name (STORAGE_UNAVAILABLE), and nothing changes', () => {
    const { db, control } = demo(true);
    db.pragma('query_only = ON');
    const mode = answerModeCommand(control, topics, SET, Buffer.from('backup'), false);
    const reserve = answerReserveCommand(control, topics, topics.reserveCommand('inverter'), Buffer.from('35'), false);
    for (const a of [mode, reserve]) {
      expect(a).toMatchObject({ ok: false, code: 'STORAGE_UNAVAILABLE' });
      expect(a.ok ? '' : a.message).toMatch(/data disk takes no writes/);
    }
    db.pragma('query_only = OFF');
    expect(control.modeOf('inverter')).toBe('self-consumption');
    expect(reserveOf(db, 'inverter')).toBeUndefined();
  });
});

describe('docs/home-assistant.md "Topics"', () => {
  it('lists every topic of the select and the number: their configs, states and commands', () => {
    const doc = readFileSync(new URL('../../docs/home-assistant.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('## Topics'));
    const listed = new Set([...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]));
    const { site, control } = demo(true);
    // the demo's own ids back to the placeholders the table writes
    const template = (t: string) =>
      t
        .replace('sitegw-ha/demo-site/', '<stateTopicPrefix>/')
        .replace(/^homeassistant\//, '<discoveryPrefix>/')
        .replace('sitegw_demo-site/inverter_', 'sitegw_<siteId>/<deviceId>_')
        .replace('/devices/inverter/', '/devices/<deviceId>/');
    const used = [...configsOf('select')(site, control), ...configsOf('number')(site, control)].flatMap(
      ([topic, body]) => {
        const c = JSON.parse(body) as Record<string, unknown>;
        return [topic, c.state_topic as string, c.command_topic as string].map(template);
      },
    );
    expect(used.length).toBe(6);
    expect(used.filter((t) => !listed.has(t))).toEqual([]);
    // and the subscriptions: the text under the table names each command filter
    for (const filter of [
      '<stateTopicPrefix>/devices/+/operation_mode/set',
      '<stateTopicPrefix>/devices/+/reserve_soc/set',
    ])
      expect(table).toContain(`\`${filter}\``);
  });
});
