/**
 * The built gateway on another Node or architecture, as installed: .ci/arm64-smoke.sh sets
 * SITEGW_SMOKE_NODE (the command that runs that Node, e.g. qemu-aarch64-static … bin/node) and
 * SITEGW_SMOKE_APP (a folder with dist/ and node_modules built for it). The demo starts with the
 * node flags of systemd/sitegw.service, as on a Pi, answers the API with data for a partner's
 * token, and stops cleanly on SIGTERM.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import { partnerToken } from '../support/auth.js';
import { getJson } from '../support/demo.js';
import { unitRuntime } from '../support/unit-runtime.js';
import { killLeftover, type SpawnedDemo, spawnDemo } from './spawned-demo.js';

const NODE = process.env.SITEGW_SMOKE_NODE?.split(' ');
const APP = process.env.SITEGW_SMOKE_APP;
if (!NODE || !APP)
  console.warn(
    '\n*** test/runtime/arm64-smoke.test.ts: SKIPPED, it runs from .ci/arm64-smoke.sh (which sets SITEGW_SMOKE_NODE and SITEGW_SMOKE_APP) ***\n',
  );

const dir = mkdtempSync(join(tmpdir(), 'sitegw-smoke-'));
let demo: SpawnedDemo | undefined;
afterAll(() => {
  killLeftover(demo);
  rmSync(dir, { recursive: true, force: true });
});

// under qemu the JIT is emulated: a start takes minutes where it takes seconds natively
it.skipIf(!NODE || !APP)(
  'the built demo on the given Node: topology and telemetry with a token, then a clean stop',
  { timeout: 900_000 },
  async () => {
    const [cmd, ...pre] = NODE!;
    const which = spawnSync(cmd!, [...pre, '-p', 'process.version + " " + process.arch'], { encoding: 'utf8' });
    console.log(`smoke: Node ${which.stdout.trim()}`);
    demo = spawnDemo(
      cmd!,
      [
        ...pre,
        ...unitRuntime().args,
        join(APP!, 'dist/cli.js'),
        'demo',
        '--port',
        '0',
        '--data-dir',
        join(dir, 'data'),
        '--speed',
        '60',
        '--history',
        'PT1H',
      ],
      APP!,
      800_000,
    );
    const url = await demo.url;
    await demo.filled; // the pre-filled hour, behind the banner
    const token = await partnerToken(
      JSON.parse(readFileSync(join(dir, 'data', 'demo-credentials.json'), 'utf8')) as DemoCredentials,
    );
    const topo = await getJson(`${url}/api/v1/sites/demo-site/topology`, token);
    expect(topo.status).toBe(200);
    expect(topo.body.topology.nodes.length).toBeGreaterThan(0);
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const tel = await getJson(
      `${url}/api/v1/devices/grid-meter__GRID_METER_DERIVED/telemetry?interval=${from}/P1D`,
      token,
    );
    expect(tel.status).toBe(200);
    expect(tel.body.entries.length).toBeGreaterThanOrEqual(3); // the pre-filled hour's buckets
    console.log(
      `smoke: topology of ${topo.body.topology.id} with ${topo.body.topology.nodes.length} nodes; telemetry ${tel.body.entries.length} buckets, the last ${JSON.stringify(tel.body.entries.at(-1))}`,
    );
    demo.child.kill('SIGTERM');
    expect(await demo.exit).toEqual({ code: 0, signal: null });
  },
);
