/**
 * The abort that made the gateway crash-loop on Node 24 (WiseLibs/better-sqlite3#1515):
 * better-sqlite3 12 finalising a prepared statement from GC, or at exit, asserts inside Node
 * (>= 24.19) and the process dies with SIGABRT. The real CLI runs the demo with GC forced every
 * 200 ms while API requests make the store prepare and drop statements (each token is an INSERT
 * prepared for it, each read its SELECTs), then stops on SIGTERM: exit 0 and no abort. It runs on
 * every runtime. The abort needs a finalisation outside a JS context, and GC timing decides whether
 * one happens: with better-sqlite3 12 on Node 24 this test caught it in some runs, not all.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import { partnerToken } from '../support/auth.js';
import { getJson } from '../support/demo.js';
import { killLeftover, type SpawnedDemo, spawnDemo } from './spawned-demo.js';

const ROOT = new URL('../../', import.meta.url).pathname;
/** rounds of a new token (its INSERT is prepared for it) and two reads, under GC every 200 ms */
const ROUNDS = 20;

/** Node's own report of the abort (a failed assertion in its C++), or null */
const abortLine = (stderr: string): string | null =>
  /.*Assertion failed.*|.*RemoveEnvironmentCleanupHook.*/.exec(stderr)?.[0]?.trim() ?? null;

const dir = mkdtempSync(join(tmpdir(), 'sitegw-gc-churn-'));
let demo: SpawnedDemo | undefined;
afterAll(() => {
  killLeftover(demo);
  rmSync(dir, { recursive: true, force: true });
});

it(`Node ${process.versions.node}: statement churn under forced GC, then SIGTERM: exit 0, no abort`, {
  timeout: 180_000,
}, async () => {
  const forceGc = join(dir, 'force-gc.mjs');
  writeFileSync(forceGc, 'setInterval(() => globalThis.gc(), 200).unref();\n');
  demo = spawnDemo(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      forceGc,
      '--import',
      'tsx',
      join(ROOT, 'src/cli.ts'),
      'demo',
      '--port',
      '0',
      '--data-dir',
      join(dir, 'data'),
      '--speed',
      '60',
      '--history',
      'PT2H',
    ],
    ROOT,
    90_000,
  );
  // Node's assertion first: the rest of stderr is its native stack
  const url = await demo.url.catch((e: Error) => {
    throw new Error(`${abortLine(demo!.err()) ?? ''} ${e.message}`.trim());
  });
  const creds = JSON.parse(readFileSync(join(dir, 'data', 'demo-credentials.json'), 'utf8')) as DemoCredentials;
  const from = new Date(Date.now() - 86_400_000).toISOString();
  for (let i = 0; i < ROUNDS; i++) {
    const token = await partnerToken(creds);
    const topo = await getJson(`${url}/api/v1/sites/demo-site/topology`, token);
    expect(topo.status).toBe(200);
    const tel = await getJson(
      `${url}/api/v1/devices/grid-meter__GRID_METER_DERIVED/telemetry?interval=${from}/P1D`,
      token,
    );
    expect(tel.status).toBe(200);
    expect(tel.body.entries.length).toBeGreaterThan(0);
  }
  demo.child.kill('SIGTERM');
  expect({ ...(await demo.exit), abort: abortLine(demo.err()) }).toEqual({ code: 0, signal: null, abort: null });
});
