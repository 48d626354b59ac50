/**
 * `sitegw demo` as its own process (src/cli.ts through tsx), for tests whose subject is the
 * process itself: whether it stays alive, how it ends and what it logs on the way out.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import { waitFor } from './demo.js';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface ChildDemo {
  child: ChildProcess;
  url: string;
  dataDir: string;
  credentials: DemoCredentials;
  /** stdout so far: the daemon's JSON log lines and the demo banner */
  out: () => string;
  err: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive: () => boolean;
  /** SIGKILL if still running, then remove the data directory */
  cleanup: () => Promise<void>;
}

/** Starts the demo on a free port with a fresh data directory; `nodeArgs` go before the script (e.g. --import), `args` after `demo`. */
export async function childDemo(
  opts: { nodeArgs?: string[]; args?: string[]; env?: Record<string, string> } = {},
): Promise<ChildDemo> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-child-'));
  // node itself with tsx's loader, not the tsx launcher: signals then reach the daemon, and a
  // SIGKILL leaves no orphan behind
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      ...(opts.nodeArgs ?? []),
      join(ROOT, 'src/cli.ts'),
      'demo',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      ...(opts.args ?? []),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, SITEGW_LOG_LEVEL: 'info', ...opts.env },
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const cleanup = async () => {
    if (alive()) {
      child.kill('SIGKILL');
      await exit;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await Promise.race([
      waitFor(
        'the demo banner',
        () => out.includes('Ctrl-C') && /Energy Site API:\s+(http:\/\/\S+)/.exec(out)?.[1],
        60_000,
      ),
      exit.then((e) => Promise.reject(new Error(`the demo exited (${e.code ?? e.signal}) before it was up: ${err}`))),
    ]);
    const credentials = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8')) as DemoCredentials;
    return { child, url, dataDir, credentials, out: () => out, err: () => err, exit, alive, cleanup };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** The daemon's log lines (pino JSON) from its stdout; the banner's lines are skipped. */
export function logLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
