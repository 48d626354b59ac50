/**
 * The topology learned at run time (PV modules behind an inverter, the live channels a device
 * reports), saved when it changes and
 * given back to the site at the next start before any stream is built: a restart, or an inverter
 * asleep at night, changes no stream and no Home Assistant entity (docs/design.md "Field faults:
 * what the numbers survive").
 */
import type { Database } from 'better-sqlite3';
import { isLiveChannel } from '../core/channels.js';
import type { EventBus } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import { loadDeviceFacts, saveDeviceFacts } from '../store/device-facts.js';
import type { Site } from './site.js';

/** What earlier runs learned, into `site` (devices no longer configured are left out). */
export function restoreLearned(db: Database, site: Site): void {
  for (const [id, f] of loadDeviceFacts(db)) {
    if (!site.devices.has(id)) continue;
    if (f.pvModules !== null) site.learn(id, { pvModules: f.pvModules });
    // only ids the channel table still has: a channel renamed since is learned again at the first poll
    const live = Object.fromEntries(Object.entries(f.live ?? {}).map(([s, ids]) => [s, ids.filter(isLiveChannel)]));
    site.learn(id, { live });
  }
}

export class LearnedTopology implements Feature {
  readonly name = 'learned topology';
  private off: (() => void) | null = null;

  constructor(private readonly deps: { db: Database; site: Site; bus: EventBus }) {}

  start(): void {
    const { db, site, bus } = this.deps;
    this.off = bus.on('streamsChanged', ({ deviceId }) => {
      const d = site.devices.get(deviceId);
      if (d) saveDeviceFacts(db, deviceId, { pvModules: d.pvModules ?? null, live: d.live ?? null });
    });
  }

  stop(): void {
    this.off?.();
    this.off = null;
  }
}
