/**
 * The database of a data directory that takes no writes (a card the kernel remounted read-only,
 * a directory the sitegw user cannot write), opened for reading so the gateway serves what it
 * has (issue 41, finding 4) instead of exiting. SQLite opens a WAL-mode file read-only only while
 * its -wal and -shm exist or can be created (https://sqlite.org/wal.html#readonly); after a clean
 * stop they are gone, and this build cannot open it `immutable` (no URI filenames). Then the files
 * are copied to a private folder on a writable filesystem (the temporary folder, else /dev/shm)
 * and the copy is opened read-only: every write still fails as it would on the card
 * (SQLITE_READONLY), so nothing is accepted that would be lost.
 *
 * A clean stop removes the copy; a killed daemon cannot. A card gone read-only is the root
 * filesystem too, so the copy lands in /dev/shm, RAM, and a restart loop (the watchdog, the OOM
 * killer) left one database-sized copy there per life (the storage harness's SIGKILLed read-only
 * lives left 10). So the copy's folder names its process, and every start removes the copies of
 * processes that are gone (removeDeadCopies).
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { processAlive } from '../core/process-alive.js';
import { CRED_FILE, credentialsFileOf } from './credentials.js';
import { openReadOnly } from './db.js';

export interface ReadOnlyStore {
  db: Database;
  /** where the copy is, or null when the files were opened where they are */
  copiedTo: string | null;
  /** removes the copy; after db.close() */
  cleanup(): void;
}

const COPY_PREFIX = 'sitegw-readonly-';
const COPY = new RegExp(`^${COPY_PREFIX}(\\d+)-`);

/** Whether a folder of this name is a read-only copy, whoever made it. */
export const isReadOnlyCopy = (name: string): boolean => name.startsWith(COPY_PREFIX);

/** The pid whose read-only copy a folder of this name is, or null where it is none (or named before pids were). */
export function copyOwner(name: string): number | null {
  const pid = Number(COPY.exec(name)?.[1] ?? 0);
  return pid > 0 ? pid : null;
}

/** the folders a copy goes in, the first with room */
const copyBases = () => [tmpdir(), '/dev/shm'];

/**
 * Removes the read-only copies left by processes that are gone; returns their folders. A pid
 * taken again by another process keeps its folder until that one is gone too: the safe side.
 */
export function removeDeadCopies(bases: readonly string[] = copyBases()): string[] {
  const removed: string[] = [];
  for (const base of bases) {
    let names: string[];
    try {
      names = readdirSync(base);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = copyOwner(name);
      if (pid === null || pid === process.pid || processAlive(pid)) continue;
      const dir = join(base, name);
      try {
        rmSync(dir, { recursive: true, force: true });
        removed.push(dir);
      } catch {
        // another user's, or a folder that takes no writes: not this start's to mend
      }
    }
  }
  return removed;
}

function room(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return 0;
  }
}

export function openReadOnlyStore(file: string): ReadOnlyStore {
  try {
    return { db: openReadOnly(file), copiedTo: null, cleanup: () => undefined };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code !== 'SQLITE_CANTOPEN') throw err;
  }
  const files = [file, `${file}-wal`, credentialsFileOf(file), `${credentialsFileOf(file)}-wal`].filter((f) =>
    existsSync(f),
  );
  const bytes = files.reduce((n, f) => n + statSync(f).size, 0);
  // twice the files' size free: the copy must not fill the folder the rest of the system uses
  const base = copyBases().find((d) => room(d) > 2 * bytes);
  if (!base)
    throw Object.assign(new Error(`no writable folder with ${2 * bytes} bytes free for a read-only copy`), {
      code: 'SQLITE_CANTOPEN',
    });
  const dir = mkdtempSync(join(base, `${COPY_PREFIX}${process.pid}-`));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    const main = join(dir, 'sitegw.db');
    copyFileSync(file, main);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${main}-wal`);
    const cred = credentialsFileOf(file);
    if (existsSync(cred)) copyFileSync(cred, join(dir, CRED_FILE));
    if (existsSync(`${cred}-wal`)) copyFileSync(`${cred}-wal`, join(dir, `${CRED_FILE}-wal`));
    return { db: openReadOnly(main), copiedTo: dir, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}
