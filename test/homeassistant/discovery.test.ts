/**
 * The Home Assistant discovery configs of the demo site as an Energy-dashboard user sets them up:
 * every entity docs/home-assistant.md names for a dashboard slot exists with the class, unit and
 * sign the slot wants (Home Assistant 2025.12's power sensors: battery + discharging, solar +
 * producing, grid + importing; energy sensors total_increasing in kWh); names without the device's
 * name repeated; entities that can only be 0 disabled by default; entity ids that start with the
 * site id; the device payload within what the oldest supported Home Assistant (2024.2) accepts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import {
  type DiscoveryContext,
  discoveryConfigs,
  gatewayIdentifier,
  haEntities,
  isOwnStream,
  statePayload,
  topicsOf,
} from '../../src/homeassistant/discovery.js';
import { Site } from '../../src/site/site.js';
import { DEVICE_KEYS_2024_2, discoveryProblems } from '../support/ha-schema.js';

const ep = { host: '127.0.0.1', port: 1502 };

/** `learn`: what the site learned beyond the inverter's identity and PV modules */
function demo(siteId = 'demo-site', learn?: (site: Site) => void): { site: Site; configs: Map<string, any> } {
  const config = demoSiteConfig(
    { inverter: ep, meter: ep },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/x', pollSeconds: 5, batteryBlocks: 2 },
  );
  config.site.id = siteId;
  const site = new Site(config);
  site.learn('inverter', { pvModules: 2, identity: { manufacturer: 'SunSpecSim', model: 'Hybrid', serial: 'S1' } });
  learn?.(site);
  const ctx: DiscoveryContext = {
    siteId,
    siteName: 'Demo',
    version: '0.1.0',
    discoveryPrefix: 'homeassistant',
    topics: topicsOf('homeassistant', `sitegw-ha/${siteId}`, gatewayIdentifier(siteId)),
  };
  const raw = discoveryConfigs(ctx, site.devices.values(), site.streams());
  for (const [topic, body] of raw) expect(discoveryProblems(topic, body, 'homeassistant'), topic).toEqual([]);
  return { site, configs: new Map([...raw].map(([t, b]) => [t, JSON.parse(b)])) };
}

/** The entity ids docs/home-assistant.md gives for each Energy-dashboard slot, by slot. */
function documentedSlots(): Map<string, string> {
  const text = readFileSync(new URL('../../docs/home-assistant.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('## The Energy dashboard'), text.indexOf('## Topics'));
  const out = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\| ([^|]+?) \| [^|]*`((?:sensor|binary_sensor)\.[a-z0-9_]+)`/.exec(line);
    if (m) out.set(m[1]!.replace(/\*\*/g, '').trim(), m[2]!);
  }
  return out;
}

describe('Home Assistant discovery of the demo site', () => {
  const { site, configs } = demo();
  const all = [...configs.values()];
  const byEntity = new Map(all.map((c) => [c.default_entity_id as string, c]));

  it('docs/home-assistant.md names an existing entity for every Energy-dashboard slot, with the class, unit and sign the slot wants', () => {
    const slots = documentedSlots();
    const want: Record<string, { device_class: string; unit: string; state_class: string; sign?: 'source' }> = {
      'Electricity grid → Grid consumption': { device_class: 'energy', unit: 'kWh', state_class: 'total_increasing' },
      'Electricity grid → Return to grid': { device_class: 'energy', unit: 'kWh', state_class: 'total_increasing' },
      'Electricity grid → Power measurement': {
        device_class: 'power',
        unit: 'W',
        state_class: 'measurement',
        sign: 'source',
      },
      'Solar panels → Solar production': { device_class: 'energy', unit: 'kWh', state_class: 'total_increasing' },
      'Solar panels → Power measurement': {
        device_class: 'power',
        unit: 'W',
        state_class: 'measurement',
        sign: 'source',
      },
      'Home battery storage → Energy going in to the battery': {
        device_class: 'energy',
        unit: 'kWh',
        state_class: 'total_increasing',
      },
      'Home battery storage → Energy coming out of the battery': {
        device_class: 'energy',
        unit: 'kWh',
        state_class: 'total_increasing',
      },
      'Home battery storage → Power measurement': {
        device_class: 'power',
        unit: 'W',
        state_class: 'measurement',
        sign: 'source',
      },
    };
    expect([...slots.keys()].filter((k) => want[k]).sort()).toEqual(Object.keys(want).sort());
    for (const [slot, w] of Object.entries(want)) {
      const c = byEntity.get(slots.get(slot)!);
      expect(c, `${slot}: ${slots.get(slot)}`).toBeDefined();
      expect(c, slot).toMatchObject({
        device_class: w.device_class,
        unit_of_measurement: w.unit,
        state_class: w.state_class,
      });
      expect(c.enabled_by_default, slot).toBeUndefined();
    }
    // the signs, from the API's (+ into the device): the battery charging at 1200 W, PV producing
    // 3000 W, the grid importing 500 W must read -1200, +3000 and +500 on the dashboard's sensors
    const sample: Record<string, number> = {
      'Home battery storage → Power measurement': 1200,
      'Solar panels → Power measurement': -3000,
      'Electricity grid → Power measurement': 500,
    };
    const dashboard: Record<string, number> = {
      'Home battery storage → Power measurement': -1200,
      'Solar panels → Power measurement': 3000,
      'Electricity grid → Power measurement': 500,
    };
    for (const [slot, api] of Object.entries(sample)) {
      const c = byEntity.get(slots.get(slot)!)!;
      const [, , streamId, key] = /^(.*)\/streams\/([^/]+)\/([^/]+)$/.exec(c.state_topic)!.slice(0);
      const def = site.stream(streamId!)!;
      const d = site.devices.get(def.deviceId)!;
      const e = haEntities(def, isOwnStream(def, d)).find((x) => x.key === key)!;
      expect(statePayload(e, api), slot).toBe(String(dashboard[slot]));
    }
  });

  it('names do not repeat the device’s name or their own words', () => {
    for (const c of all) {
      const full = `${c.device.name} ${c.name}`.toLowerCase().split(/\s+/);
      for (let i = 1; i < full.length; i++) expect(full[i], `"${c.device.name}" + "${c.name}"`).not.toBe(full[i - 1]);
    }
    const named = (entity: string) => byEntity.get(entity)?.name;
    expect(named('sensor.demo_site_inverter_ac_power')).toBe('AC power');
    expect(named('sensor.demo_site_inverter_battery_power')).toBe('Battery power');
    expect(named('sensor.demo_site_battery_1_power')).toBe('Power');
    expect(named('binary_sensor.demo_site_grid_meter_grid_available')).toBe('Grid available');
    expect(named('sensor.demo_site_house_meter_energy_in')).toBe('Energy in');
  });

  it('entities that can only be 0 are disabled by default: PV and PV module energy in, house energy out', () => {
    const disabled = all
      .filter((c) => c.enabled_by_default === false)
      .map((c) => c.default_entity_id)
      .sort();
    expect(disabled).toEqual([
      'sensor.demo_site_house_meter_energy_out',
      'sensor.demo_site_inverter_pv_energy_in',
      'sensor.demo_site_inverter_pv_module_1_energy_in',
      'sensor.demo_site_inverter_pv_module_2_energy_in',
    ]);
  });

  it('battery state of health is an entity of every battery stream', () => {
    const soh = all.filter((c) => c.state_topic.endsWith('/soh'));
    expect(soh.map((c) => c.default_entity_id).sort()).toEqual([
      'sensor.demo_site_battery_1_state_of_health',
      'sensor.demo_site_battery_2_state_of_health',
      'sensor.demo_site_inverter_battery_state_of_health',
    ]);
    for (const c of soh) expect(c).toMatchObject({ unit_of_measurement: '%', state_class: 'measurement' });
  });

  it('entity ids start with the site id, so two sites with the same device names keep theirs', () => {
    const other = demo('cabin');
    const ids = (m: Map<string, any>) => new Set([...m.values()].map((c) => c.default_entity_id as string));
    const a = ids(configs);
    const b = ids(other.configs);
    expect(a.size).toBe(configs.size);
    expect([...a].every((id) => /^(sensor|binary_sensor)\.demo_site_/.test(id))).toBe(true);
    expect([...b].every((id) => /^(sensor|binary_sensor)\.cabin_/.test(id))).toBe(true);
    expect([...a].filter((id) => b.has(id))).toEqual([]);
    for (const c of all) expect(`${c.default_entity_id}`.endsWith(`.${c.object_id}`)).toBe(true);
  });

  it('the device payload stays within Home Assistant 2024.2’s device keys (serial_number is accepted from 2024.2)', () => {
    for (const c of all) for (const k of Object.keys(c.device)) expect(DEVICE_KEYS_2024_2, k).toContain(k);
    const text = readFileSync(new URL('../../docs/home-assistant.md', import.meta.url), 'utf8');
    expect(text).toMatch(/Home Assistant 2024\.2 or later/);
  });
});

/**
 * The live channels a device reported (docs/design.md "Live channels"), here the demo's SunSpec
 * devices' set: grid frequency and phase values of the meters and the inverter, the inverter's
 * temperature, status and DC side, each PV string's voltage and current, a battery block's DC
 * values, status and temperature (a lithium-ion bank's 803 `ModTmpMax`).
 */
describe('Home Assistant sensors of the live channels a device offers', () => {
  const phases = [
    'voltage_L1_V',
    'voltage_L2_V',
    'voltage_L3_V',
    'current_L1_A',
    'current_L2_A',
    'current_L3_A',
  ] as const;
  // every config passes the discovery schema (demo() checks each with test/support/ha-schema.ts)
  const { site, configs } = demo('demo-site', (s) => {
    s.learn('grid-meter', {
      live: { 'grid-meter__GRID_METER_DERIVED': ['frequency_Hz', ...phases, 'power_L1_W', 'power_L2_W', 'power_L3_W'] },
    });
    s.learn('inverter', {
      live: {
        inverter: ['status', 'temperature_C', 'frequency_Hz', ...phases, 'voltage_DC_V', 'current_DC_A'],
        inverter__pv1: ['voltage_DC_V', 'current_DC_A'],
        // not a channel a PV string may carry (core/roles.ts): no entity
        inverter__pv2: ['frequency_Hz'],
      },
    });
    s.learn('battery-1', { live: { 'battery-1': ['voltage_DC_V', 'current_DC_A', 'status', 'temperature_C'] } });
  });
  const byEntity = new Map([...configs.values()].map((c) => [c.default_entity_id as string, c]));
  const entity = (id: string) => {
    const c = byEntity.get(id);
    expect(c, id).toBeDefined();
    return c;
  };

  it('pass the discovery schema, with the device class, state class and unit of each quantity', () => {
    expect(entity('sensor.demo_site_grid_meter_frequency')).toMatchObject({
      name: 'Frequency',
      device_class: 'frequency',
      state_class: 'measurement',
      unit_of_measurement: 'Hz',
    });
    expect(entity('sensor.demo_site_grid_meter_voltage_l1')).toMatchObject({
      name: 'Voltage L1',
      device_class: 'voltage',
      unit_of_measurement: 'V',
    });
    expect(entity('sensor.demo_site_grid_meter_current_l3')).toMatchObject({
      device_class: 'current',
      unit_of_measurement: 'A',
    });
    expect(entity('sensor.demo_site_grid_meter_power_l2')).toMatchObject({
      device_class: 'power',
      unit_of_measurement: 'W',
    });
    expect(entity('sensor.demo_site_inverter_temperature')).toMatchObject({
      name: 'Temperature',
      device_class: 'temperature',
      state_class: 'measurement',
      unit_of_measurement: '°C',
    });
    expect(entity('sensor.demo_site_battery_1_temperature')).toMatchObject({
      name: 'Temperature',
      device_class: 'temperature',
      state_class: 'measurement',
      unit_of_measurement: '°C',
    });
    expect(entity('sensor.demo_site_inverter_pv_module_1_dc_voltage')).toMatchObject({
      name: 'PV module 1 DC voltage',
      device_class: 'voltage',
    });
    expect(entity('sensor.demo_site_inverter_pv_module_1_dc_current')).toMatchObject({ device_class: 'current' });
    expect(byEntity.has('sensor.demo_site_inverter_pv_module_2_frequency')).toBe(false);
    for (const c of byEntity.values()) {
      const full = `${c.device.name} ${c.name}`.toLowerCase().split(/\s+/);
      for (let i = 1; i < full.length; i++) expect(full[i], `"${c.device.name}" + "${c.name}"`).not.toBe(full[i - 1]);
    }
  });

  it('status is an enum sensor whose options are every state it can take', () => {
    for (const id of ['sensor.demo_site_inverter_status', 'sensor.demo_site_battery_1_status']) {
      const c = entity(id);
      expect(c).toMatchObject({ name: 'Status', device_class: 'enum' });
      expect(c.options).toEqual([
        'off',
        'sleeping',
        'starting',
        'running',
        'throttled',
        'shutting_down',
        'fault',
        'standby',
      ]);
      expect(c.state_class).toBeUndefined();
      expect(c.unit_of_measurement).toBeUndefined();
      expect(c.enabled_by_default).toBeUndefined();
    }
    const def = site.stream('inverter')!;
    const status = haEntities(def, true).find((e) => e.key === 'status')!;
    expect(statePayload(status, 'running')).toBe('running');
    expect(statePayload(status, undefined)).toBe('None');
    // a code outside the device's table is no option of the enum: Home Assistant would log it as an error
    expect(statePayload(status, 'unknown (code 4)')).toBe('None');
  });

  it('per-phase and DC values are diagnostics, disabled by default; frequency, temperature and status are shown', () => {
    const diagnostic = [...byEntity.values()].filter(
      (c) => c.entity_category === 'diagnostic' && c.device_class !== undefined,
    );
    for (const c of diagnostic.filter((x) => /_(l[123]|dc_voltage|dc_current)$/.test(x.default_entity_id)))
      expect(c.enabled_by_default, c.default_entity_id).toBe(false);
    expect(diagnostic.map((c) => c.default_entity_id)).toContain('sensor.demo_site_inverter_voltage_l1');
    expect(diagnostic.map((c) => c.default_entity_id)).toContain('sensor.demo_site_battery_1_dc_current');
    for (const id of [
      'sensor.demo_site_grid_meter_frequency',
      'sensor.demo_site_inverter_frequency',
      'sensor.demo_site_inverter_temperature',
      'sensor.demo_site_inverter_status',
      'sensor.demo_site_battery_1_temperature',
    ]) {
      expect(entity(id).enabled_by_default, id).toBeUndefined();
      expect(entity(id).entity_category, id).toBeUndefined();
    }
  });
});
