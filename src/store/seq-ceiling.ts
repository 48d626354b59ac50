/**
 * The uplink seq's promise (docs/mqtt-contract.md): a site's seqs continue above every number it
 * sent before, even after its database was replaced. The outbox's own counter lives in the
 * database, so it cannot survive a damaged file moved aside at boot; and seeding a fresh one from
 * the wall clock fails on a Pi that boots in the past (a database made in 2020 counted from
 * 1,577,836,800,000, below what the site had sent).
 *
 * So a ceiling is kept beside the database, in a file of its own: every seq ever handed out is at
 * or below it, because it is raised (written and synced) before the outbox may pass it, in
 * blocks, so the SD card sees one small write every few months. A fresh database starts above
 * it; without one (a new data directory) the seq starts above the wall clock once that can be
 * right, as before.
 */
import { readFileSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import { writeDurably } from './durable-file.js';

/** seqs reserved per write of the ceiling: about a year of a busy site's messages */
export const SEQ_BLOCK = 100_000;

const OUTBOX = 'uplink_outbox';

/** The outbox's last handed-out seq (0 before the table's counter exists). */
export function outboxSeq(db: Database): number {
  const v = db.prepare<[string], number>('SELECT seq FROM sqlite_sequence WHERE name = ?').pluck().get(OUTBOX);
  return v ?? 0;
}

/** Moves the outbox's counter up to `floor` (never down); the next seq is floor + 1 or more. */
export function raiseOutboxSeq(db: Database, floor: number): void {
  if (!(floor > outboxSeq(db))) return;
  const up = db.prepare('UPDATE sqlite_sequence SET seq = ? WHERE name = ?').run(floor, OUTBOX);
  if (up.changes === 0) db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(OUTBOX, floor);
}

/** The ceiling in `file`, 0 when there is none or it is not a number (then the clock decides). */
export function readSeqCeiling(file: string): number {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}

/** Writes the ceiling durably: a new file synced, then renamed over the old one. */
export function writeSeqCeiling(file: string, ceiling: number): void {
  writeDurably(file, `${ceiling}\n`);
}

/** Keeps the ceiling file ahead of the outbox's counter. */
export class SeqCeiling {
  private ceiling: number;

  constructor(readonly file: string) {
    this.ceiling = readSeqCeiling(file);
  }

  /** the highest seq the file allows; 0 when there was no file */
  get value(): number {
    return this.ceiling;
  }

  /**
   * Before `count` new seqs are handed out: raises the ceiling on disk when they would pass it.
   * Throws when the file cannot be written, so the messages are not written either.
   */
  reserve(db: Database, count: number): void {
    this.reserveAbove(outboxSeq(db), count);
  }

  /** The same, above `current`, the highest seq handed out (the outbox's or the telemetry's: uplink/seq-counter.ts). */
  reserveAbove(current: number, count: number): void {
    const needed = current + count;
    if (needed <= this.ceiling) return;
    const next = needed + SEQ_BLOCK;
    writeSeqCeiling(this.file, next);
    this.ceiling = next;
  }
}
