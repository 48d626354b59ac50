/**
 * What a settled day's bucket closes write, by the buckets table's layout (issue 32: SD-card
 * wear): bare better-sqlite3 inserts of one row per stream every 15 minutes, one transaction
 * each (as the bucketer closes), in WAL with synchronous NORMAL, for three days; the third day's
 * write() bytes (/proc/self/io wchar: WAL frames and checkpoints). The table is the buckets
 * table's shape (src/store/migrations.ts); the layouts compared are its key, (stream, start), at
 * SQLite's default 4 KiB page, the same key at 1 KiB pages, and a key in time order (start,
 * stream). Nothing of the gateway runs here: bench/disk-writes.ts measures the gateway itself
 * (its settled day is within 10 % of the first row). Baseline: the first row, today's layout.
 *
 *   node --import tsx bench/bucket-layout-writes.ts [streams,...]     (default 16,272)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteDriver } from '../src/store/driver.js';

const BetterSqlite3 = sqliteDriver();
const DAYS = 3;
const STREAMS = (process.argv[2] ?? '16,272').split(',').map(Number);
const wchar = () => Number(/^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);

function lastDayBytes(streams: number, page: number, key: string, fold = false): number {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-layout-'));
  try {
    const db = new BetterSqlite3(join(dir, 'b.db'));
    db.pragma(`page_size = ${page}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE buckets (stream INTEGER NOT NULL, start_s INTEGER NOT NULL, covered_ms INTEGER NOT NULL,
      power_W REAL, power_AC_W REAL, power_DC_W REAL, soc REAL, soh REAL, energy_in REAL, energy_out REAL, state TEXT,
      PRIMARY KEY (${key})) WITHOUT ROWID`);
    // the layout now (src/store/recent-buckets.ts): closes into a rowid table keyed k = start_s × 2^20 +
    // stream, folded into the archive once a day after a close, a stream at a time
    if (fold)
      db.exec(`CREATE TABLE recent (k INTEGER PRIMARY KEY, stream INTEGER NOT NULL, start_s INTEGER NOT NULL, covered_ms INTEGER NOT NULL,
      power_W REAL, power_AC_W REAL, power_DC_W REAL, soc REAL, soh REAL, energy_in REAL, energy_out REAL, state TEXT)`);
    const ins = fold
      ? db.prepare('INSERT INTO recent VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      : db.prepare('INSERT INTO buckets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    const archive = db.prepare('INSERT OR REPLACE INTO buckets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    const toFold = fold
      ? db
          .prepare(
            'SELECT stream, start_s, covered_ms, power_W, power_AC_W, power_DC_W, soc, soh, energy_in, energy_out, state FROM recent WHERE k < ? ORDER BY k',
          )
          .raw()
      : undefined;
    const drop = fold ? db.prepare('DELETE FROM recent WHERE k < ?') : undefined;
    const foldDay = db.transaction((beforeK: number) => {
      const byStream = new Map<number, unknown[][]>();
      for (const r of toFold!.all(beforeK) as unknown[][]) {
        const l = byStream.get(r[0] as number);
        if (l) l.push(r);
        else byStream.set(r[0] as number, [r]);
      }
      for (const l of byStream.values()) for (const r of l) archive.run(...r);
      drop!.run(beforeK);
    });
    const close = db.transaction((b: number) => {
      for (let s = 0; s < streams; s++)
        ins.run(
          ...(fold ? [b * 900 * 2 ** 20 + s] : []),
          s,
          b * 900,
          900_000,
          1000 + ((s * 37 + b * 11) % 4000),
          990.5,
          null,
          55.5,
          null,
          1e4 + b,
          2e3 + b,
          null,
        );
    });
    let from = 0;
    for (let b = 0; b < 96 * DAYS; b++) {
      if (b === 96 * (DAYS - 1)) from = wchar();
      close(b);
      if (fold && (b + 1) % 96 === 0) foldDay((b + 1) * 900 * 2 ** 20);
    }
    const bytes = wchar() - from;
    db.close();
    return bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const layouts: [string, number, string, boolean][] = [
  ['(stream, start), 4 KiB pages: before', 4096, 'stream, start_s', false],
  ['(stream, start), 1 KiB pages', 1024, 'stream, start_s', false],
  ['(start, stream), 4 KiB pages: time order', 4096, 'start_s, stream', false],
  ['a rowid table in time order for the day, folded daily into (stream, start): now', 4096, 'stream, start_s', true],
];
console.log(`bare inserts, one transaction per 15 minutes, WAL + synchronous NORMAL; the last of ${DAYS} days`);
console.log('');
console.log('| streams | buckets table layout | MB written on a settled day | ratio to before |');
console.log('|---:|---|---:|---:|');
for (const n of STREAMS) {
  let base = 0;
  for (const [name, page, key, fold] of layouts) {
    const b = lastDayBytes(n, page, key, fold);
    if (base === 0) base = b;
    console.log(`| ${n} | ${name} | ${(b / 1e6).toFixed(2)} | ${(b / base).toFixed(2)}x |`);
  }
}
