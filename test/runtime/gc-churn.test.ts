/**
 * The abort that made the gateway crash-loop on Node 24 (WiseLibs/better-sqlite3#1515):
 * better-sqlite3 12 finalising a prepared statement (or a database) from GC asserts inside Node
 * (>= 24.19) and the process dies with SIGABRT. The finalisation that aborts is a young-generation
 * GC (scavenge) started by allocation while the dropped statement is still young. A gc() call,
 * minor or major, and a full collection started by allocation finalised the same statements
 * without the abort (Node 24.21.0, measured). So the earlier version of this test, gc() every
 * 200 ms, tidied the garbage statements away safely and failed only when a scavenge during
 * start-up got there first.
 *
 * The real CLI runs the demo with a 1 MB young generation and young-gc-after-response.ts, which
 * allocates more than that after every HTTP response. Each round's token request makes the store
 * prepare and drop statements (the client lookup and the token's INSERT are not cached), the
 * reads go through the rest of the API, then SIGTERM: exit 0, no abort, and the garbage did start
 * scavenges. It runs on every runtime.
 *
 * With better-sqlite3 12 compiled for Node 24.21.0 and loaded there (a throw-away change to
 * src/store/driver.ts), `.ci/with-node.sh 24 npx vitest run test/runtime/gc-churn.test.ts` failed
 * in 10 of 10 runs (SIGABRT in 9 while starting, in 1 during the requests); with the driver's
 * probe database and every statement prepared before the first request kept alive, 10 of 10 (5
 * during the requests). The gc()-every-200-ms version: 9 of 10, and 5 of 10 with that start-up
 * garbage kept alive, none of them during the requests. With the drivers as shipped it passed
 * 10 of 10 on Node 24.21.0 and on Node 20.20.2.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import { partnerToken } from '../support/auth.js';
import { getJson } from '../support/demo.js';
import { killLeftover, type SpawnedDemo, spawnDemo } from './spawned-demo.js';

const ROOT = new URL('../../', import.meta.url).pathname;
/** rounds of a new token (its client lookup and INSERT are prepared for it) and two reads */
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

it(`Node ${process.versions.node}: statement churn, young-generation GCs after each response, SIGTERM: exit 0, no abort`, {
  timeout: 180_000,
}, async () => {
  demo = spawnDemo(
    process.execPath,
    [
      '--max-semi-space-size=1',
      '--import',
      'tsx',
      '--import',
      join(ROOT, 'test/runtime/young-gc-after-response.ts'),
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
  const url = await demo.url
    .then(async (u) => {
      await demo!.filled; // the pre-filled history, behind the banner
      return u;
    })
    .catch((e: Error) => {
      throw new Error(`${abortLine(demo!.err()) ?? ''} ${e.message}`.trim());
    });
  const creds = JSON.parse(readFileSync(join(dir, 'data', 'demo-credentials.json'), 'utf8')) as DemoCredentials;
  const from = new Date(Date.now() - 86_400_000).toISOString();
  // a request the abort cut off fails with a socket error; the exit and Node's assertion say why
  const churn = await (async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const token = await partnerToken(creds);
      const topo = await getJson(`${url}/api/v1/sites/demo-site/topology`, token);
      const tel = await getJson(
        `${url}/api/v1/devices/grid-meter__GRID_METER_DERIVED/telemetry?interval=${from}/P1D`,
        token,
      );
      if (topo.status !== 200 || tel.status !== 200 || !(tel.body.entries.length > 0))
        return `round ${i}: topology ${topo.status}, telemetry ${tel.status} ${JSON.stringify(tel.body).slice(0, 200)}`;
    }
    return 'done';
  })().catch((e: Error) => `${e.message}: ${String(e.cause)}`);
  demo.child.kill('SIGTERM');
  const exit = await demo.exit;
  expect({ churn, ...exit, abort: abortLine(demo.err()) }).toEqual({
    churn: 'done',
    code: 0,
    signal: null,
    abort: null,
  });
  // the churn met the collections: the garbage after each of a round's three responses starts some
  const young = /gc-churn: (\d+) young-generation GCs/.exec(demo.err())?.[1];
  expect(Number(young)).toBeGreaterThanOrEqual(3 * ROUNDS);
});
