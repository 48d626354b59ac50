/**
 * `sitegw run` as the package starts it on a fresh box: the placeholder site.yaml (with where the
 * test's gateway listens and keeps its data), the first-run page's URL from its log line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UNCONFIGURED_MARK } from '../../src/setup/site-yaml.js';
import { ROOT, sitegwCommand } from './cli.js';
import { waitFor } from './demo.js';
import { freePort } from './free-port.js';

export interface PlaceholderRun {
  /** the placeholder site.yaml, which the first-run page replaces */
  file: string;
  /** the first-run page, as its log line gives it */
  url: string;
  /** stdout and stderr so far */
  output(): string;
  /** SIGKILL unless it has exited, and its exit awaited */
  kill(): Promise<void>;
}

export async function runOnPlaceholder(dir: string, env: NodeJS.ProcessEnv = {}): Promise<PlaceholderRun> {
  const file = join(dir, 'site.yaml');
  const port = await freePort();
  writeFileSync(
    file,
    `${UNCONFIGURED_MARK}\n# written by the test\nhttp: { host: 127.0.0.1, port: ${port} }\ndataDir: ./data\n`,
  );
  let out = '';
  const child: ChildProcess = spawn(...sitegwCommand(['run', '--config', file]), {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
  };
  try {
    const url = await waitFor('the first-run log line', () => /"url":"(https?:[^"]+)"/.exec(out)?.[1], 60_000);
    return { file, url, output: () => out, kill };
  } catch (err) {
    await kill();
    throw err;
  }
}
