/**
 * Home Assistant MQTT discovery messages (docs/home-assistant.md). Followed from Home Assistant's
 * documentation (home-assistant.io, source/_integrations/mqtt.markdown "MQTT Discovery",
 * sensor.mqtt.markdown, binary_sensor.mqtt.markdown, sensor.markdown "Device class"):
 *
 * - one single-component config per entity on `<discoveryPrefix>/<component>/<node_id>/<object_id>/config`,
 *   retained, ids from [a-zA-Z0-9_-]; the node id is the gateway's, so the gateway finds its own
 *   configs again with `<discoveryPrefix>/+/<node_id>/+/config` and removes the ones no longer
 *   in site.yaml with an empty retained payload;
 * - every entity has a unique_id and a `device` (identifiers, name, manufacturer, model,
 *   serial_number, via_device = the gateway), and the `origin` (name, sw_version);
 * - availability: the gateway's own topic (its MQTT last will) and the device's, mode `all`;
 * - names without the device's name (HA prefixes it: "Hybrid inverter" + "AC power"), and a
 *   `default_entity_id` (with the older `object_id`) that starts with the site id, so two sites with
 *   the same device names keep apart and stable entity ids.
 *
 * The oldest Home Assistant that takes these configs is 2024.2: its MQTT device schema accepts
 * `serial_number` (home-assistant/core#108069: 2024.1 refused it as an extra key);
 * `default_entity_id` is read from 2025.10 and `object_id` before it (entity keys an older release
 * does not know are dropped, device keys are not). The Energy dashboard's power sensors are 2025.12's.
 *
 * Which quantities there are comes from telemetry/now.ts; this file only adds how Home
 * Assistant names and classes each kind, and the Energy dashboard's companions of power.
 */

import { OPERATION_MODES } from '../control/control.js';
import { DEVICE_STATUSES } from '../core/channels.js';
import { ownStreamId } from '../core/roles.js';
import type { StreamDef, StreamRole } from '../core/streams.js';
import type { DeviceState } from '../site/site.js';
import type { OperationMode } from '../store/control.js';
import { type LiveKind, type LiveQuantity, quantitiesOf } from '../telemetry/now.js';

/** Home Assistant's classes per kind of live quantity; the unit is what states are published in. */
export const HA_CLASSES: Record<
  LiveKind,
  { component: 'sensor' | 'binary_sensor'; config: Record<string, string | number | readonly string[]> }
> = {
  power: {
    component: 'sensor',
    config: {
      device_class: 'power',
      state_class: 'measurement',
      unit_of_measurement: 'W',
      suggested_display_precision: 0,
    },
  },
  soc: {
    component: 'sensor',
    config: {
      device_class: 'battery',
      state_class: 'measurement',
      unit_of_measurement: '%',
      suggested_display_precision: 0,
    },
  },
  // the Energy dashboard takes kWh sensors of state_class total_increasing: a decrease would read as a meter reset
  energy: {
    component: 'sensor',
    config: {
      device_class: 'energy',
      state_class: 'total_increasing',
      unit_of_measurement: 'kWh',
      suggested_display_precision: 2,
    },
  },
  // Home Assistant has no class for state of health: a plain percentage, a diagnostic
  soh: {
    component: 'sensor',
    config: {
      state_class: 'measurement',
      unit_of_measurement: '%',
      suggested_display_precision: 0,
      entity_category: 'diagnostic',
      icon: 'mdi:battery-heart-variant',
    },
  },
  // the live channels (docs/design.md "Live channels"), as HA's own integrations class them
  frequency: {
    component: 'sensor',
    config: {
      device_class: 'frequency',
      state_class: 'measurement',
      unit_of_measurement: 'Hz',
      suggested_display_precision: 2,
    },
  },
  voltage: {
    component: 'sensor',
    config: {
      device_class: 'voltage',
      state_class: 'measurement',
      unit_of_measurement: 'V',
      suggested_display_precision: 1,
    },
  },
  current: {
    component: 'sensor',
    config: {
      device_class: 'current',
      state_class: 'measurement',
      unit_of_measurement: 'A',
      suggested_display_precision: 2,
    },
  },
  temperature: {
    component: 'sensor',
    config: {
      device_class: 'temperature',
      state_class: 'measurement',
      unit_of_measurement: '°C',
      suggested_display_precision: 1,
    },
  },
  // an enum sensor has no state_class and no unit (sensor.markdown "Device class": enum); its options are the states
  status: {
    component: 'sensor',
    config: { device_class: 'enum', options: DEVICE_STATUSES, icon: 'mdi:state-machine' },
  },
  // device_class power of a binary sensor: on = power detected, off = no power
  grid: { component: 'binary_sensor', config: { device_class: 'power', payload_on: 'ON', payload_off: 'OFF' } },
};

/**
 * The Energy dashboard's power sensors (Home Assistant 2025.12) want a source's power positive
 * while it supplies the house: battery + discharging, solar + producing, grid + importing. The
 * API's sign is + into the device, which is the grid's already; battery and PV streams get a
 * companion sensor with the dashboard's sign, named for it, beside the one that matches the API
 * and /metrics (docs/home-assistant.md "The Energy dashboard").
 */
const DASHBOARD_POWER: Partial<Record<StreamRole, string>> = {
  battery: '(+ discharging)',
  battery_block: '(+ discharging)',
  pv: '(+ producing)',
};

/** Quantities a stream of this role can only ever show as 0 (PV takes no energy in, a house gives none out): hidden until wanted. */
const ZERO_ONLY: Partial<Record<StreamRole, readonly string[]>> = {
  pv: ['energy_in'],
  pv_module: ['energy_in'],
  house: ['energy_out'],
};

/** One Home Assistant entity of a stream: a live quantity, or the dashboard companion of its power. */
export interface HaEntity {
  q: LiveQuantity;
  /** the last level of its state topic and of its ids */
  key: string;
  /** without the device's name, which Home Assistant puts in front */
  name: string;
  /** multiplies the live value (-1: the dashboard companion of a battery's or PV's power) */
  sign: 1 | -1;
  enabled: boolean;
  /** shown under the device's diagnostics (HA `entity_category`) */
  diagnostic: boolean;
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * A stream's entities. `own`: the stream is its device's own (the inverter's, a battery block's,
 * a meter's), whose name would only repeat the device's; the others (an inverter's battery, PV,
 * PV modules) keep their label.
 */
export function haEntities(def: StreamDef, own: boolean): HaEntity[] {
  const out: HaEntity[] = [];
  for (const q of quantitiesOf(def)) {
    const what = q.kind === 'grid' ? 'grid available' : q.label;
    const name = capitalised(own ? what : `${def.label ?? def.id} ${what}`);
    const zero = def.role !== undefined && (ZERO_ONLY[def.role] ?? []).includes(q.key);
    // per-phase and DC values are there for diagnosing: hidden until wanted, as HA's inverter integrations do
    const diagnostic = q.diagnostic === true;
    out.push({ q, key: q.key, name, sign: 1, enabled: !zero && !diagnostic, diagnostic });
    const dashboard = def.role !== undefined ? DASHBOARD_POWER[def.role] : undefined;
    if (q.kind === 'power' && !diagnostic && dashboard && !out.some((e) => e.sign === -1))
      out.push({
        q,
        key: `${q.key}_dashboard`,
        name: `${name} ${dashboard}`,
        sign: -1,
        enabled: true,
        diagnostic: false,
      });
  }
  return out;
}

/** Whether a stream is its device's own (the one its poll reads). */
export const isOwnStream = (def: StreamDef, d: DeviceState): boolean =>
  ownStreamId(d.config.role, d.config.id) === def.id;

/** Home Assistant's slug of an entity id: lower case, runs of anything else one '_'. */
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

/** Home Assistant's payload for "unknown" (a state it cannot parse would be logged as an error instead). */
export const HA_UNKNOWN = 'None';

/** A topic level or discovery id: [a-zA-Z0-9_-] only. */
export const haId = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');

export interface Topics {
  /** the gateway's availability, also its MQTT last will */
  status: string;
  device: (deviceId: string) => string;
  state: (streamId: string, key: string) => string;
  /** Home Assistant's birth message (its MQTT integration's default) */
  birth: string;
  /** every config this gateway publishes */
  ownConfigs: string;
  /** a storage system's operation mode, as the control feature has it */
  mode: (deviceId: string) => string;
  /** where Home Assistant's select sends a new operation mode */
  modeCommand: (deviceId: string) => string;
  /** every storage system's mode command topic */
  modeCommands: string;
  /** a storage system's reserve state of charge in force, percent */
  reserve: (deviceId: string) => string;
  /** where Home Assistant's number sends a new reserve */
  reserveCommand: (deviceId: string) => string;
  /** every storage system's reserve command topic */
  reserveCommands: string;
}

export function topicsOf(discoveryPrefix: string, statePrefix: string, nodeId: string): Topics {
  return {
    status: `${statePrefix}/status`,
    device: (id) => `${statePrefix}/devices/${id}/availability`,
    state: (stream, key) => `${statePrefix}/streams/${stream}/${key}`,
    birth: `${discoveryPrefix}/status`,
    ownConfigs: `${discoveryPrefix}/+/${nodeId}/+/config`,
    mode: (id) => `${statePrefix}/devices/${id}/operation_mode`,
    modeCommand: (id) => `${statePrefix}/devices/${id}/operation_mode/set`,
    modeCommands: `${statePrefix}/devices/+/operation_mode/set`,
    reserve: (id) => `${statePrefix}/devices/${id}/reserve_soc`,
    reserveCommand: (id) => `${statePrefix}/devices/${id}/reserve_soc/set`,
    reserveCommands: `${statePrefix}/devices/+/reserve_soc/set`,
  };
}

export interface DiscoveryContext {
  siteId: string;
  siteName: string;
  version: string;
  discoveryPrefix: string;
  topics: Topics;
}

export const gatewayIdentifier = (siteId: string): string => `sitegw_${haId(siteId)}`;
export const deviceIdentifier = (siteId: string, deviceId: string): string =>
  `sitegw_${haId(siteId)}_${haId(deviceId)}`;

const origin = (ctx: DiscoveryContext) => ({ name: 'sitegw', sw_version: ctx.version });

function gatewayDevice(ctx: DiscoveryContext) {
  return {
    identifiers: [gatewayIdentifier(ctx.siteId)],
    name: ctx.siteName,
    manufacturer: 'sitegw',
    model: 'Site gateway',
    sw_version: ctx.version,
  };
}

function deviceOf(ctx: DiscoveryContext, d: DeviceState) {
  const { identity } = d;
  return {
    identifiers: [deviceIdentifier(ctx.siteId, d.config.id)],
    name: d.config.name ?? d.config.id,
    ...(identity.manufacturer ? { manufacturer: identity.manufacturer } : {}),
    ...(identity.model ? { model: identity.model } : {}),
    ...(identity.serial ? { serial_number: identity.serial } : {}),
    ...(identity.version ? { sw_version: identity.version } : {}),
    via_device: gatewayIdentifier(ctx.siteId),
  };
}

/**
 * The operation modes Home Assistant's select offers: the API's, every one. `optimise` is taken
 * while the gateway's optimiser runs (src/optimiser/loop.ts), refused by control otherwise.
 */
export const HA_OPERATION_MODES: readonly OperationMode[] = OPERATION_MODES;

/** A storage system Home Assistant may set the mode and reserve of, with the reserve's range (percent). */
export interface HaStorage {
  device: DeviceState;
  reserve: { min: number; max: number };
}

/** One entity's discovery topic and retained config payload, with its object and default entity ids. */
export function configEntry(
  ctx: DiscoveryContext,
  component: string,
  objectId: string,
  entityId: string,
  config: Record<string, unknown>,
): [string, string] {
  return [
    `${ctx.discoveryPrefix}/${component}/${gatewayIdentifier(ctx.siteId)}/${haId(objectId)}/config`,
    JSON.stringify({
      ...config,
      // the site id first: the same device names on two sites stay apart, and ids do not depend on HA's order
      object_id: slug(`${ctx.siteId}_${entityId}`),
      default_entity_id: `${component}.${slug(`${ctx.siteId}_${entityId}`)}`,
    }),
  ];
}

/** The gateway as the Home Assistant device its own entities (the site limits') belong to. */
export const gatewayDeviceOf = (ctx: DiscoveryContext) => ({ device: gatewayDevice(ctx), origin: origin(ctx) });

/**
 * topic → retained config payload, for every entity of the site as it is now. `storages`: the
 * storage systems whose operation mode and reserve Home Assistant may set (none while control is off).
 */
export function discoveryConfigs(
  ctx: DiscoveryContext,
  devices: Iterable<DeviceState>,
  streams: StreamDef[],
  storages: readonly HaStorage[] = [],
): Map<string, string> {
  const nodeId = gatewayIdentifier(ctx.siteId);
  const out = new Map<string, string>();
  const put = (component: string, objectId: string, entityId: string, config: Record<string, unknown>) =>
    out.set(...configEntry(ctx, component, objectId, entityId, config));
  // the gateway itself: the via_device of every device, and its connection as an entity
  put('binary_sensor', 'gateway', 'gateway connection', {
    name: 'Connection',
    unique_id: `${nodeId}_gateway`,
    device_class: 'connectivity',
    entity_category: 'diagnostic',
    state_topic: ctx.topics.status,
    payload_on: 'online',
    payload_off: 'offline',
    device: gatewayDevice(ctx),
    origin: origin(ctx),
  });
  const byId = new Map([...devices].map((d) => [d.config.id, d]));
  for (const def of streams) {
    const d = byId.get(def.deviceId);
    if (!d) continue;
    for (const e of haEntities(def, isOwnStream(def, d))) {
      const ha = HA_CLASSES[e.q.kind];
      const objectId = `${def.id}_${e.key}`;
      put(ha.component, objectId, `${d.config.id} ${e.name}`, {
        name: e.name,
        unique_id: `${nodeId}_${haId(objectId)}`,
        state_topic: ctx.topics.state(def.id, e.key),
        ...ha.config,
        ...(e.diagnostic ? { entity_category: 'diagnostic' } : {}),
        ...(e.enabled ? {} : { enabled_by_default: false }),
        availability: [{ topic: ctx.topics.status }, { topic: ctx.topics.device(d.config.id) }],
        availability_mode: 'all',
        device: deviceOf(ctx, d),
        origin: origin(ctx),
      });
    }
  }
  // select.mqtt.markdown: options and command_topic required; not retained, so a command is
  // acted on once, when sent, and never again at the next connection
  for (const { device: d, reserve } of storages) {
    const objectId = `${d.config.id}_operation_mode`;
    put('select', objectId, `${d.config.id} operation mode`, {
      name: 'Operation mode',
      unique_id: `${nodeId}_${haId(objectId)}`,
      icon: 'mdi:battery-sync',
      entity_category: 'config',
      options: HA_OPERATION_MODES,
      state_topic: ctx.topics.mode(d.config.id),
      command_topic: ctx.topics.modeCommand(d.config.id),
      retain: false,
      availability: [{ topic: ctx.topics.status }, { topic: ctx.topics.device(d.config.id) }],
      availability_mode: 'all',
      device: deviceOf(ctx, d),
      origin: origin(ctx),
    });
    // number.mqtt.markdown: command_topic required; min and max are the range control accepts,
    // so the slider offers nothing it would refuse
    const reserveId = `${d.config.id}_reserve_soc`;
    put('number', reserveId, `${d.config.id} reserve soc`, {
      name: 'Reserve state of charge',
      unique_id: `${nodeId}_${haId(reserveId)}`,
      icon: 'mdi:battery-lock',
      entity_category: 'config',
      device_class: 'battery',
      unit_of_measurement: '%',
      min: reserve.min,
      max: reserve.max,
      step: 1,
      mode: 'slider',
      state_topic: ctx.topics.reserve(d.config.id),
      command_topic: ctx.topics.reserveCommand(d.config.id),
      retain: false,
      availability: [{ topic: ctx.topics.status }, { topic: ctx.topics.device(d.config.id) }],
      availability_mode: 'all',
      device: deviceOf(ctx, d),
      origin: origin(ctx),
    });
  }
  return out;
}

/** A live value as the state payload of its entity; undefined = publish nothing (energy not yet known). */
export function statePayload(e: HaEntity, value: number | string | undefined): string | undefined {
  switch (e.q.kind) {
    case 'grid':
      return value === 'ok' ? 'ON' : value === 'not_present' ? 'OFF' : HA_UNKNOWN;
    case 'status':
      // one of the enum's options, or unknown: a code outside the device's table ('unknown (code
      // N)', its code on the status page and in /metrics) is no option, and Home Assistant logs
      // an enum state outside its options as an error
      return typeof value === 'string' && (DEVICE_STATUSES as readonly string[]).includes(value) ? value : HA_UNKNOWN;
    case 'energy':
      // Wh with 2 decimals → kWh with 5: exact, and monotonic like the count itself
      return typeof value === 'number' ? String(Number((value / 1000).toFixed(5))) : undefined;
    default:
      // + 0: a companion of a 0 W reading says 0, not -0
      return typeof value === 'number' ? String(e.sign * value + 0) : HA_UNKNOWN;
  }
}
