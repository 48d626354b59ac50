import type { Logger } from 'pino';
import type { GridState, Reading } from './channels.js';
import { createLogger } from './log.js';

/** A 15-minute bucket that has just been closed and stored. */
export interface ClosedBucket {
  streamId: string;
  /** bucket start, ms epoch (UTC, aligned to :00/:15/:30/:45) */
  start: number;
  end: number;
  values: Record<string, number | string>;
}

export interface GridEvent {
  /** the grid meter's device id: storage and partner visibility are per device */
  deviceId: string;
  /**
   * the connection point's telemetry stream id, which the topology lists and whose telemetry
   * carries `state`: the id events are sent under (docs/design.md "grid events")
   */
  streamId: string;
  timestamp: number;
  state: GridState;
}

export interface DeviceHealthEvent {
  deviceId: string;
  online: boolean;
  lastSeen: number | null;
  error?: string;
}

/**
 * The typed bus between features: producers emit, edges subscribe; no feature calls a sibling's
 * internals. These events tell what already happened, so each listener is isolated (see emit()).
 */
export interface BusEvents {
  reading: [Reading];
  bucketsClosed: [{ start: number; end: number; buckets: ClosedBucket[] }];
  gridEvent: [GridEvent];
  deviceHealth: [DeviceHealthEvent];
  /** a device told something that adds or removes streams (e.g. its number of PV optimisers) */
  streamsChanged: [{ deviceId: string }];
  /** one device poll ended: how long it took (real ms) and whether it answered (metrics) */
  devicePolled: [{ deviceId: string; ms: number; ok: boolean }];
  /** the database was found damaged at start, moved aside and replaced by a fresh one (src/ops/integrity.ts) */
  databaseReplaced: [{ movedTo: string; reason: string; at: number }];
}

/**
 * Events announced inside the store transaction that writes their data: a listener writes to the
 * same database (the uplink's outbox row) and its rows commit with the data or not at all.
 */
export interface TransactionEvents {
  /** buckets being written by a close, oldest first; `bucketsClosed` follows after the commit */
  bucketsClosing: [readonly ClosedBucket[]];
  /** a grid event being stored; `gridEvent` follows after the commit */
  gridEventRecording: [GridEvent];
}

type Listener = (...args: never[]) => unknown;
/** real ms between two log lines about the same failing listener */
const LOG_EVERY_MS = 60_000;
interface Entry {
  feature: string;
  fn: Listener;
}

/** The listener table, failure counts and log that every scoped view of one bus shares. */
class Hub {
  readonly listeners = new Map<string, Entry[]>();
  readonly inTransaction = new Map<string, Entry[]>();
  readonly failures = new Map<string, ListenerFailures & { loggedAt: number }>();

  constructor(readonly log: Logger) {}

  add(table: Map<string, Entry[]>, event: string, entry: Entry): () => void {
    // a copy on every change, so a listener that unsubscribes during an emit does not skip its neighbour
    table.set(event, [...(table.get(event) ?? []), entry]);
    return () =>
      table.set(
        event,
        (table.get(event) ?? []).filter((e) => e !== entry),
      );
  }

  failed(event: string, feature: string, err: unknown): void {
    const key = `${event}\0${feature}`;
    const seen = this.failures.get(key) ?? { event, feature, count: 0, loggedAt: -Infinity };
    seen.count++;
    this.failures.set(key, seen);
    // a listener that fails on every reading would write a stack per poll to the SD card: the first
    // failure is logged, then one line a minute with the count (the metric counts every one)
    const now = performance.now();
    if (now - seen.loggedAt < LOG_EVERY_MS) return;
    seen.loggedAt = now;
    const msg = `a ${feature} listener of '${event}' failed; the other listeners still run`;
    this.log.error({ err, event, feature, failures: seen.count }, msg);
  }
}

/** One listener's failures, for the `sitegw_event_listener_failures_total` counter. */
export interface ListenerFailures {
  event: string;
  feature: string;
  count: number;
}

/**
 * The bus, seen by one feature: `as(name)` gives another feature its own view of the same bus, so
 * a listener's failure names the feature that registered it.
 */
export class EventBus {
  private hub: Hub;
  /** the feature that registers listeners through this view */
  private feature = 'unnamed';

  /** `log` hears of failed listeners (the daemon's log; a test's bus logs to stdout). */
  constructor(log: Logger = createLogger()) {
    this.hub = new Hub(log);
  }

  /** The same bus for the feature `name`: its listeners are logged and counted under that name. */
  as(name: string): EventBus {
    const view = new EventBus(this.hub.log);
    view.hub = this.hub;
    view.feature = name;
    return view;
  }

  on<K extends keyof BusEvents>(event: K, fn: (...args: BusEvents[K]) => unknown): () => void {
    return this.hub.add(this.hub.listeners, event, { feature: this.feature, fn });
  }

  /**
   * Runs every listener of `event`. One that throws (or whose promise rejects) is logged with the
   * event and its feature and counted; the others and the emitter go on, so a faulty feature cannot
   * stop the bucketer, the WebSocket or the rest of a poll cycle from hearing the same reading.
   */
  emit<K extends keyof BusEvents>(event: K, ...args: BusEvents[K]): void {
    for (const { feature, fn } of this.hub.listeners.get(event) ?? []) {
      try {
        const out = (fn as (...a: BusEvents[K]) => unknown)(...args);
        if (out instanceof Promise) out.catch((err: unknown) => this.hub.failed(event, feature, err));
      } catch (err) {
        this.hub.failed(event, feature, err);
      }
    }
  }

  /**
   * Registers a listener that runs synchronously inside the transaction writing the event's data
   * (see TransactionEvents). Unlike on(), a listener that throws is NOT isolated: the error rolls
   * the whole transaction back, data included, which is the point: its rows never commit without
   * the data nor the data without them, and the producer writes both again later.
   */
  inTransaction<K extends keyof TransactionEvents>(event: K, fn: (...args: TransactionEvents[K]) => void): () => void {
    return this.hub.add(this.hub.inTransaction, event, { feature: this.feature, fn });
  }

  /** For the producer, inside its transaction: runs the listeners in order; the first throw ends it. */
  runInTransaction<K extends keyof TransactionEvents>(event: K, ...args: TransactionEvents[K]): void {
    for (const { fn } of this.hub.inTransaction.get(event) ?? []) (fn as (...a: TransactionEvents[K]) => void)(...args);
  }

  /** Failed listener calls since start, by event and feature. */
  listenerFailures(): ListenerFailures[] {
    return [...this.hub.failures.values()].map(({ event, feature, count }) => ({ event, feature, count }));
  }

  /**
   * Every event and feature that has a listener now or failed before, with its failures (0 for
   * none): a counter's series exists from the start, so `rate()` and `increase()` see the first
   * failure as one instead of a series appearing already at 1.
   */
  listenerSeries(): ListenerFailures[] {
    const out = new Map<string, ListenerFailures>();
    for (const [event, entries] of this.hub.listeners)
      for (const { feature } of entries) out.set(`${event}\0${feature}`, { event, feature, count: 0 });
    for (const [key, { event, feature, count }] of this.hub.failures) out.set(key, { event, feature, count });
    return [...out.values()];
  }
}
