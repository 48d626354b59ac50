/**
 * The topology learned at run time (PV modules behind an inverter, the live channels a device
 * reports), saved when it changes and
 * given back to the site at the next start before any stream is built: a restart, or an inverter
 * asleep at night, changes no stream and no Home Assistant entity (docs/design.md "Field faults:
 * what the numbers survive").
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { isLiveChannel } from '../core/channels.js';
import type { EventBus } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import { type DeviceFacts, loadDeviceFacts, saveDeviceFacts } from '../store/device-facts.js';
import { RetriedWrite } from '../store/storage-faults.js';
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

/**
 * Saves what the site learned whenever its streams change. A save the data disk refuses (full,
 * read-only) keeps the device's facts in memory, the latest per device, and tries them again at
 * every reading until they are stored (docs/design.md "Field faults: what the numbers survive"):
 * dropped, the next start would build fewer streams and Home Assistant entities than the site has.
 */
export class LearnedTopology implements Feature {
  readonly name = 'learned topology';
  private off: (() => void)[] = [];
  private readonly waiting = new Map<string, DeviceFacts>();
  private readonly saves: RetriedWrite;

  constructor(private readonly deps: { db: Database; site: Site; bus: EventBus; log?: Logger }) {
    this.saves = new RetriedWrite({
      log: deps.log,
      refused: 'saving the learned topology failed; it waits in memory and is retried at every reading',
      again: 'saving the learned topology works again',
    });
  }

  start(): void {
    const { site, bus } = this.deps;
    this.off = [
      bus.on('streamsChanged', ({ deviceId }) => {
        const d = site.devices.get(deviceId);
        if (d) this.waiting.set(deviceId, { pvModules: d.pvModules ?? null, live: d.live ?? null });
        this.saveWaiting();
      }),
      bus.on('reading', () => {
        if (this.waiting.size > 0) this.saveWaiting();
      }),
    ];
  }

  stop(): void {
    for (const off of this.off.splice(0)) off();
    if (this.waiting.size > 0)
      this.deps.log?.error(
        { devices: [...this.waiting.keys()] },
        'learned topology not saved at stop (the disk stayed full)',
      );
  }

  /** devices whose learned facts wait for the disk */
  get waitingCount(): number {
    return this.waiting.size;
  }

  private saveWaiting(): void {
    for (const [deviceId, facts] of this.waiting) {
      let saved: boolean;
      try {
        saved = this.saves.attempt(() => saveDeviceFacts(this.deps.db, deviceId, facts));
      } catch (err) {
        this.waiting.delete(deviceId);
        throw err;
      }
      if (!saved) return;
      this.waiting.delete(deviceId);
    }
  }
}
