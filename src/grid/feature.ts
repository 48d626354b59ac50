import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { EventBus, GridEvent } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import { streamIds } from '../core/streams.js';
import type { TimeLabels } from '../core/time-labels.js';
import type { Site } from '../site/site.js';
import { writeTx } from '../store/db.js';
import { insertGridEvent, lastGridState, type StoredGridEvent } from '../store/grid-events.js';
import { RetriedWrite } from '../store/storage-faults.js';
import { GridWatch } from './watch.js';

/**
 * Relay changes a full disk kept from the database, at most this many, oldest dropped first: a
 * relay flapping for a day on a full disk must not grow the heap without end. Real sites see a few
 * changes a year; a thousand is days of flapping.
 */
export const MAX_WAITING_GRID_EVENTS = 1000;

type Waiting = { event: GridEvent; announced: true } | { event: StoredGridEvent; announced: false };

/**
 * Watches the grid meter's readings for relay changes: each debounced change is stored with what
 * `gridEventRecording` listeners write in its transaction (the uplink's outbox row), then announced on the bus as `gridEvent` (the WebSocket
 * grid-events stream subscribes). A store that fails for want of storage (a full disk) still
 * announces the change (a relay that opened is news now) and keeps the event in memory, tried
 * again in order at every grid meter reading, so the database and the uplink get every change
 * once there is room (docs/design.md "Field faults: what the numbers survive").
 * A site without a grid meter has no relay to watch.
 */
export class GridFeature implements Feature {
  readonly name = 'grid';
  private off: (() => void) | null = null;
  private readonly waiting: Waiting[] = [];
  private readonly stores: RetriedWrite;

  constructor(
    private readonly deps: {
      site: Site;
      db: Database;
      bus: EventBus;
      log: Logger;
      debounce: number;
      /** the outcome of each store (ops' Health: a failed write makes the main loop unhealthy) */
      writes?: { noteWrite(err?: unknown): void };
      /**
       * the clock rules (core/time-labels.ts): an event labelled after a forward step waits until
       * the step is confirmed, and is dropped once it was undone, so none is stored or sent upstream
       * labelled in a time that was not
       */
      labels?: Pick<TimeLabels, 'heldFrom' | 'future'>;
    },
  ) {
    this.stores = new RetriedWrite({
      log: deps.log,
      refused: 'storing a grid event failed; it waits in memory and is retried at every meter reading',
      again: 'storing grid events works again: the events that waited are stored',
      outcome: (err) => deps.writes?.noteWrite(err),
    });
  }

  start(): void {
    const meter = this.deps.site.byRole('grid-meter')[0];
    if (!meter) return;
    const deviceId = meter.config.id;
    const streamId = streamIds.gridMeter(deviceId);
    const watch = new GridWatch({
      streamId,
      deviceId,
      debounce: this.deps.debounce,
      initial: lastGridState(this.deps.db, deviceId),
    });
    this.off = this.deps.bus.on('reading', (r) => {
      if (r.streamId !== streamId) return;
      const before = watch.state;
      const e = watch.observe(r);
      if (before === null && watch.state !== null) {
        this.wait({ event: { deviceId, timestamp: r.ts, state: watch.state }, announced: false });
      }
      if (e) this.wait({ event: e, announced: true });
      // throws (after dropping the event) on anything but a storage fault: a bug in a recording
      // listener rolls its event back, unannounced, and counts as the grid feature's failure
      this.storeWaiting();
      if (!e) return;
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
    if (this.waiting.length > 0)
      this.deps.log.error({ events: this.waiting.length }, 'grid events not stored at stop (the disk stayed full)');
  }

  /** events not yet in the database, oldest first */
  get waitingCount(): number {
    return this.waiting.length;
  }

  private wait(w: Waiting): void {
    this.waiting.push(w);
    if (this.waiting.length > MAX_WAITING_GRID_EVENTS) {
      const dropped = this.waiting.shift();
      this.deps.log.error(
        { dropped: dropped?.event },
        'too many grid events waiting for room on disk: the oldest is dropped',
      );
    }
  }

  private storeWaiting(): void {
    const { db, bus } = this.deps;
    const { labels } = this.deps;
    while (this.waiting.length > 0) {
      const w = this.waiting[0] as Waiting;
      const held = labels?.heldFrom() ?? null;
      if (held !== null && w.event.timestamp >= held) return;
      if (labels?.future(w.event.timestamp)) {
        this.waiting.shift();
        this.deps.log.warn(
          { state: w.event.state, at: new Date(w.event.timestamp).toISOString() },
          'grid event labelled in a clock step since undone: not stored or sent',
        );
        continue;
      }
      let stored: boolean;
      try {
        stored = this.stores.attempt(() => {
          if (!w.announced) return insertGridEvent(db, w.event, false);
          const e = w.event;
          writeTx(db, () => {
            insertGridEvent(db, e);
            // the uplink's outbox row commits with the event, or neither does
            bus.runInTransaction('gridEventRecording', e);
          });
        });
      } catch (err) {
        this.waiting.shift();
        throw err;
      }
      if (!stored) return;
      this.waiting.shift();
    }
  }
}
