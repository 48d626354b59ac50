/**
 * `sitegw run` on an HTTP port another program holds: the installer gets one line that says what
 * to change, exit code 1, no stack trace, and the process ends on its own.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { sitegwCommand } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;

it('run: a taken HTTP port ends with one clear line and exit code 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-cli-port-'));
  const clock = new ScaledClock(1);
  const servers = await startSimServers(new SimSite(undefined, clock.now()), clock, { host: '127.0.0.1' });
  const squatter = createServer();
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
  try {
    const port = (squatter.address() as AddressInfo).port;
    const file = join(dir, 'site.yaml');
    writeFileSync(
      file,
      demoSiteYaml(servers, {
        httpHost: '127.0.0.1',
        httpPort: port,
        dataDir: 'data',
        pollSeconds: 1,
        batteryBlocks: 2,
      }),
    );
    const child = spawn(...sitegwCommand(['run', '--config', file]), {
      cwd: ROOT,
      env: { ...process.env, SITEGW_LOG_LEVEL: 'info', SITEGW_DEBUG: '' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(err).toBe(
      `sitegw run: port ${port} on 127.0.0.1 is already in use: set http.port in site.yaml or stop the other program\n`,
    );
    expect(code).toBe(1);
    // the daemon had got as far as its store (so there was something to undo); no log line carries a stack
    expect(out).toContain('start failed: stopping the features already started');
    expect(out).not.toContain('"stack"');
  } finally {
    squatter.close();
    await servers.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
