import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Demo, type DemoOptions, startDemo } from '../../src/demo/demo.js';

/** A demo site on free ports and a throw-away data directory; `cleanup` stops it and removes the folder. */
export async function demoSite(
  opts: Partial<DemoOptions> = {},
): Promise<Demo & { dataDir: string; cleanup: () => Promise<void> }> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'sitegw-test-'));
  // without the demo's export limit unless a test asks: the limits loop's one-second reads are its own tests' concern
  const demo = await startDemo({
    port: 0,
    modbusPorts: 'auto',
    speed: 1,
    quiet: true,
    exportLimitW: null,
    ...opts,
    dataDir,
  });
  return Object.assign(demo, {
    dataDir,
    cleanup: async () => {
      await demo.stop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

/** Poll a condition on real time; fail with the last value seen, so a timeout says why. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last: ${String(last)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** GET a JSON answer; with a token it goes as `Authorization: Bearer` (every API route needs one). */
export async function getJson(url: string, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}
