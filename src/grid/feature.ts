import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { EventBus } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import { streamIds } from '../core/streams.js';
import type { Site } from '../site/site.js';
import { writeTx } from '../store/db.js';
import { insertGridEvent, lastGridState } from '../store/grid-events.js';
import { GridWatch } from './watch.js';

/**
 * Watches the grid meter's readings for relay changes: each debounced change is stored (with
 * what `gridEventRecording` listeners write in its transaction), then announced on the bus as
 * `gridEvent` (the WebSocket grid-events stream subscribes). A site
 * without a grid meter has no relay to watch.
 */
export class GridFeature implements Feature {
  readonly name = 'grid';
  private off: (() => void) | null = null;

  constructor(private readonly deps: { site: Site; db: Database; bus: EventBus; log: Logger; debounce: number }) {}

  start(): void {
    const meter = this.deps.site.byRole('grid-meter')[0];
    if (!meter) return;
    const deviceId = meter.config.id;
    const watch = new GridWatch({
      streamId: streamIds.gridMeter(deviceId),
      deviceId,
      debounce: this.deps.debounce,
      initial: lastGridState(this.deps.db, deviceId),
    });
    this.off = this.deps.bus.on('reading', (r) => {
      const before = watch.state;
      const e = watch.observe(r);
      if (before === null && watch.state !== null) {
        insertGridEvent(this.deps.db, { deviceId, timestamp: r.ts, state: watch.state }, false);
      }
      if (!e) return;
      writeTx(this.deps.db, () => {
        insertGridEvent(this.deps.db, e);
        // the uplink's outbox row commits with the event, or neither does
        this.deps.bus.runInTransaction('gridEventRecording', e);
      });
      this.deps.log.info(
        { device: e.deviceId, state: e.state, at: new Date(e.timestamp).toISOString() },
        'grid state changed',
      );
      this.deps.bus.emit('gridEvent', e);
    });
  }

  stop(): void {
    this.off?.();
    this.off = null;
  }
}
