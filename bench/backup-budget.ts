/**
 * What the scheduled backups (src/ops/backup-schedule.ts) write a day, by the age of a site's
 * history: a ten-device home site's 16 streams with 0.1, 1, 3 and 10 years of PT15M buckets, the
 * whole-database copy (the gateway's own backupDatabase, its write() bytes from /proc/self/io) and
 * its cadence, the credentials copy daily. Baseline: what the same site's settled day writes
 * today, 11.09 MB (bench/README.md, bench/disk-writes.ts --days 6), so the ratio says what the
 * backups add.
 *
 *   node --import tsx bench/backup-budget.ts
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupDatabase } from '../src/ops/backup.js';
import { daysBetweenCopies } from '../src/ops/backup-schedule.js';
import { openDatabase } from '../src/store/db.js';

const STREAMS = 16;
const BUCKETS_BYTES_PER_DAY = 11.09e6;
const wchar = () => Number(/^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);

async function run(years: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-backup-'));
  try {
    const file = join(dir, 'sitegw.db');
    const db = openDatabase(file);
    const ins = db.prepare(
      'INSERT INTO buckets (stream, start_s, covered_ms, power_W, energy_in, energy_out, soc) VALUES (?, ?, 900000, ?, ?, ?, ?)',
    );
    const n = Math.round(years * 365 * 96);
    db.transaction(() => {
      for (let s = 1; s <= STREAMS; s++) db.prepare('INSERT INTO streams (key) VALUES (?)').run(`dev${s}__s`);
      for (let i = 0; i < n; i++)
        for (let s = 1; s <= STREAMS; s++) ins.run(s, 1.7e9 + i * 900, 1000 + i, i * 0.3, -i * 0.1, 50);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const size = statSync(file).size;
    const before = wchar();
    await backupDatabase(file, join(dir, 'whole.db'));
    const copy = wchar() - before;
    const every = daysBetweenCopies(size);
    const c0 = wchar();
    await backupDatabase(file, join(dir, 'cred.db'), { credentialsOnly: true });
    const cred = wchar() - c0;
    const perDay = copy / every + cred;
    console.log(
      `| ${years} years | ${(size / 1e6).toFixed(1)} MB | ${(copy / 1e6).toFixed(1)} MB every ${every} days | ${(cred / 1024).toFixed(0)} KiB daily | ${(perDay / 1024).toFixed(0)} KiB | ${((perDay / BUCKETS_BYTES_PER_DAY) * 100).toFixed(1)} % |`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  '| history | sitegw.db | whole copy (write bytes) | credentials copy | backups per day | of the bucket closes |',
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const y of [0.1, 1, 3, 10]) await run(y);
