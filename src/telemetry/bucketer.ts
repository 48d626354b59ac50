import type { Database } from 'better-sqlite3';
import {
  CHANNEL_BY_ID,
  CHANNEL_TABLE,
  LAST_CHANNELS,
  type LastChannel,
  POWER_CHANNELS,
  type Reading,
} from '../core/channels.js';
import type { ClosedBucket, EventBus } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import type { StreamDef } from '../core/streams.js';
import { type BucketRow, foldBuckets, insertBucket } from '../store/buckets.js';
import { writeTx } from '../store/db.js';
import type { StoredEnergyState } from '../store/energy-state.js';
import {
  durably,
  loadEnergyFloors,
  loadEnergyStates,
  saveEnergyFloor,
  saveEnergyState,
  syncToDisk,
} from '../store/energy-state.js';
import { saveOpenBuckets, takeOpenBuckets } from '../store/open-buckets.js';
import { isStorageFault } from '../store/storage-faults.js';
import { streamKey } from '../store/streams.js';
import { BUCKET_MS, floorToBucket } from './align.js';
import { type CounterJudgeStats, EnergyTracker, emptyEnergyState, withFloor } from './energy.js';
import { EnergyKeeper } from './energy-keeper.js';
import { round2 } from './round.js';
import { restoredRun, type SavedRun } from './saved-run.js';

export interface BucketerOptions {
  db: Database;
  streams: StreamDef[];
  pollPeriodMs: number;
  bus?: EventBus;
  /**
   * where the life's energy counts are kept every KEEP_MS of readings (store/energy-keep.ts: a file
   * in memory, outliving a kill); none: only the durable saves carry them across a kill
   */
  liveStateFile?: string;
  /** the database was created by this start (no file before): what the keep file holds is another database's */
  newDatabase?: boolean;
  /** real ms between keeps at least (default KEEP_REAL_MS); tests that feed readings at once set 0 */
  keepRealMs?: number;
}

export interface BucketerStats {
  /** readings accepted into a bucket */
  ingested: number;
  /** readings for a bucket that was already closed */
  lateDropped: number;
  /** readings not newer than the stream's previous one (duplicates, reordering) */
  outOfOrderDropped: number;
  /** readings for a stream the bucketer was not given */
  unknownStream: number;
  bucketsWritten: number;
  /** energy counts saved between bucket closes (docs/design.md "Field faults: what the numbers survive") */
  energySaves: number;
  /** saves between bucket closes that failed (disk full, read-only): live views keep the older counts */
  energySaveFailures: number;
  /** device counter reads held as implausible, confirmed as resets or replacements, taken as wraps */
  counters: CounterJudgeStats;
}

type EnergyColumns = { energyIn: number | null; energyOut: number | null };

/** How long one sample stands for its stream: beyond this the stream is in a gap (docs/design.md). */
const HOLD_POLL_PERIODS = 3;

const NPOWER = POWER_CHANNELS.length;

/** The bucket being filled for one stream. */
export interface OpenBucket extends LastValues {
  start: number;
  end: number;
  samples: number;
  coveredMs: number;
  /** per POWER_CHANNELS index: ∫ power dt (W·ms) and the ms it was held for */
  sum: number[];
  cov: number[];
}

/**
 * The last value of each 'last' channel, by channel id (soc, soh, state), null before one; on
 * the open bucket itself, so a saved run's JSON keeps them where it always had them (open.soc).
 */
export type LastValues = Record<LastChannel, number | string | null>;
const noLastValues = (): LastValues => Object.fromEntries(LAST_CHANNELS.map((c) => [c.id, null])) as LastValues;

/** A bucket that is complete but not yet written (a later reading arrived before closeUntil). */
interface DoneBucket {
  stream: StreamRun;
  row: BucketRow;
}

interface StreamRun {
  def: StreamDef;
  key: number;
  /** POWER_CHANNELS indexes this stream carries */
  power: number[];
  /** the 'last' channels this stream carries */
  last: typeof LAST_CHANNELS;
  hasIn: boolean;
  hasOut: boolean;
  tracker: EnergyTracker | null;
  /** the energy columns as last saved: what live views may show (they survive any stop) */
  saved: EnergyColumns;
  /** a reading arrived since start: before it, the restored counts are not shown as current */
  confirmed: boolean;
  /** confirmed, but its counts not saved since: the next live view saves them at once */
  fresh: boolean;
  /** how long a sample holds: 3 poll periods of this stream's device */
  holdMs: number;
  /** no longer in the stream set: takes no readings, leaves once its buckets are written */
  retired: boolean;
  heldValue: number[];
  heldAt: number[];
  /** ts of the last accepted reading */
  lastTs: number;
  /** time up to which held values have been accounted into buckets */
  cursor: number;
  open: OpenBucket | null;
  done: DoneBucket[];
}

/**
 * Turns readings into 15-minute buckets. Time comes only from readings and closeUntil(), never
 * from the wall clock, so the daemon (on its scaled clock) and history pre-fill (on simulated
 * time) drive it the same way.
 *
 * Power channels are time-weighted means with a zero-order hold: each sample holds until the
 * next one, at most HOLD_POLL_PERIODS poll periods, split exactly at bucket boundaries (a hold
 * from the previous bucket counts into this one). covered_ms is the time held by any sample,
 * the weight used by rollups. soc, soh, state: last value. Energy: lifetime counters at bucket
 * end. A bucket without a sample of its own is not written.
 */
export class Bucketer implements Feature {
  /** its stop saves the energy counts and the open buckets' sums, so the next start continues them */
  readonly name = 'bucketer';
  private readonly db: Database;
  private readonly defs: StreamDef[];
  private readonly pollPeriodMs: number;
  private readonly bus: EventBus | undefined;
  private readonly maxHoldMs: number;
  /** buckets in progress saved by the last clean stop, not yet given back to their stream */
  private savedRuns = new Map<number, unknown>();
  private runs = new Map<string, StreamRun>();
  private started = false;
  /** buckets ending at or before this are closed for every stream */
  private closedUntil = -Infinity;
  /** the newest reading's time */
  private newestTs = -Infinity;
  private readonly keeper: EnergyKeeper;
  private readonly newDatabase: boolean;
  private syncing: Promise<void> = Promise.resolve();
  private readonly counts: Omit<BucketerStats, 'counters'> = {
    ingested: 0,
    lateDropped: 0,
    outOfOrderDropped: 0,
    unknownStream: 0,
    bucketsWritten: 0,
    energySaves: 0,
    energySaveFailures: 0,
  };

  constructor(opts: BucketerOptions) {
    this.db = opts.db;
    this.defs = opts.streams;
    this.pollPeriodMs = opts.pollPeriodMs;
    this.bus = opts.bus;
    this.maxHoldMs = HOLD_POLL_PERIODS * opts.pollPeriodMs;
    this.keeper = new EnergyKeeper(opts.liveStateFile, opts.keepRealMs);
    this.newDatabase = opts.newDatabase ?? false;
  }

  /** Registers the streams and loads persisted energy state, so counts continue after a restart. */
  start(): void {
    if (this.started) return;
    if (!(this.pollPeriodMs > 0) || !Number.isFinite(this.pollPeriodMs)) {
      throw new RangeError(`pollPeriodMs must be a positive number, got ${this.pollPeriodMs}`);
    }
    if (this.newDatabase) this.keeper.forget();
    this.setStreamDefs(this.defs, true);
    this.started = true;
  }

  /**
   * Replaces the stream set (discovery found or lost channels). A kept stream keeps its open
   * bucket and energy count; a new one continues from its persisted state; a removed one
   * takes no more readings, and what it already has is written at the next closeUntil().
   */
  setStreams(streams: StreamDef[]): void {
    if (!this.started) throw new Error('Bucketer.start() must be called before setStreams()');
    this.setStreamDefs(streams, false);
  }

  /**
   * Persists every stream's energy state and the running sums of its bucket in progress (not
   * written as a bucket), so a restart continues both from the last reading. Call
   * closeUntil(now) first to keep the buckets that are already complete.
   */
  stop(): void {
    if (!this.started) return;
    const closedUntil = Number.isFinite(this.closedUntil) ? this.closedUntil : null;
    this.keeper.keepNow(this.newestTs, this.keptStates);
    try {
      durably(this.db, () => {
        const open = new Map<number, SavedRun>();
        for (const run of this.runs.values()) {
          if (run.tracker) saveEnergyState(this.db, run.key, { ...run.tracker.state(), closedUntil });
          if (run.open && !run.retired) open.set(run.key, saveRun(run));
        }
        saveOpenBuckets(this.db, open);
      });
    } catch (err) {
      // a disk that takes no writes (full, read-only): the next start continues from the last
      // save, as after a kill; health has said so since the first refused write
      if (!isStorageFault(err)) throw err;
    } finally {
      this.started = false;
    }
  }

  private setStreamDefs(defs: StreamDef[], first: boolean): void {
    const keys = writeTx(this.db, () => defs.map((d) => streamKey(this.db, d.id)));
    const stored = loadEnergyStates(this.db);
    const floors = loadEnergyFloors(this.db);
    // streams found later (an inverter's optimisers) take theirs when they appear
    if (first) this.savedRuns = takeOpenBuckets(this.db);
    const keep = new Set(defs.map((d) => d.id));
    for (const run of this.runs.values()) if (!keep.has(run.def.id)) run.retired = true;
    defs.forEach((def, i) => {
      const key = keys[i]!;
      // what the last life kept in memory, where it is newer than the last durable save
      const saved = withFloor(this.keeper.pick(def.id, stored.get(key)), floors.get(key));
      if (first && saved?.closedUntil != null) this.closedUntil = Math.max(this.closedUntil, saved.closedUntil);
      const has = (c: string) => (def.channels as string[]).includes(c);
      const hasIn = has('energy_Wh_increment');
      const hasOut = has('energy_Wh_decrement');
      const old = this.runs.get(def.id);
      const holdMs = def.pollPeriodMs ? HOLD_POLL_PERIODS * def.pollPeriodMs : this.maxHoldMs;
      const tracker =
        old?.tracker ??
        (hasIn || hasOut ? new EnergyTracker({ maxHoldMs: holdMs, counterWrapWh: def.counterWrapWh }, saved) : null);
      const shape = {
        def,
        key,
        saved: old?.saved ?? (tracker ? trackerColumns(tracker, hasIn, hasOut) : { energyIn: null, energyOut: null }),
        confirmed: old?.confirmed ?? false,
        fresh: old?.fresh ?? false,
        power: POWER_CHANNELS.flatMap((c, j) => (has(c) ? [j] : [])),
        last: LAST_CHANNELS.filter((c) => has(c.id)),
        hasIn,
        hasOut,
        tracker,
        holdMs,
        retired: false,
      };
      if (old) Object.assign(old, shape);
      else {
        this.runs.set(def.id, {
          ...shape,
          heldValue: new Array<number>(NPOWER).fill(0),
          heldAt: new Array<number>(NPOWER).fill(-Infinity),
          lastTs: -Infinity,
          cursor: -Infinity,
          open: null,
          done: [],
        });
      }
    });
    // after the loop: closedUntil is known only once every stream's state was read
    for (const run of this.runs.values()) {
      if (!this.savedRuns.has(run.key) || run.lastTs !== -Infinity) continue;
      const r = restoredRun(this.savedRuns.get(run.key));
      this.savedRuns.delete(run.key);
      if (r && r.open.end > this.closedUntil && r.open.start >= this.closedUntil) Object.assign(run, r);
    }
  }

  stats(): BucketerStats {
    const counters: CounterJudgeStats = { held: 0, rebased: 0, wraps: 0 };
    for (const run of this.runs.values()) {
      const c = run.tracker?.counterStats;
      if (!c) continue;
      counters.held += c.held;
      counters.rebased += c.rebased;
      counters.wraps += c.wraps;
    }
    return { ...this.counts, counters };
  }

  /** End of the newest bucket written (ms epoch), -Infinity before one: nothing is labelled before it */
  get newestClosed(): number {
    return this.closedUntil;
  }

  /**
   * A stream's lifetime energy counts as last saved, rounded as the buckets store them (the same
   * function), so a live view (metrics, Home Assistant) never disagrees with the API and never
   * shows what a kill or a power cut could take back. Null per direction while unknown and until
   * the stream's first reading since start; undefined for a stream the bucketer does not have.
   *
   * The counts move at each close, so they trail the readings by at most a bucket (15 minutes).
   * The one save between closes is the first a live view causes after a start: the counts a start
   * continues from may be the memory keep's (store/energy-keep.ts), which a power cut takes back,
   * so they are saved before they are shown. A save half-way between closes while live views asked
   * (issue 46's first session) cost 96 commits a day, 0.4 MB of the home site's 2 and 1.6 MB of
   * 200 devices' 20 (bench/README.md "SQLite writes a day"), for counts 7.5 minutes fresher.
   */
  lifetime(streamId: string): EnergyColumns | undefined {
    const run = this.runs.get(streamId);
    if (!run || run.retired) return undefined;
    if (this.started && run.fresh) this.saveEnergy();
    return run.confirmed ? { ...run.saved } : { energyIn: null, energyOut: null };
  }

  ingest(r: Reading): void {
    if (!this.started) throw new Error('Bucketer.start() must be called before ingest()');
    const run = this.runs.get(r.streamId);
    if (!run || run.retired) {
      this.counts.unknownStream++;
      return;
    }
    const t = r.ts;
    if (!Number.isFinite(t) || t < this.closedUntil) {
      this.counts.lateDropped++;
      return;
    }
    if (t <= run.lastTs || t < run.cursor) {
      this.counts.outOfOrderDropped++;
      return;
    }
    this.advance(run, t);
    const b = run.open!;
    b.samples++;
    run.lastTs = t;
    const v = r.values;
    for (const j of run.power) {
      const p = v[POWER_CHANNELS[j]!];
      if (p !== undefined && Number.isFinite(p)) {
        run.heldValue[j] = p;
        run.heldAt[j] = t;
      }
    }
    for (const c of run.last) {
      const x = v[c.id];
      if (c.value === 'state' ? typeof x === 'string' : typeof x === 'number' && Number.isFinite(x))
        b[c.id] = x ?? null;
    }
    if (run.tracker) {
      const from = run.def.energyFrom;
      run.tracker.sample(t, from === undefined ? undefined : v[from], r.counters);
    }
    if (!run.confirmed) run.confirmed = run.fresh = true;
    if (t > this.newestTs) this.newestTs = t;
    this.counts.ingested++;
    this.keeper.maybeKeep(this.newestTs, this.keptStates);
  }

  /** Every live stream's energy state, as the keep in memory holds it. */
  private readonly keptStates = (): Map<string, StoredEnergyState> => {
    const closedUntil = Number.isFinite(this.closedUntil) ? this.closedUntil : null;
    const states = new Map<string, StoredEnergyState>();
    for (const x of this.runs.values())
      if (x.tracker && !x.retired) states.set(x.def.id, { ...x.tracker.state(), closedUntil });
    return states;
  };

  /**
   * Saves the energy counts that changed since their last save, durably (a power cut keeps them),
   * and only then lets live views show them. A failed save leaves the older counts shown until the
   * next close saves and shows its own.
   */
  private saveEnergy(): void {
    for (const run of this.runs.values()) run.fresh = false;
    const changed = [...this.runs.values()].filter((run) => {
      if (!run.tracker || run.retired) return false;
      const now = energyColumns(run);
      return now.energyIn !== run.saved.energyIn || now.energyOut !== run.saved.energyOut;
    });
    if (changed.length > 0) {
      const columns = changed.map(energyColumns);
      const show = () => {
        changed.forEach((run, i) => {
          // a close in between may have saved (and shown) more already
          run.saved = maxColumns(run.saved, columns[i]!);
        });
        this.counts.energySaves++;
      };
      const failed = () => {
        // the disk refuses (full, read-only): the close's own write reports it to health
        this.counts.energySaveFailures++;
      };
      // kept in memory first: what is shown must outlive a save the card takes back
      this.keeper.keepNow(this.newestTs, this.keptStates);
      try {
        // the counts alone (store/energy-state.ts EnergyFloor): the close after saves the whole state
        writeTx(this.db, () => {
          for (const run of changed) {
            const s = run.tracker!.state();
            saveEnergyFloor(this.db, run.key, { inWh: s.inWh, outWh: s.outWh, atMs: s.integratedUntil });
          }
        });
      } catch {
        failed();
        return;
      }
      // shown once on the disk: the sync runs off the event loop, so polling never waits for the card
      this.syncing = syncToDisk(this.db).then(show, failed);
    }
  }

  /** Resolves when the last save between closes is on the disk (and shown). */
  energySynced(): Promise<void> {
    return this.syncing;
  }

  /**
   * Closes every bucket ending at or before `ts`, writes them with the energy state (and what
   * the `bucketsClosing` listeners write) in one transaction, then emits one `bucketsClosed` per bucket
   * period that has buckets. Calling it again for the same time writes and emits nothing.
   */
  closeUntil(ts: number): ClosedBucket[] {
    if (!this.started) throw new Error('Bucketer.start() must be called before closeUntil()');
    const limit = floorToBucket(ts);
    if (!(limit > this.closedUntil)) return [];

    const closing: DoneBucket[] = [];
    for (const run of this.runs.values()) {
      if (run.open && run.open.end <= limit) this.finishOpen(run);
      let n = 0;
      while (n < run.done.length && run.done[n]!.row.startS * 1000 + BUCKET_MS <= limit) n++;
      if (n > 0) closing.push(...run.done.splice(0, n));
    }

    closing.sort((a, b) => a.row.startS - b.row.startS);
    const out = closing.map((d) => toClosedBucket(d.stream.def.id, d.row));
    try {
      writeTx(this.db, () => {
        for (const d of closing) insertBucket(this.db, d.row);
        for (const run of this.runs.values()) {
          // Every stream, with or without counters, so a restart knows what is closed.
          const state = run.tracker ? run.tracker.state() : emptyEnergyState();
          saveEnergyState(this.db, run.key, { ...state, closedUntil: limit });
        }
        // `bucketsClosing` listeners write in this transaction (the uplink's outbox): one that throws
        // rolls the close back, and the buckets are written again by the next closeUntil()
        if (out.length > 0) this.bus?.runInTransaction('bucketsClosing', out);
      });
    } catch (err) {
      // nothing was written: the buckets go back, so the next closeUntil() writes them
      for (let i = closing.length - 1; i >= 0; i--) closing[i]!.stream.done.unshift(closing[i]!);
      throw err;
    }
    this.closedUntil = limit;
    try {
      foldBuckets(this.db, limit / 1000);
    } catch {
      // the buckets are stored either way; a failed fold (a full disk) is tried after a later close
    }
    // kept in memory before the close's counts are shown, as a save's are
    this.keeper.keepNow(this.newestTs, this.keptStates);
    for (const run of this.runs.values()) {
      if (run.tracker) run.saved = energyColumns(run);
      run.fresh = false;
    }
    this.counts.bucketsWritten += closing.length;
    for (const [id, run] of this.runs) if (run.retired && !run.open && run.done.length === 0) this.runs.delete(id);

    if (this.bus) {
      for (let i = 0; i < out.length; ) {
        const start = out[i]!.start;
        let j = i;
        while (j < out.length && out[j]!.start === start) j++;
        this.bus.emit('bucketsClosed', { start, end: start + BUCKET_MS, buckets: out.slice(i, j) });
        i = j;
      }
    }
    return out;
  }

  /** Accounts held values up to `t`, finishing every bucket that ends on the way. */
  private advance(run: StreamRun, t: number): void {
    while (run.open && run.open.end <= t) this.finishOpen(run);
    if (!run.open) {
      const start = floorToBucket(t);
      run.open = {
        start,
        end: start + BUCKET_MS,
        samples: 0,
        coveredMs: 0,
        sum: new Array<number>(NPOWER).fill(0),
        cov: new Array<number>(NPOWER).fill(0),
        ...noLastValues(),
      };
      // A hold reaching into this bucket from an earlier one counts here as well.
      if (run.cursor < start) run.cursor = start;
    }
    this.account(run, t);
  }

  private account(run: StreamRun, to: number): void {
    const b = run.open!;
    const from = run.cursor;
    if (to <= from) return;
    const hold = run.holdMs;
    b.coveredMs += overlap(from, to, run.lastTs, run.lastTs + hold);
    for (const j of run.power) {
      const at = run.heldAt[j]!;
      const o = overlap(from, to, at, at + hold);
      if (o > 0) {
        b.sum[j]! += run.heldValue[j]! * o;
        b.cov[j]! += o;
      }
    }
    run.cursor = to;
  }

  private finishOpen(run: StreamRun): void {
    const b = run.open!;
    this.account(run, b.end);
    run.open = null;
    const tr = run.tracker;
    tr?.advanceTo(b.end);
    if (b.samples === 0) return;
    const mean = (j: number): number | null =>
      run.power.includes(j) && b.cov[j]! > 0 ? round2(b.sum[j]! / b.cov[j]!) : null;
    const row = { stream: run.key, startS: b.start / 1000, coveredMs: Math.round(b.coveredMs), ...energyColumns(run) };
    const w = row as Record<string, number | string | null>;
    POWER_CHANNELS.forEach((c, j) => {
      w[CHANNEL_BY_ID[c].field] = mean(j);
    });
    for (const c of LAST_CHANNELS) {
      const x = b[c.id];
      w[c.field] = typeof x === 'number' ? round2(x) : x;
    }
    run.done.push({ stream: run, row: row as BucketRow });
  }
}

/** The energy columns of a stream now: spec signs (out <= 0), null while a direction is unknown. */
function energyColumns(run: StreamRun): EnergyColumns {
  return run.tracker ? trackerColumns(run.tracker, run.hasIn, run.hasOut) : { energyIn: null, energyOut: null };
}

/** per direction the larger count (magnitudes: out is <= 0), null only where both are */
function maxColumns(a: EnergyColumns, b: EnergyColumns): EnergyColumns {
  const pick = (x: number | null, y: number | null, sign: 1 | -1) =>
    x === null ? y : y === null ? x : sign * Math.max(sign * x, sign * y);
  return { energyIn: pick(a.energyIn, b.energyIn, 1), energyOut: pick(a.energyOut, b.energyOut, -1) };
}

function trackerColumns(tr: EnergyTracker, hasIn: boolean, hasOut: boolean): EnergyColumns {
  return {
    // Rounding is monotonic, so rounded counters never go backwards either.
    energyIn: hasIn && tr.knowsIn ? round2(tr.increment) : null,
    energyOut: hasOut && tr.knowsOut ? round2(tr.decrement) + 0 : null,
  };
}

function overlap(a0: number, a1: number, b0: number, b1: number): number {
  const lo = a0 > b0 ? a0 : b0;
  const hi = a1 < b1 ? a1 : b1;
  return hi > lo ? hi - lo : 0;
}

function toClosedBucket(streamId: string, r: BucketRow): ClosedBucket {
  const values: Record<string, number | string> = {};
  for (const c of CHANNEL_TABLE) {
    const v = r[c.field];
    if (v !== null) values[c.id] = v;
  }
  const start = r.startS * 1000;
  return { streamId, start, end: start + BUCKET_MS, values };
}

function saveRun(run: StreamRun): SavedRun {
  return { open: run.open!, heldValue: run.heldValue, heldAt: run.heldAt, lastTs: run.lastTs, cursor: run.cursor };
}
