/**
 * Transactions against another process writing the same file, as `sitegw clients` or
 * `sitegw control release` do beside the running daemon. A deferred transaction that reads and
 * then writes fails at once with SQLITE_BUSY when the other process committed in between (seen
 * in the daemon's log under load: the bucketer's stream keys); writeTx takes the lock at BEGIN.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase, writeTx } from '../../src/store/db.js';
import { chooseDriver } from '../../src/store/driver.js';
import { ROOT } from '../support/cli.js';

let dir: string;
let db: Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sitegw-tx-'));
  db = openDatabase(join(dir, 'sitegw.db'));
  db.exec('CREATE TABLE t (x INTEGER)');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Another process inserts one row, waiting at most 300 ms for the lock; its exit status and SQLite code. */
function otherProcessWrites(): { status: number | null; code: string } {
  const choice = chooseDriver(process.version);
  if (!choice.ok) throw new Error(choice.reason);
  const script = `const D = require(${JSON.stringify(choice.pkg)});
const db = new D(${JSON.stringify(join(dir, 'sitegw.db'))});
db.pragma('busy_timeout = 300');
try { db.prepare('INSERT INTO t VALUES (2)').run(); } catch (e) { process.stdout.write(String(e.code)); process.exit(3); }`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, code: r.stdout };
}

/** what the other process did during the last readThenWrite */
let other: ReturnType<typeof otherProcessWrites> | undefined;
/** Reads, lets the other process write, then writes: the shape of a stream-key or token transaction. */
const readThenWrite = () => {
  db.prepare('SELECT count(*) FROM t').get();
  other = otherProcessWrites();
  db.prepare('INSERT INTO t VALUES (1)').run();
};

describe('a transaction beside another writing process', () => {
  it('deferred (the old way): the other commits in between, and the write fails with SQLITE_BUSY at once', () => {
    expect(() => db.transaction(readThenWrite)()).toThrow(
      expect.objectContaining({ code: expect.stringMatching(/^SQLITE_BUSY/) }),
    );
    expect(other!.status).toBe(0);
  });

  it('writeTx: the lock is taken at BEGIN, so the other process waits for it and this one commits', () => {
    writeTx(db, readThenWrite);
    // it waited its 300 ms for the lock this transaction held, and gave up
    expect(other).toEqual({ status: 3, code: 'SQLITE_BUSY' });
    expect(db.prepare('SELECT x FROM t').pluck().all()).toEqual([1]);
    // with the lock free, the other process writes
    expect(otherProcessWrites().status).toBe(0);
  });
});

describe('every transaction in src/', () => {
  const files = (d: string): string[] =>
    readdirSync(d).flatMap((n) => {
      const p = join(d, n);
      return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
    });

  it('goes through writeTx (src/store/db.ts); the reference consumer has its own database and IMMEDIATE', () => {
    const allowed = ['src/store/db.ts', 'src/consumer/sqlite-db.ts'];
    const bare = files(join(ROOT, 'src'))
      .map((p) => p.slice(ROOT.length))
      .filter((p) => !allowed.includes(p) && /\.transaction\(/.test(readFileSync(join(ROOT, p), 'utf8')));
    expect(bare).toEqual([]);
  });
});
