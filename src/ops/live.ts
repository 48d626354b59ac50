/**
 * The newest reading of every stream, for the status page. A value older than three poll
 * periods of its stream (the hold limit of docs/design.md) is no longer current and is not shown.
 */
import type { InstantValues, Reading } from '../core/channels.js';
import type { EventBus } from '../core/events.js';
import type { Site } from '../site/site.js';

export class LiveValues {
  private readonly latest = new Map<string, Reading>();
  private off: (() => void) | null = null;

  constructor(
    private readonly bus: EventBus,
    private readonly site: Site,
  ) {}

  start(): void {
    this.off ??= this.bus.on('reading', (r) => {
      const known = this.site.stream(r.streamId);
      // only streams the site has: the map cannot grow past the stream set
      if (known) this.latest.set(r.streamId, r);
    });
  }

  stop(): void {
    this.off?.();
    this.off = null;
  }

  /** The stream's values if they are still current at `now` (daemon clock). */
  current(streamId: string, now: number): { ts: number; values: InstantValues } | undefined {
    const r = this.latest.get(streamId);
    const def = this.site.stream(streamId);
    if (!r || !def) return undefined;
    const period = def.pollPeriodMs ?? this.site.config.poll.intervalSeconds * 1000;
    if (now - r.ts > 3 * period) return undefined;
    return { ts: r.ts, values: r.values };
  }
}
