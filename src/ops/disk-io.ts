/**
 * What the daemon costs the SD card: bytes this process caused to be written to storage
 * (/proc/self/io `write_bytes`, Linux task I/O accounting: counted when a page is dirtied, so
 * SQLite's WAL appends and checkpoints show up at once), and the database's size on disk.
 */
import { readFileSync, statSync } from 'node:fs';

/** Bytes written to storage by this process since it started, or null where /proc/self/io is missing. */
export function processWriteBytes(): number | null {
  try {
    const m = /^write_bytes:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The database and its WAL, bytes (the -shm index lives in memory-mapped pages and is not data). */
export function databaseBytes(file: string): number {
  let total = 0;
  for (const f of [file, `${file}-wal`]) {
    try {
      total += statSync(f).size;
    } catch {
      // the WAL is absent after a clean close
    }
  }
  return total;
}
