/**
 * What the installer's status page shows, as JSON: the health report, each device with its
 * state, current values and error counts, the power flow between PV, battery, house and grid,
 * the uplink and the recent grid events. Built on request from what the daemon already holds.
 */

import type { Database } from 'better-sqlite3';
import { Control, type ControlStatus } from '../control/control.js';
import type { InstantValues } from '../core/channels.js';
import type { Clock } from '../core/clock.js';
import type { ConnectionStatus, FeatureList } from '../core/feature.js';
import { ownStreamId } from '../core/roles.js';
import type { GridOperatorClient } from '../gridop/client.js';
import { type GridOperatorBody, gridOperatorBody } from '../gridop/status-body.js';
import { SiteLimitsFeature } from '../limits/feature.js';
import type { SiteLimitsStatus } from '../limits/status.js';
import type { ModbusProxy, ProxyStatus } from '../proxy/proxy.js';
import type { Site } from '../site/site.js';
import { recentGridEvents } from '../store/grid-events.js';
import { flowStreams } from './flow-streams.js';
import type { Health, HealthReport } from './health.js';
import type { LiveValues } from './live.js';

export interface DeviceView {
  id: string;
  name: string | null;
  role: string;
  online: boolean;
  /** ISO time of the last answer (daemon clock) */
  lastSeen: string | null;
  lastError: string | null;
  errors: Record<string, number>;
  manufacturer: string | null;
  model: string | null;
  /** the device's current values (its main stream), absent when not current */
  values: InstantValues | null;
}

/** Watts, docs/design.md signs turned into what a person reads: each flow positive in its named direction. */
export interface PowerFlow {
  /** PV production (>= 0) */
  pvW: number | null;
  /** battery: + charging, - discharging */
  batteryW: number | null;
  /** battery state of charge, percent */
  batterySoc: number | null;
  /** house consumption (>= 0) */
  houseW: number | null;
  /** grid: + importing, - exporting */
  gridW: number | null;
  /** grid relay: ok, not_present (outage), unknown; null on a site without a grid meter */
  gridState: string | null;
}

export interface StatusView {
  site: { id: string; name: string; timezone: string };
  version: string;
  now: string;
  health: HealthReport;
  devices: DeviceView[];
  flow: PowerFlow;
  uplink: (ConnectionStatus & { configured: true }) | { configured: false };
  gridEvents: { deviceId: string; timestamp: string; state: string }[];
  /** battery control (src/control): each storage system's mode and current slot */
  control: ControlStatus;
  /** the Modbus proxy's ports (src/proxy) and their clients; no ports without `modbusProxy:` */
  modbusProxy: ProxyStatus;
  /** the site limits in force and the curtailed power (src/limits/status.ts); null without the limits feature */
  limits: SiteLimitsStatus | null;
  /** the grid operator's server and the control in force (src/gridop/status-body.ts); null without `gridOperator:` */
  gridOperator: GridOperatorBody | null;
}

export interface StatusSources {
  site: Site;
  db: Database;
  clock: Clock;
  health: Health;
  live: LiveValues;
  version: string;
  /** the running features; the uplink's section is its health's connection */
  features?: Pick<FeatureList, 'get'>;
}

const iso = (ms: number) => new Date(ms).toISOString();

function mainStream(site: Site, id: string): string {
  const d = site.devices.get(id)!;
  return ownStreamId(d.config.role, id);
}

/** Sum of one channel over streams; null when none of them has a current value. */
function sum(values: (InstantValues | undefined)[], pick: (v: InstantValues) => number | undefined): number | null {
  let total: number | null = null;
  for (const v of values) {
    const x = v ? pick(v) : undefined;
    if (x !== undefined && Number.isFinite(x)) total = (total ?? 0) + x;
  }
  return total;
}

export function powerFlow(src: Pick<StatusSources, 'site' | 'live' | 'clock'>): PowerFlow {
  const now = src.clock.now();
  const streams = flowStreams(src.site);
  const cur = (ids: string[]) => ids.map((id) => src.live.current(id, now)?.values);
  const pv = sum(cur(streams.pv), (v) => v.power_W);
  // each inverter's aggregate of its blocks, and blocks on no inverter each alone
  const batteries = cur(streams.battery);
  const socs = batteries.map((v) => v?.soc).filter((s): s is number => s !== undefined);
  const grid = cur(streams.grid);
  const gridState = grid.find((v) => v?.state !== undefined)?.state ?? (grid.length > 0 ? 'unknown' : null);
  return {
    pvW: pv === null ? null : Math.max(0, -pv),
    batteryW: sum(batteries, (v) => v.power_W),
    batterySoc: socs.length > 0 ? socs.reduce((a, b) => a + b, 0) / socs.length : null,
    houseW: sum(cur(streams.house), (v) => v.power_W),
    gridW: sum(grid, (v) => v.power_W),
    gridState,
  };
}

export function statusView(src: StatusSources): StatusView {
  const { site, clock, live } = src;
  const now = clock.now();
  const devices: DeviceView[] = [...site.devices.values()].map((d) => ({
    id: d.config.id,
    name: d.config.name ?? null,
    role: d.config.role,
    online: d.online,
    lastSeen: d.lastSeen === null ? null : iso(d.lastSeen),
    lastError: d.lastError,
    errors: { ...d.errors },
    manufacturer: d.identity.manufacturer ?? null,
    model: d.identity.model ?? null,
    values: d.online ? (live.current(mainStream(site, d.config.id), now)?.values ?? null) : null,
  }));
  const up = src.features?.get('uplink')?.health?.().connection;
  const control = src.features?.get('control');
  // by name: the proxy's module is loaded only on a site that configures it
  const proxy = src.features?.get('modbus-proxy') as ModbusProxy | undefined;
  const limits = src.features?.get('limits');
  // by name too: the client's module is loaded only on a site with a grid operator
  const gridop = src.features?.get('gridop') as GridOperatorClient | undefined;
  return {
    site: { id: site.id, name: site.config.site.name, timezone: site.config.site.timezone },
    version: src.version,
    now: iso(now),
    health: src.health.report(),
    devices,
    flow: powerFlow(src),
    uplink: up ? { configured: true, ...up } : { configured: false },
    control: control instanceof Control ? control.status() : { enabled: false, storages: [] },
    modbusProxy: proxy ? proxy.status() : { ports: [] },
    limits: limits instanceof SiteLimitsFeature ? limits.status() : null,
    gridOperator: gridop ? gridOperatorBody(gridop.status()) : null,
    gridEvents: recentGridEvents(src.db, 10).map((e) => ({
      deviceId: e.deviceId,
      timestamp: iso(e.timestamp),
      state: e.state,
    })),
  };
}
