import { EventEmitter } from 'node:events';
import type { Reading, GridState } from './channels.js';

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

/** The typed bus between features: producers emit, edges subscribe; no feature calls a sibling's internals. */
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

export class EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(100);
  }

  on<K extends keyof BusEvents>(event: K, fn: (...args: BusEvents[K]) => void): () => void {
    this.emitter.on(event, fn as (...args: unknown[]) => void);
    return () => this.emitter.off(event, fn as (...args: unknown[]) => void);
  }

  emit<K extends keyof BusEvents>(event: K, ...args: BusEvents[K]): void {
    this.emitter.emit(event, ...args);
  }
}
