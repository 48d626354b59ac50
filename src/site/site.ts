import type { DeviceConfig, SiteConfig } from '../config/types.js';
import { type DeviceKind, isLiveChannel, LIVE_CHANNELS, type LiveChannelId, type Reading } from '../core/channels.js';
import type { DeviceRole } from '../core/device-role.js';
import type { DeviceIdentity } from '../core/identity.js';
import { DERIVED_CONSUMPTION, ROLES, type RoleStream } from '../core/roles.js';
import { type StreamDef, streamIds } from '../core/streams.js';
import type { ModbusErrorKind } from '../modbus/errors.js';

export interface DeviceState {
  config: DeviceConfig;
  kind: DeviceKind;
  identity: DeviceIdentity;
  online: boolean;
  lastSeen: number | null;
  lastError: string | null;
  /** failed requests by kind, since start (requests skipped while backing off are not counted) */
  errors: Record<ModbusErrorKind, number>;
  /** exception answers by Modbus exception code, e.g. { "2": 5 } */
  exceptionCodes: Record<string, number>;
  /** learned from the device: battery capacity in Wh */
  capacityWh?: number;
  /** learned from the device: MPPT modules (PV optimisers) behind an inverter */
  pvModules?: number;
  /** learned from the device: the live channels it reported, by stream id (docs/design.md "Live channels") */
  live?: Record<string, LiveChannelId[]>;
}

/** The live channels each reading carries, by stream id (what a poll tells of the device's sensors). */
export function liveChannelsOf(readings: readonly Reading[]): Record<string, LiveChannelId[]> {
  const out: Record<string, LiveChannelId[]> = {};
  for (const r of readings) {
    const ids = Object.keys(r.values).filter(isLiveChannel);
    if (ids.length > 0) out[r.streamId] = ids;
  }
  return out;
}

/**
 * The site as the gateway knows it: configured devices, what was learned from them, and the
 * telemetry streams that follow. Streams of PV optimisers appear once the inverter has told how
 * many it has.
 */
export class Site {
  readonly devices = new Map<string, DeviceState>();
  private streamCache: StreamDef[] | null = null;

  constructor(readonly config: SiteConfig) {
    for (const d of config.devices) {
      this.devices.set(d.id, {
        config: d,
        kind: ROLES[d.role].kind,
        identity: {},
        online: false,
        lastSeen: null,
        lastError: null,
        errors: { timeout: 0, exception: 0, connection: 0, crc: 0, decode: 0, protocol: 0 },
        exceptionCodes: {},
      });
    }
  }

  get id(): string {
    return this.config.site.id;
  }

  byRole(role: DeviceRole): DeviceState[] {
    return [...this.devices.values()].filter((d) => d.config.role === role);
  }

  /** batteries on an inverter's DC bus (a battery without `inverter` sits on the first inverter) */
  batteriesOf(inverterId: string): DeviceState[] {
    const firstInverter = this.byRole('inverter')[0]?.config.id;
    return this.byRole('battery').filter((b) => (b.config.inverter ?? firstInverter) === inverterId);
  }

  /** a device's poll period, ms (its own, or the site's) */
  pollPeriodMs(deviceId: string): number {
    const d = this.devices.get(deviceId)?.config;
    return (d?.pollIntervalSeconds ?? this.config.poll.intervalSeconds) * 1000;
  }

  streams(): StreamDef[] {
    if (this.streamCache) return this.streamCache;
    const out: StreamDef[] = [];
    const add = (
      s: Omit<RoleStream, 'id' | 'count'>,
      id: string,
      deviceId: string,
      periodMs: number,
      label = s.label,
      learned: readonly LiveChannelId[] = [],
    ) =>
      out.push({
        id,
        deviceId,
        deviceKind: s.deviceKind,
        label,
        role: s.role,
        channels: [...s.channels],
        ...(learned.length > 0 ? { live: s.live.filter((c) => learned.includes(c)) } : {}),
        energyFrom: s.energyFrom,
        pollPeriodMs: periodMs,
      });
    for (const d of this.devices.values()) {
      const id = d.config.id;
      const period = this.pollPeriodMs(id);
      for (const s of ROLES[d.config.role].streams) {
        const learned = (streamId: string) => d.live?.[streamId] ?? [];
        if (s.count === 'one') add(s, s.id(id, 0), id, period, s.label, learned(s.id(id, 0)));
        else if (s.count === 'perModule') {
          for (let n = 1; n <= (d.pvModules ?? 0); n++)
            add(s, s.id(id, n), id, period, `${s.label} ${n}`, learned(s.id(id, n)));
        } else {
          const blocks = this.batteriesOf(id);
          if (blocks.length === 0) continue;
          // the aggregate exists only in cycles where every block was read
          add(s, s.id(id, 0), id, Math.max(...blocks.map((b) => this.pollPeriodMs(b.config.id))));
        }
      }
    }
    const derived = this.derivedConsumptionSources();
    if (derived) {
      // it exists only in cycles where all its sources were read: it moves at the slowest one's pace
      const sources = [derived.gridMeter, ...derived.inverters];
      const period = Math.max(...sources.map((d) => this.pollPeriodMs(d.config.id)));
      // it belongs to the grid meter, so whoever may see the grid connection sees the house behind it
      add(DERIVED_CONSUMPTION, streamIds.consumptionDerived(this.id), derived.gridMeter.config.id, period);
    }
    this.streamCache = out;
    return out;
  }

  /**
   * Where the house consumption comes from when no meter measures it: the grid connection
   * point and every inverter's AC side (house = grid - inverter AC, docs/design.md signs). Undefined
   * when a consumption meter exists or no grid meter does.
   */
  derivedConsumptionSources(): { gridMeter: DeviceState; inverters: DeviceState[] } | undefined {
    const gridMeter = this.byRole('grid-meter')[0];
    if (!gridMeter || this.byRole('consumption-meter').length > 0) return undefined;
    return { gridMeter, inverters: this.byRole('inverter') };
  }

  stream(id: string): StreamDef | undefined {
    return this.streams().find((s) => s.id === id);
  }

  /**
   * Note what a device told about itself; returns true when the stream list changed. PV modules
   * only grow: an inverter asleep at night that lists fewer (or none) changes nothing, so the
   * streams, their history and Home Assistant's entities stay (docs/design.md "Field faults: what the numbers survive").
   * A device that comes back with another serial or model is another device: what was learned of
   * the old one goes.
   */
  learn(
    deviceId: string,
    facts: {
      identity?: DeviceIdentity;
      capacityWh?: number;
      pvModules?: number;
      live?: Record<string, readonly LiveChannelId[]>;
    },
  ): boolean {
    const d = this.devices.get(deviceId);
    if (!d) return false;
    const replaced = facts.identity !== undefined && identityChanged(d.identity, facts.identity);
    if (facts.identity) d.identity = facts.identity;
    if (facts.capacityWh !== undefined) d.capacityWh = facts.capacityWh;
    let changed = false;
    // a replaced device starts over: the sensors of the old one are not the new one's
    if (replaced && d.live) {
      delete d.live;
      changed = true;
    }
    const n = facts.pvModules;
    if (n !== undefined && n !== d.pvModules && (replaced || d.pvModules === undefined || n > d.pvModules)) {
      d.pvModules = n;
      changed = true;
    }
    // live channels only grow, like PV modules: a value missing from one poll (an inverter asleep)
    // keeps its entity, which shows unknown until the device reports it again
    for (const [streamId, ids] of Object.entries(facts.live ?? {})) {
      const known = d.live?.[streamId] ?? [];
      const added = ids.filter((c) => !known.includes(c));
      if (added.length === 0) continue;
      d.live = { ...d.live, [streamId]: LIVE_CHANNELS.filter((c) => known.includes(c) || added.includes(c)) };
      changed = true;
    }
    if (changed) this.streamCache = null;
    return changed;
  }

  markOnline(deviceId: string, ts: number): void {
    const d = this.devices.get(deviceId);
    if (!d) return;
    d.online = true;
    d.lastSeen = ts;
    d.lastError = null;
  }

  markFailed(
    deviceId: string,
    e: { kind: ModbusErrorKind; message: string; exceptionCode?: number; skipped?: boolean },
  ): void {
    const d = this.devices.get(deviceId);
    if (!d) return;
    d.online = false;
    d.lastError = `${e.kind}: ${e.message}`;
    if (e.skipped) return;
    d.errors[e.kind]++;
    if (e.exceptionCode !== undefined) d.exceptionCodes[e.exceptionCode] = (d.exceptionCodes[e.exceptionCode] ?? 0) + 1;
  }
}

/** Another serial or model than the one known (a first identity is not a change). */
export function identityChanged(before: DeviceIdentity, after: DeviceIdentity): boolean {
  if (before.serial === undefined && before.model === undefined) return false;
  return before.serial !== after.serial || before.model !== after.model;
}
