import type { MqttClient } from 'mqtt';
import { type OutboxRow, withSeq } from '../store/outbox.js';
import { isStorageFault } from '../store/storage-faults.js';
import { formatInstant } from '../telemetry/interval.js';
import type { Pending, PendingRow } from './pending.js';
import { topicOf } from './topics.js';

/**
 * `written` (docs/mqtt-contract.md): when the row went into the outbox, so it grows with seq
 * even on a resync copy whose `time` is old; consumers compute a hole's resync interval from it.
 */
const withWritten = (row: OutboxRow): string =>
  `{"written":${JSON.stringify(formatInstant(row.createdAt))},${row.body.slice(1)}`;

/** A message's payload as published: its seq and `written` put in its body. */
export const wireBody = (row: OutboxRow): string => withSeq(row.seq, withWritten(row));

export interface DrainOptions {
  prefix: string;
  /** unacknowledged messages at once */
  maxInflight: number;
  /** messages per real second */
  ratePerSecond: number;
  /** a PUBACK with an MQTT 5 failure reason (the message stays in the outbox) */
  onRefused: (seq: number, topic: string, err: Error) => void;
  /** reading or deleting outbox rows failed inside a PUBACK callback or a timer (logged by the caller) */
  onFault: (err: unknown) => void;
}

export const READ_AHEAD = 256;
/**
 * Acknowledged rows are deleted in one transaction at most this long after their PUBACK: one
 * commit per batch rather than per message. A crash inside the window only means those few
 * messages go out once more, which seq de-duplication absorbs.
 */
const FLUSH_MS = 50;

/**
 * Publishes what waits (pending.ts: the outbox's rows and the telemetry stamped on the buckets)
 * oldest first at QoS 1 over one connection at a time, with at most `maxInflight` unacknowledged
 * and at most `ratePerSecond` per second (a token bucket on real time, so a long backlog is sent
 * at a pace the broker and the site's own work can bear). A message is given up only after its
 * PUBACK (a row deleted, telemetry's ack position moved); that is batched (FLUSH_MS). A lost
 * connection forgets what was in flight: those messages still wait and go again on the next one.
 */
export class Drainer {
  private client: MqttClient | null = null;
  /** bumped per connection, so acknowledgements of an old one are ignored */
  private generation = 0;
  private window = 1;
  private cursor = 0;
  private buffer: PendingRow[] = [];
  private readonly inflight = new Set<number>();
  private acked: PendingRow[] = [];
  private flushQueued = false;
  /** the data disk refused the last delete of acknowledged rows: reported once, tried again on the timer */
  private storageFaulted = false;
  private tokens: number;
  private refilledAt = performance.now();
  private refillTimer: NodeJS.Timeout | null = null;
  private pumping = false;
  /** rows from this seq on wait for release() (publish jitter) */
  private holdFrom = Infinity;
  private paused = false;
  delivered = 0;

  constructor(
    private readonly pending: Pending,
    private readonly opts: DrainOptions,
  ) {
    this.tokens = this.burst;
  }

  private get burst(): number {
    return Math.max(1, Math.ceil(this.opts.ratePerSecond / 10));
  }

  get inFlight(): number {
    return this.inflight.size;
  }

  /** A connection is up: start from the oldest undelivered message. `receiveMaximum` is the broker's (MQTT 5 CONNACK). */
  attach(client: MqttClient, receiveMaximum: number | undefined): void {
    // rows a full disk kept from deleting go once more on this connection (seq de-duplication)
    this.contained(() => this.flush());
    this.client = client;
    this.generation++;
    this.window = Math.max(1, Math.min(this.opts.maxInflight, receiveMaximum ?? Infinity));
    this.cursor = 0;
    this.buffer = [];
    this.inflight.clear();
    this.pending.restart();
    this.pump();
  }

  detach(): void {
    this.client = null;
    this.generation++;
    this.inflight.clear();
    this.buffer = [];
    if (this.refillTimer) clearTimeout(this.refillTimer);
    this.refillTimer = null;
  }

  /** New rows were committed. */
  kick(): void {
    this.contained(() => this.pump());
  }

  /** Rows from `seq` on are not published until release(); a hold already in place keeps its start. */
  hold(seq: number): void {
    this.holdFrom = Math.min(this.holdFrom, seq);
  }

  release(): void {
    this.holdFrom = Infinity;
    this.kick();
  }

  /** Nothing is published until resume(), whatever holds and releases happen meanwhile. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.kick();
  }

  /** Deletes the acknowledged rows now (also done once per I/O turn by itself). */
  flush(): void {
    this.flushQueued = false;
    if (this.acked.length === 0) return;
    const seqs = this.acked;
    this.acked = [];
    try {
      this.pending.ack(seqs);
    } catch (err) {
      // a full data disk: they stay acknowledged and are deleted by a later flush, rather than
      // sent all over again on the next connection
      if (isStorageFault(err)) this.acked = seqs.concat(this.acked);
      throw err;
    }
    this.storageFaulted = false;
  }

  private next(): PendingRow | undefined {
    if (this.buffer.length === 0) {
      // rows a bound drops after this read may still go out once; they are not lost data
      this.buffer = this.pending.read(this.cursor, READ_AHEAD);
    }
    return this.buffer[0];
  }

  private takeToken(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.opts.ratePerSecond) / 1000);
    this.refilledAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    if (!this.refillTimer) {
      const wait = Math.ceil(((1 - this.tokens) * 1000) / this.opts.ratePerSecond);
      this.refillTimer = setTimeout(() => {
        this.refillTimer = null;
        this.contained(() => this.pump());
      }, wait);
    }
    return false;
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.client && !this.paused && this.inflight.size < this.window) {
        const row = this.next();
        if (!row || row.seq >= this.holdFrom || !this.takeToken()) break;
        this.buffer.shift();
        this.cursor = row.seq;
        this.send(this.client, row);
      }
    } finally {
      this.pumping = false;
    }
  }

  private send(client: MqttClient, row: PendingRow): void {
    const gen = this.generation;
    const topic = topicOf(this.opts.prefix, row.topic);
    this.inflight.add(row.seq);
    client.publish(topic, wireBody(row), { qos: 1, retain: row.retain }, (err) =>
      this.contained(() => {
        if (gen !== this.generation) return;
        this.inflight.delete(row.seq);
        if (err) {
          // MQTT 5 PUBACK with a failure reason (e.g. not authorized for the topic): keep the row
          // for the next connection rather than lose it; the health shows why
          if (typeof (err as { code?: unknown }).code === 'number') this.opts.onRefused(row.seq, topic, err);
        } else {
          this.acked.push(row);
          this.delivered++;
          // on a disk that refuses the delete, only the timer tries again (not every PUBACK), and
          // publishing goes on either way
          if (this.acked.length >= READ_AHEAD && !this.storageFaulted) this.contained(() => this.flush());
          else if (!this.flushQueued) {
            this.flushQueued = true;
            setTimeout(() => this.contained(() => this.flush()), FLUSH_MS).unref();
          }
        }
        this.pump();
      }),
    );
  }

  /**
   * The outbox is read and trimmed from mqtt.js's PUBACK callbacks and from timers: a store fault
   * there would reach the process as an uncaught exception. It is reported instead; the rows
   * stay in the outbox and go at the next kick or connection (acknowledged ones not yet deleted
   * may go once more, which seq de-duplication absorbs).
   */
  private contained(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      // a full data disk is said once until a delete works again, not at every batch of PUBACKs
      if (isStorageFault(err)) {
        if (this.storageFaulted) return;
        this.storageFaulted = true;
      }
      this.opts.onFault(err);
    }
  }
}
