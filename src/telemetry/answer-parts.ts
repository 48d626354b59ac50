import type { Database } from 'better-sqlite3';
import { bucketsFinal } from '../store/buckets.js';
import { entriesSplit, prepareTelemetry, type TelemetryQuery } from './query.js';

const DAY_MS = 86_400_000;

/**
 * The telemetry answer's JSON, made from parts kept per closed day: a question not asked before
 * (another month, the first after a bucket closes) is mostly days already answered, and a day
 * whose buckets are all closed never changes. Its entries' JSON is made once, on the first
 * question that covers the whole day, and kept; later questions join kept days and read, build
 * and serialise only the days not kept (the newest, open one; a part-day at an edge).
 *
 * A part is a UTC day of PT15M or PT1H periods, or one P1D period (a local day). It is kept
 * while `bucketsFinal` (src/store/buckets.ts) says the stream's buckets before it are unchanged:
 * a bucket written below the stream's newest, or retention's roll-up, makes every part made
 * before it void. Bounded in bytes, least recently used out.
 */
export class AnswerParts {
  private readonly kept = new Map<string, { stamp: string; json: string }>();
  private bytes = 0;
  made = 0;
  reused = 0;

  constructor(
    private readonly maxBytes = 4 * 1024 * 1024,
    /** periods read from the store in one go: a page of a streamed answer */
    private readonly periodsPerRead = 96,
  ) {}

  /**
   * The entries of `q` as JSON text, in pieces (each entries joined by commas, never empty),
   * ascending: joined by commas and put in `{"entries":[…]}` they are the bytes of
   * `JSON.stringify({ entries: queryTelemetry(db, q) })`. Lazy: a piece is read when asked for.
   */
  *pieces(db: Database, q: TelemetryQuery): Generator<string> {
    const prep = prepareTelemetry(db, q);
    if (!prep) return;
    const { bounds } = prep;
    const { finalBeforeMs, stamp } = bucketsFinal(db, prep.key);
    const daily = q.resolution === 'P1D';
    const shape = `${prep.key}|${q.deviceId}|${q.deviceKind}|${q.resolution}|${daily ? q.timezone : ''}|${prep.plan.shape.names.join(',')}|${prep.plan.shape.fractionAt}`;
    // consecutive parts not kept: [first period, end period, key when it is to be kept]
    let todo: [number, number, string | undefined][] = [];
    let todoPeriods = 0;
    const self = this;
    function* make(): Generator<string> {
      if (todo.length === 0) return;
      const from = todo[0]![0];
      const cuts = [...todo.map((t) => t[0] - from), todo[todo.length - 1]![1] - from];
      const split = entriesSplit(db, prep!, q, bounds.slice(from, todo[todo.length - 1]![1] + 1), cuts);
      const batch = todo;
      todo = [];
      todoPeriods = 0;
      for (let k = 0; k < batch.length; k++) {
        const entries = split[k]!;
        let json = '';
        for (let e = 0; e < entries.length; e++) json += (e === 0 ? '' : ',') + JSON.stringify(entries[e]);
        const key = batch[k]![2];
        if (key !== undefined) self.keep(key, stamp, json);
        if (json) yield json;
      }
    }
    const n = bounds.length - 1;
    for (let i = 0; i < n; ) {
      const dayStart = daily ? bounds[i]! : Math.floor(bounds[i]! / DAY_MS) * DAY_MS;
      const dayEnd = daily ? bounds[i + 1]! : dayStart + DAY_MS;
      let j = i + 1;
      while (j < n && bounds[j]! < dayEnd) j++;
      // only a whole day whose buckets are final is kept; a part-day at an edge is made each time
      const key =
        bounds[i] === dayStart && bounds[j] === dayEnd && dayEnd <= finalBeforeMs ? `${shape}|${dayStart}` : undefined;
      const kept = key === undefined ? undefined : this.get(key, stamp);
      if (kept !== undefined) {
        yield* make();
        if (kept) yield kept;
      } else {
        todo.push([i, j, key]);
        todoPeriods += j - i;
        if (todoPeriods >= this.periodsPerRead) yield* make();
      }
      i = j;
    }
    yield* make();
  }

  get size(): { parts: number; bytes: number } {
    return { parts: this.kept.size, bytes: this.bytes };
  }

  private get(key: string, stamp: string): string | undefined {
    const k = this.kept.get(key);
    if (!k) return undefined;
    this.kept.delete(key);
    if (k.stamp !== stamp) {
      this.bytes -= k.json.length;
      return undefined;
    }
    // most recently used goes last
    this.kept.set(key, k);
    this.reused++;
    return k.json;
  }

  private keep(key: string, stamp: string, json: string): void {
    const old = this.kept.get(key);
    if (old) {
      this.kept.delete(key);
      this.bytes -= old.json.length;
    }
    this.kept.set(key, { stamp, json });
    this.bytes += json.length;
    this.made++;
    for (const [k, e] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(k);
      this.bytes -= e.json.length;
    }
  }
}
