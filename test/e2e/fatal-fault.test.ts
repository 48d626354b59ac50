/**
 * The process's last line of defence (src/ops/fatal.ts) in `sitegw demo` as its own process: a
 * fault no handler contained is logged at fatal level with its stack, the daemon stops in order
 * (the open buckets are saved) and the process exits with 70 for systemd to restart it.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_FATAL } from '../../src/ops/fatal.js';
import { get, bearer, partnerToken } from '../support/auth.js';
import { childDemo, logLines, type ChildDemo } from '../support/child-daemon.js';
import { waitFor } from '../support/demo.js';

const INJECT = new URL('../support/inject-fault.ts', import.meta.url).pathname;

let d: ChildDemo | undefined;
afterEach(async () => {
  await d?.cleanup();
  d = undefined;
});

describe('a fault that escapes every handler', () => {
  for (const kind of ['rejection', 'exception'] as const) {
    it(`an unhandled ${kind}: fatal log line with the stack, ordered stop, exit ${EXIT_FATAL}`, async () => {
      d = await childDemo({ nodeArgs: ['--import', INJECT], args: ['--speed', '60'], env: { SITEGW_INJECT: kind } });
      const token = await partnerToken(d.credentials);
      // a reading is in, so there is a bucket in progress to save
      await waitFor('a first reading', async () => {
        const r = await get(`${d!.url}/api/v1/devices`, bearer(token));
        return r.body.devices.some((x: { lastSeen: string | null }) => x.lastSeen !== null);
      });
      d.child.kill('SIGWINCH');
      expect(await d.exit).toEqual({ code: EXIT_FATAL, signal: null });

      const lines = logLines(d.out());
      const fatal = lines.findIndex((l) => l.level === 60);
      expect(fatal).toBeGreaterThanOrEqual(0);
      const err = lines[fatal]!.err as { message: string; stack: string };
      expect(err.message).toBe(`injected ${kind === 'rejection' ? 'unhandled rejection' : 'uncaught exception'}`);
      expect(err.stack).toContain('inject-fault.ts');
      expect(lines.findIndex((l) => l.msg === 'sitegw stopped')).toBeGreaterThan(fatal);
      const db = new BetterSqlite3(join(d.dataDir, 'sitegw.db'), { readonly: true });
      try {
        expect((db.prepare('SELECT COUNT(*) FROM open_buckets').pluck().get() as number)).toBeGreaterThan(0);
      } finally {
        db.close();
      }
    });
  }
});
