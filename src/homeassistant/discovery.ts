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
 * - availability: the gateway's own topic (its MQTT last will) and the device's, mode `all`.
 *
 * Which quantities there are comes from telemetry/now.ts; this file only adds how Home
 * Assistant names and classes each kind.
 */

import type { StreamDef } from '../core/streams.js';
import type { DeviceState } from '../site/site.js';
import type { LiveKind, LiveQuantity } from '../telemetry/now.js';

/** Home Assistant's classes per kind of live quantity; the unit is what states are published in. */
export const HA_CLASSES: Record<
  LiveKind,
  { component: 'sensor' | 'binary_sensor'; config: Record<string, string | number> }
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
  // device_class power of a binary sensor: on = power detected, off = no power
  grid: { component: 'binary_sensor', config: { device_class: 'power', payload_on: 'ON', payload_off: 'OFF' } },
};

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
}

export function topicsOf(discoveryPrefix: string, statePrefix: string, nodeId: string): Topics {
  return {
    status: `${statePrefix}/status`,
    device: (id) => `${statePrefix}/devices/${id}/availability`,
    state: (stream, key) => `${statePrefix}/streams/${stream}/${key}`,
    birth: `${discoveryPrefix}/status`,
    ownConfigs: `${discoveryPrefix}/+/${nodeId}/+/config`,
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

/** topic → retained config payload, for every entity of the site as it is now. */
export function discoveryConfigs(
  ctx: DiscoveryContext,
  devices: Iterable<DeviceState>,
  streams: { def: StreamDef; quantities: LiveQuantity[] }[],
): Map<string, string> {
  const nodeId = gatewayIdentifier(ctx.siteId);
  const out = new Map<string, string>();
  const put = (component: string, objectId: string, config: Record<string, unknown>) =>
    out.set(`${ctx.discoveryPrefix}/${component}/${nodeId}/${haId(objectId)}/config`, JSON.stringify(config));
  // the gateway itself: the via_device of every device, and its connection as an entity
  put('binary_sensor', 'gateway', {
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
  for (const { def, quantities } of streams) {
    const d = byId.get(def.deviceId);
    if (!d) continue;
    for (const q of quantities) {
      const ha = HA_CLASSES[q.kind];
      const objectId = `${def.id}_${q.key}`;
      put(ha.component, objectId, {
        name: `${def.label ?? def.id} ${q.label}`,
        unique_id: `${nodeId}_${haId(objectId)}`,
        state_topic: ctx.topics.state(def.id, q.key),
        ...ha.config,
        availability: [{ topic: ctx.topics.status }, { topic: ctx.topics.device(d.config.id) }],
        availability_mode: 'all',
        device: deviceOf(ctx, d),
        origin: origin(ctx),
      });
    }
  }
  return out;
}

/** A live value as the state payload of its entity; undefined = publish nothing (energy not yet known). */
export function statePayload(q: LiveQuantity, value: number | string | undefined): string | undefined {
  switch (q.kind) {
    case 'grid':
      return value === 'ok' ? 'ON' : value === 'not_present' ? 'OFF' : HA_UNKNOWN;
    case 'energy':
      // Wh with 2 decimals → kWh with 5: exact, and monotonic like the count itself
      return typeof value === 'number' ? String(Number((value / 1000).toFixed(5))) : undefined;
    default:
      return typeof value === 'number' ? String(value) : HA_UNKNOWN;
  }
}
