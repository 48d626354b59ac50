/**
 * The process's last line of defence (src/ops/fatal.ts) in `sitegw demo` as its own process: a
 * fault no handler contained is logged at fatal level with its stack, the daemon stops in order
 * (the open buckets are saved) and the process exits with 70 for systemd to restart it.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_FATAL } from '../../src/ops/fatal.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { bearer, get, partnerToken } from '../support/auth.js';
import { type ChildDemo, childDemo, logLines } from '../support/child-daemon.js';
import { waitFor } from '../support/demo.js';

// the build for this Node (src/store/driver.ts): importing better-sqlite3 directly loads 13, which Node 20 cannot run
const BetterSqlite3 = sqliteDriver();

const INJECT = new URL('../support/inject-fault.ts', import.meta.url).pathname;

/** log lines to write into a reader that stopped: ~500 kB, twice what a pipe or socket buffers */
const STALL_REQUESTS = 2000;

let d: ChildDemo | undefined;
afterEach(async () => {
  await d?.cleanup();
  d = undefined;
});

describe('a fault that escapes every handler', () => {
  /**
   * a reading is in, so there is a bucket in progress to save. At real speed: the stop closes the
   * buckets ended before it, and a boundary between the poller's last reading and the stop leaves
   * none in progress. At speed 60 a slow stop on a busy CI machine (seconds of real time, minutes
   * of simulated) crossed one; at 1 that window is a second or two of a 15-minute bucket.
   */
  const firstReading = async (demo: ChildDemo) => {
    const token = await partnerToken(demo.credentials);
    await waitFor('a first reading', async () => {
      const r = await get(`${demo.url}/api/v1/devices`, bearer(token));
      return r.body.devices.some((x: { lastSeen: string | null }) => x.lastSeen !== null);
    });
  };
  const openBuckets = (demo: ChildDemo) => {
    const db = new BetterSqlite3(join(demo.dataDir, 'sitegw.db'), { readonly: true });
    try {
      return db.prepare('SELECT COUNT(*) FROM open_buckets').pluck().get() as number;
    } finally {
      db.close();
    }
  };

  for (const kind of ['rejection', 'exception'] as const) {
    it(`an unhandled ${kind}: fatal log line with the stack, ordered stop, exit ${EXIT_FATAL}`, async () => {
      d = await childDemo({ nodeArgs: ['--import', INJECT], env: { SITEGW_INJECT: kind } });
      await firstReading(d);
      d.child.kill('SIGWINCH');
      expect(await d.exit).toEqual({ code: EXIT_FATAL, signal: null });

      const lines = logLines(d.out());
      const fatal = lines.findIndex((l) => l.level === 60);
      expect(fatal).toBeGreaterThanOrEqual(0);
      const err = lines[fatal]!.err as { message: string; stack: string };
      expect(err.message).toBe(`injected ${kind === 'rejection' ? 'unhandled rejection' : 'uncaught exception'}`);
      expect(err.stack).toContain('inject-fault.ts');
      expect(lines.findIndex((l) => l.msg === 'sitegw stopped')).toBeGreaterThan(fatal);
      expect(openBuckets(d)).toBeGreaterThan(0);
    });
  }

  // The log's write policy (src/core/log.ts): a log channel that stalls or breaks costs log lines,
  // never the stop. Both cases hung with pino's default destination, whose flushSync (after
  // fatal() and at exit) retried a failed write for ever with a blocking sleep between tries.

  it('with the log reader stalled (stdout full, as when journald stops reading): SIGTERM still stops in order, exit 0', async () => {
    d = await childDemo();
    await firstReading(d);
    // the reader stops: once node's buffer is full it stops reading the pipe, which then fills
    d.child.stdout!.pause();
    // every request is a log line: ~250 bytes, far more than the pipe holds
    const token = await partnerToken(d.credentials);
    for (let batch = 0; batch < STALL_REQUESTS / 8; batch++) {
      await Promise.all(Array.from({ length: 8 }, () => get(`${d!.url}/api/v1/devices`, bearer(token))));
    }
    d.child.kill('SIGTERM');
    expect(await d.exit).toEqual({ code: 0, signal: null });
    expect(openBuckets(d)).toBeGreaterThan(0);
  });

  it('with the log channel gone (stdout and stderr closed, as when journald goes away): no hang, the stop still runs, exit 70', async () => {
    d = await childDemo();
    await firstReading(d);
    d.child.stdout!.destroy();
    d.child.stderr!.destroy();
    // the stop's own lines meet the broken pipes (EPIPE): a fault of the log channel itself
    d.child.kill('SIGTERM');
    expect(await d.exit).toEqual({ code: EXIT_FATAL, signal: null });
    expect(openBuckets(d)).toBeGreaterThan(0);
  });
});
