/**
 * The integrity check at start, on files damaged on purpose: pages overwritten in the middle of
 * a real sitegw database, and a file that is no database at all. The daemon starts on a fresh
 * database, the damaged one is kept aside with a timestamp, the event is logged, announced on
 * the bus (for the uplink) and shown by /healthz; the next start is normal (no crash loop). A
 * file from a newer sitegw is not corruption and is left alone.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Daemon } from '../../src/main.js';
import { openCheckedDatabase, quickCheck } from '../../src/ops/integrity.js';
import { openDatabase } from '../../src/store/db.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-integrity-'));
  dirs.push(d);
  return d;
}

/** A sitegw database with enough rows to span many pages, closed cleanly (WAL checkpointed). */
function realDatabase(file: string): void {
  const db = openDatabase(file);
  db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT)');
  const ins = db.prepare('INSERT INTO filler (body) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) ins.run(`row ${i} ${'x'.repeat(200)}`);
  })();
  db.close();
}

function damagePages(file: string, firstPage: number, pages: number): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(4096 * pages, 0xa5), 0, 4096 * pages, 4096 * firstPage);
  closeSync(fd);
}

function capture() {
  const lines: { level: number; msg: string; movedTo?: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

function config(dataDir: string) {
  // devices on ports nobody listens on: this test is about the store
  const ep = { host: '127.0.0.1', port: 9 };
  return demoSiteConfig(
    { inverter: ep, meter: ep },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir, pollSeconds: 10, batteryBlocks: 1 },
  );
}

describe('integrity check at start', () => {
  it('quick_check finds overwritten pages; a damaged file is moved aside and a fresh one opened', () => {
    const dir = tmp();
    const file = join(dir, 'sitegw.db');
    realDatabase(file);
    expect(quickCheck(file)).toBeNull();
    damagePages(file, 8, 4);
    expect(quickCheck(file)).toMatch(/.+/);
    const { log, lines } = capture();
    const { db, replaced } = openCheckedDatabase(file, log, () => Date.UTC(2026, 10, 23, 6, 30, 0));
    expect(replaced?.movedTo).toBe(`${file}.damaged-20261123T063000Z`);
    expect(existsSync(replaced!.movedTo)).toBe(true);
    // the fresh database has the schema and none of the old rows
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'filler'").pluck().get()).toBe(0);
    expect(db.pragma('quick_check', { simple: true })).toBe('ok');
    db.close();
    expect(lines.find((l) => l.level === 50)?.msg).toMatch(/damaged: moved aside/);
  });

  it('a file that is not a database at all is replaced too', () => {
    const file = join(tmp(), 'sitegw.db');
    writeFileSync(file, 'this is not SQLite, just noise on the card '.repeat(200));
    const { db, replaced } = openCheckedDatabase(file, capture().log);
    expect(replaced?.reason).toMatch(/not a database/);
    db.close();
  });

  it('keeps only the newest two damaged copies, so repeated damage cannot fill the card', () => {
    const dir = tmp();
    const file = join(dir, 'sitegw.db');
    for (let i = 0; i < 4; i++) {
      writeFileSync(file, `noise ${i} `.repeat(500));
      openCheckedDatabase(file, capture().log, () => Date.UTC(2026, 0, 1, 0, i)).db.close();
    }
    expect(
      readdirSync(dir)
        .filter((n) => n.includes('.damaged-'))
        .sort(),
    ).toEqual(['sitegw.db.damaged-20260101T000200Z', 'sitegw.db.damaged-20260101T000300Z']);
  });

  it('a database from a newer sitegw is not corruption: the start stops and the file stays', () => {
    const file = join(tmp(), 'sitegw.db');
    realDatabase(file);
    const db = openDatabase(file);
    db.pragma('user_version = 999');
    db.close();
    expect(() => openCheckedDatabase(file, capture().log)).toThrow(/written by a newer sitegw/);
    expect(existsSync(file)).toBe(true);
  });

  it('the daemon starts on a damaged database, announces it, reports it in /healthz, and starts normally next time', async () => {
    const dataDir = tmp();
    const file = join(dataDir, 'sitegw.db');
    realDatabase(file);
    damagePages(file, 8, 4);
    const events: { movedTo: string }[] = [];
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    const { log, lines } = capture();
    const daemon = await Daemon.start({
      config: config(dataDir),
      clock,
      log,
      listen: false,
      beforePolling: async (ctx) => {
        ctx.bus.on('databaseReplaced', (e) => events.push(e));
      },
    });
    try {
      expect(events).toHaveLength(1);
      expect(existsSync(events[0]!.movedTo)).toBe(true);
      const res = await daemon.app.inject({ method: 'GET', url: '/healthz' });
      const body = res.json() as { status: string; problems: string[] };
      expect(body.status).not.toBe('ok');
      expect(body.problems.join(' ')).toMatch(/database was damaged at start/);
      expect(lines.some((l) => l.msg.includes('damaged: moved aside'))).toBe(true);
    } finally {
      await daemon.stop();
    }
    const again = capture();
    const second = await Daemon.start({ config: config(dataDir), clock, log: again.log, listen: false });
    await second.stop();
    expect(again.lines.some((l) => l.msg.includes('damaged'))).toBe(false);
    expect(
      readdirSync(dataDir).filter((n) => n.includes('.damaged-') && !n.endsWith('-wal') && !n.endsWith('-shm')),
    ).toHaveLength(1);
  });
});
