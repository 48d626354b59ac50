/**
 * Every readable row of a damaged database copied into a fresh one (issue 41, finding 3). SQLite
 * reads a B-tree page by page, so a scan stops at the first page it cannot read, not before: each
 * table is scanned forward until it fails, then backward from its end, and the gap between is
 * probed by seeking past the failing page (the key's integer columns stepped by doubling
 * distances), so rows after a torn or overwritten page are found too. Rowid tables are read in
 * rowid order (their own B-tree, not an index that may be the damaged part). A row the fresh
 * file refuses (a bucket whose stream was lost, a value noise turned into a wrong type) is counted,
 * not guessed at.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';
import { sqliteDriver } from './driver.js';

/** What one table gave. */
export interface TableSalvage {
  table: string;
  /** rows now in the fresh file from this source */
  rows: number;
  /** whether some of it could not be read (a damaged page, a row the fresh file refused) */
  unreadable: boolean;
  /** rows read but refused by the fresh file's constraints */
  refused: number;
}

export interface SalvageOptions {
  /** only these tables (a backup fills what the salvage lacks, not everything) */
  only?: ReadonlySet<string>;
  /** 'replace': the source wins (salvage into a fresh file); 'ignore': what is there wins (a backup's fill) */
  conflict: 'replace' | 'ignore';
}

/** seeks tried per table to step over damaged pages, so a file of noise cannot take minutes */
const MAX_PROBES = 400;
/** the farthest a probe steps an integer key (ms timestamps and seconds alike) */
const MAX_STEP = 2 ** 44;

type Key = unknown[];

interface Scan {
  read: number;
  last: Key | null;
  failed: boolean;
}

/**
 * Copies the readable rows of every table of `sourceFile` that the target also has (found by its
 * unqualified name: main or the credentials file) into `target`, the columns both have.
 */
export function salvageInto(target: Database, sourceFile: string, opts: SalvageOptions): TableSalvage[] {
  let src: Database;
  try {
    src = new (sqliteDriver())(sourceFile, { fileMustExist: true });
    // a file shorter than its header says (truncated) is refused as corrupt unless the schema is
    // writable, which better-sqlite3's defensive mode forbids: SQLite then reads the pages that are
    // there (btree.c lockBtree). query_only keeps the file unwritten meanwhile
    src.unsafeMode(true);
    src.pragma('query_only = 1');
    src.pragma('writable_schema = ON');
  } catch {
    return [];
  }
  try {
    let tables: { name: string; sql: string }[];
    try {
      tables = src
        .prepare<[], { name: string; sql: string }>(
          "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
        )
        .all();
    } catch {
      return []; // the schema page itself is gone: nothing can be named
    }
    const out: TableSalvage[] = [];
    for (const t of tables) {
      if (opts.only && !opts.only.has(t.name)) continue;
      const r = salvageTable(src, target, t.name, /\bWITHOUT\s+ROWID\b/i.test(t.sql), opts.conflict);
      if (r) out.push(r);
    }
    if (!opts.only || opts.only.has('sqlite_sequence')) carrySequences(src, target);
    return out;
  } finally {
    src.close();
  }
}

function columnsOf(db: Database, table: string): string[] {
  try {
    return db
      .prepare(`SELECT * FROM "${table}" LIMIT 0`)
      .columns()
      .map((c) => c.name);
  } catch {
    return [];
  }
}

function salvageTable(
  src: Database,
  target: Database,
  table: string,
  withoutRowid: boolean,
  conflict: SalvageOptions['conflict'],
): TableSalvage | null {
  const targetCols = new Set(columnsOf(target, table));
  if (targetCols.size === 0) return null;
  let info: { name: string; pk: number }[];
  try {
    info = src.prepare<[], { name: string; pk: number }>(`PRAGMA table_info("${table}")`).all();
  } catch {
    return { table, rows: 0, unreadable: true, refused: 0 };
  }
  const cols = info.map((c) => c.name).filter((c) => targetCols.has(c));
  // a schema page the damage took: the damaged file no longer says what the table holds
  if (cols.length === 0) return { table, rows: 0, unreadable: true, refused: 0 };
  const keys = withoutRowid
    ? info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => `"${c.name}"`)
    : ['rowid'];
  const list = cols.map((c) => `"${c}"`).join(', ');
  const insert = target.prepare(
    `INSERT OR ${conflict === 'replace' ? 'REPLACE' : 'IGNORE'} INTO "${table}" (${list}) VALUES (${cols.map(() => '?').join(', ')})`,
  );
  let rows = 0;
  let refused = 0;
  const take = (row: unknown[]) => {
    try {
      rows += insert.run(...row.slice(keys.length)).changes > 0 ? 1 : 0;
    } catch {
      refused++;
    }
  };
  const k = keys.join(', ');
  const scan = (from: Key | null, inclusive: boolean, desc: boolean, below: Key | null): Scan => {
    const where: string[] = [];
    const args: unknown[] = [];
    if (from) {
      const n = from.length;
      where.push(
        `(${keys.slice(0, n).join(', ')}) ${desc ? '<' : inclusive ? '>=' : '>'} (${from.map(() => '?').join(', ')})`,
      );
      args.push(...from);
    }
    if (below) {
      where.push(`(${k}) < (${below.map(() => '?').join(', ')})`);
      args.push(...below);
    }
    const order = keys.map((c) => `${c} ${desc ? 'DESC' : 'ASC'}`).join(', ');
    const sql = `SELECT ${k}, ${list} FROM "${table}"${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order}`;
    const s: Scan = { read: 0, last: null, failed: false };
    try {
      for (const row of src
        .prepare(sql)
        .raw()
        .iterate(...args) as IterableIterator<unknown[]>) {
        take(row);
        s.read++;
        s.last = row.slice(0, keys.length);
      }
    } catch {
      s.failed = true;
    }
    return s;
  };
  let unreadable = false;
  writeTx(target, () => {
    const fwd = scan(null, false, false, null);
    if (!fwd.failed) return;
    unreadable = true;
    const bwd = scan(null, false, true, null);
    // the rows after the damage, as far as the backward scan did not already read them
    const end = bwd.read > 0 ? bwd.last : null;
    // nothing read from the start: its first page is the damaged one; seeks step from key 0
    let pos: Key | null = fwd.last ?? [0];
    let probes = 0;
    while (pos && probes < MAX_PROBES) {
      let moved = false;
      for (const c of candidates(pos)) {
        if (++probes > MAX_PROBES) break;
        const s = scan(c, true, false, end);
        if (s.read === 0 && !s.failed) continue; // nothing between here and the end: a larger step neither
        if (s.read === 0) continue;
        pos = s.last;
        moved = true;
        if (!s.failed) pos = null;
        break;
      }
      if (!moved) break;
    }
  });
  return { table, rows, unreadable: unreadable || refused > 0, refused };
}

/** Keys after `pos` to seek to: its last integer column stepped by 1, 2, 4, …, then the ones before it. */
function* candidates(pos: Key): Generator<Key> {
  for (let j = pos.length - 1; j >= 0; j--) {
    const v = pos[j];
    if (typeof v !== 'number' && typeof v !== 'bigint') continue;
    for (let d = 1; d <= MAX_STEP; d *= 2) yield [...pos.slice(0, j), Number(v) + d];
  }
}

/** AUTOINCREMENT's high-water marks (the uplink's seq): never lower than the damaged file's. */
function carrySequences(src: Database, target: Database): void {
  let seqs: { name: string; seq: number }[];
  try {
    seqs = src.prepare<[], { name: string; seq: number }>('SELECT name, seq FROM sqlite_sequence').all();
  } catch {
    return;
  }
  writeTx(target, () => {
    for (const { name, seq } of seqs)
      target.prepare('UPDATE main.sqlite_sequence SET seq = max(seq, ?) WHERE name = ?').run(seq, name);
  });
}

/**
 * What a backup may give back when the salvage lacks it: history and settings whose older copy is
 * right. Not tokens and codes (one revoked since would be valid again: partners sign in anew), not
 * the energy counts (an older lifetime would publish lower than before), not the outbox, plans or
 * control's records (sent, run or released since).
 */
export const RESTORABLE = new Set([
  'streams',
  'buckets',
  'buckets_recent',
  'buckets_hour',
  'device_facts',
  'tariffs',
  'tariff_values',
  'tariff_page_key',
  'grid_events',
  'control_reserve',
  'auth_clients',
  'auth_client_devices',
  'auth_owner',
  'publish_to',
  'publish_to_audit',
]);

/** The scheduled backups (ops/backup.ts), newest credentials first: the order a fill reads them. */
export const BACKUP_DIR = 'backups';
export const BACKUP_FILES = ['credentials.db', 'sitegw.db'] as const;

export interface Filled {
  table: string;
  rows: number;
  /** the backup file and its time */
  backup: string;
}

/** Rows of the scheduled backups that the fresh, salvaged file lacks, for the RESTORABLE tables (or fewer). */
export function fillFromBackups(target: Database, dataDir: string, only: ReadonlySet<string> = RESTORABLE): Filled[] {
  const out: Filled[] = [];
  for (const name of BACKUP_FILES) {
    const file = join(dataDir, BACKUP_DIR, name);
    if (!existsSync(file)) continue;
    const when = new Date(statSync(file).mtimeMs).toISOString().slice(0, 16).replace('T', ' ');
    for (const t of salvageInto(target, file, { only, conflict: 'ignore' }))
      out.push({ table: t.table, rows: t.rows, backup: `${name} of ${when} UTC` });
  }
  return out;
}

/** The credential tables a backup may give back (credentials.ts CRED_TABLES, less codes and tokens). */
export const RESTORABLE_CREDENTIALS: ReadonlySet<string> = new Set(
  [...RESTORABLE].filter((t) => t.startsWith('auth_') || t.startsWith('publish_to')),
);
