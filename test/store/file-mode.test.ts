/**
 * The database (token hashes, the page-token key) is private to the user sitegw runs as, also
 * when run by hand under a permissive umask: a daemon started on a fresh data directory creates
 * it 0700 and sitegw.db with its -wal and -shm 0600; a database an earlier version left 0644 is
 * tightened at the next start, with a log line.
 */
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { demoSite } from '../support/demo.js';

const mode = (f: string) => (statSync(f).mode & 0o777).toString(8);

describe('file modes of the data directory and the database', () => {
  const root = mkdtempSync(join(tmpdir(), 'sitegw-modes-'));
  let umask: number;
  beforeAll(() => {
    // what a shell usually has: new files 0644, new folders 0755
    umask = process.umask(0o022);
  });
  afterAll(() => {
    process.umask(umask);
    rmSync(root, { recursive: true, force: true });
  });

  it('a fresh data directory: 0700, and sitegw.db, -wal, -shm 0600', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const demo = await demoSite({ speed: 60, dataDir });
    try {
      const db = join(dataDir, 'sitegw.db');
      expect({ dir: mode(dataDir), db: mode(db), wal: mode(`${db}-wal`), shm: mode(`${db}-shm`) }).toEqual({
        dir: '700',
        db: '600',
        wal: '600',
        shm: '600',
      });
    } finally {
      await demo.cleanup();
    }
  });

  it('a database left readable by others is made 0600 at the next start, and that is logged', async () => {
    const dataDir = join(root, 'old');
    const db = join(dataDir, 'sitegw.db');
    openDatabase(db).close();
    for (const f of [db, `${db}-wal`, `${db}-shm`]) {
      try {
        chmodSync(f, 0o644);
      } catch {
        // -wal and -shm are gone after a clean close
      }
    }
    expect(mode(db)).toBe('644');
    const lines: { msg: string; file?: string }[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const demo = await demoSite({ speed: 60, dataDir, log });
    try {
      expect(mode(db)).toBe('600');
      expect(mode(`${db}-wal`)).toBe('600');
      expect(lines.filter((l) => /mode is now 0600/.test(l.msg)).map((l) => l.file)).toContain(db);
    } finally {
      await demo.cleanup();
    }
  });
});
