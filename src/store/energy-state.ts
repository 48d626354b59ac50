import { open } from 'node:fs/promises';
import type { Database, Statement } from 'better-sqlite3';
import { writeTx } from './db.js';
import { perConnection } from './per-connection.js';

/**
 * What the energy tracker of one stream needs to continue its count after a restart. Lifetime
 * values are magnitudes in Wh (the spec sign is applied when a bucket is written).
 */
export interface EnergyState {
  inWh: number;
  outWh: number;
  /** last raw device counter; null while that direction is integrated from power */
  rawIn: number | null;
  rawOut: number | null;
  /** lifetime = offset + raw: grows by the lost amount on each device reset or wrap */
  offsetIn: number;
  offsetOut: number;
  /** the power sample being held for integration and when it was taken */
  heldPowerW: number | null;
  heldTs: number | null;
  /** integration has been done up to here (ms); null before the first power sample */
  integratedUntil: number | null;
  /** when a device counter was last read (ms); null before one */
  counterTs: number | null;
  /** Wh the power explains since each counter last moved: what its next step may be (telemetry/counter-judge.ts) */
  budgetIn: number;
  budgetOut: number;
  /** the highest power seen on the stream, W: the rating where power is unknown */
  peakW: number;
}

export interface StoredEnergyState extends EnergyState {
  /** every bucket of this stream ending at or before this (ms) is written */
  closedUntil: number | null;
}

/** the table's columns in order: what a row reads back is what a save writes */
type Row = [
  number,
  number,
  number,
  number | null,
  number | null,
  number,
  number,
  number | null,
  number | null,
  number | null,
  number | null,
  number | null,
  number,
  number,
  number,
];

interface Stmts {
  save: Statement<Row>;
  all: Statement<[], Row>;
}
const stmts = perConnection(
  (db): Stmts => ({
    save: db.prepare<Row>(
      `INSERT OR REPLACE INTO energy_state
       (stream, in_wh, out_wh, raw_in, raw_out, offset_in, offset_out, held_power_w, held_ts, integrated_until, closed_until,
        counter_ts, budget_in, budget_out, peak_w)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    all: db
      .prepare<[], Row>(
        `SELECT stream, in_wh, out_wh, raw_in, raw_out, offset_in, offset_out, held_power_w, held_ts, integrated_until, closed_until,
           counter_ts, budget_in, budget_out, peak_w
         FROM energy_state`,
      )
      .raw(),
  }),
);

/** Call inside the transaction that writes the buckets this state belongs to. */
export function saveEnergyState(db: Database, stream: number, s: StoredEnergyState): void {
  stmts(db).save.run(
    stream,
    s.inWh,
    s.outWh,
    s.rawIn,
    s.rawOut,
    s.offsetIn,
    s.offsetOut,
    s.heldPowerW,
    s.heldTs,
    s.integratedUntil,
    s.closedUntil,
    s.counterTs,
    s.budgetIn,
    s.budgetOut,
    s.peakW,
  );
}

/**
 * What a save between two closes keeps of a stream (telemetry/bucketer.ts saveEnergy): its lifetime
 * counts (magnitudes, Wh, unrounded) and the time its integration had reached, null before its
 * first power sample. A start continues from the larger of these and the stream's full state
 * (telemetry/energy.ts withFloor). Three numbers where the full state has fourteen: at 272
 * streams a save writes 3 pages instead of 9, 96 times a day (bench/README.md "SQLite writes a day").
 */
export interface EnergyFloor {
  inWh: number;
  outWh: number;
  atMs: number | null;
}

/** Whether the file has the floors' table: a read-only start serves a file of schema 17 or older unmigrated. */
const hasFloors = perConnection(
  (db): boolean =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'energy_floor'").get() !== undefined,
);

const floorStmts = perConnection((db) => ({
  save: db.prepare<[number, number, number, number | null]>(
    'INSERT OR REPLACE INTO energy_floor (stream, in_wh, out_wh, at_ms) VALUES (?, ?, ?, ?)',
  ),
  all: db
    .prepare<[], [number, number, number, number | null]>('SELECT stream, in_wh, out_wh, at_ms FROM energy_floor')
    .raw(),
}));

/** Call inside a transaction; the floor only ever rises (a start takes the larger of it and the full state). */
export function saveEnergyFloor(db: Database, stream: number, f: EnergyFloor): void {
  floorStmts(db).save.run(stream, f.inWh, f.outWh, f.atMs);
}

/** Every stream's floor, keyed by the stream's integer id; none in a file of the layout before. */
export function loadEnergyFloors(db: Database): Map<number, EnergyFloor> {
  const out = new Map<number, EnergyFloor>();
  if (!hasFloors(db)) return out;
  for (const [stream, inWh, outWh, atMs] of floorStmts(db).all.all()) out.set(stream, { inWh, outWh, atMs });
  return out;
}

/** Persisted state of every stream, keyed by the stream's integer id. */
export function loadEnergyStates(db: Database): Map<number, StoredEnergyState> {
  const out = new Map<number, StoredEnergyState>();
  for (const r of stmts(db).all.all()) {
    out.set(r[0], {
      inWh: r[1],
      outWh: r[2],
      rawIn: r[3],
      rawOut: r[4],
      offsetIn: r[5],
      offsetOut: r[6],
      heldPowerW: r[7],
      heldTs: r[8],
      integratedUntil: r[9],
      closedUntil: r[10],
      counterTs: r[11],
      budgetIn: r[12],
      budgetOut: r[13],
      peakW: r[14],
    });
  }
  return out;
}

/**
 * Runs `fn` in one transaction that is on the disk when it returns (synchronous FULL: the WAL is
 * synced at the commit), so what it saved survives a power cut and may be shown. The connection
 * goes back to NORMAL for everything else (src/store/db.ts).
 */
export function durably<T>(db: Database, fn: () => T): T {
  db.pragma('synchronous = FULL');
  try {
    return writeTx(db, fn);
  } finally {
    db.pragma('synchronous = NORMAL');
  }
}

/**
 * Brings what was committed (synchronous NORMAL: in the WAL, not yet on the disk) onto the disk,
 * off the event loop: fdatasync of the WAL. A checkpoint that emptied the WAL synced the database
 * file itself, so nothing is left to do then, nor for an in-memory database. The database file
 * itself is never opened here: closing another descriptor of it would drop the POSIX locks SQLite
 * holds on it in this process (https://sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
 */
export async function syncToDisk(db: Database): Promise<void> {
  if (db.memory) return;
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(`${db.name}-wal`, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    await fh.datasync();
  } finally {
    await fh.close();
  }
}
