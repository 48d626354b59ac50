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

function demo(siteId = 'demo-site'): { site: Site; configs: Map<string, any> } {
  const config = demoSiteConfig(
    { inverter: ep, meter: ep },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/x', pollSeconds: 5, batteryBlocks: 2 },
  );
  config.site.id = siteId;
  const site = new Site(config);
  site.learn('inverter', { pvModules: 2, identity: { manufacturer: 'SunSpecSim', model: 'Hybrid', serial: 'S1' } });
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
