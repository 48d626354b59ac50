/**
 * socat for the RTU tests: a pair of linked pseudo-terminals is a null-modem RS-485 line (the
 * simulator on one end, the gateway on the other), and a TCP listener bridged to a pty is a
 * transparent serial server. CI installs socat (.ci/run); without it these tests are skipped and
 * say so.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const HAVE_SOCAT = spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;
export const NO_SOCAT =
  'socat is not installed: the Modbus RTU tests are SKIPPED (apt-get install socat; .ci/run installs it)';
if (!HAVE_SOCAT) process.stderr.write(`\n*** ${NO_SOCAT} ***\n\n`);

export interface PtyPair {
  /** the simulator's end */
  a: string;
  /** the gateway's end */
  b: string;
  /** tear the line down (both paths disappear) */
  close(): Promise<void>;
}

async function waitForPaths(paths: string[], child: ChildProcess, stderr: () => string): Promise<void> {
  const until = Date.now() + 5000;
  while (!paths.every((p) => existsSync(p))) {
    if (child.exitCode !== null) throw new Error(`socat exited: ${stderr()}`);
    if (Date.now() > until) throw new Error(`socat did not create ${paths.join(', ')}: ${stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function stopper(child: ChildProcess, dir?: string): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () =>
    (closing ??= new Promise<void>((resolve) => {
      const done = () => {
        if (dir) rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null) return done();
      child.once('exit', done);
      child.kill('SIGTERM');
    }));
}

/** Two linked ptys (raw, no echo), as symlinks in a fresh folder; `dir` reuses a folder (to recreate a line at the same paths). */
export async function ptyPair(
  dir: string = mkdtempSync(join(tmpdir(), 'sitegw-pty-')),
): Promise<PtyPair & { dir: string }> {
  const a = join(dir, 'sim');
  const b = join(dir, 'gw');
  const child = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  await waitForPaths([a, b], child, () => err);
  return { a, b, dir, close: stopper(child) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** A transparent serial server for one client: TCP on 127.0.0.1:port, its bytes to and from the pty at `serial`. */
export async function serialServer(): Promise<{ port: number; serial: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-ser2net-'));
  const serial = join(dir, 'line');
  const port = await freePort();
  // the pty first: socat creates it, then listens for the one client it bridges
  const child = spawn('socat', [`pty,raw,echo=0,link=${serial}`, `tcp-listen:${port},bind=127.0.0.1,reuseaddr`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  await waitForPaths([serial], child, () => err);
  return { port, serial, close: stopper(child, dir) };
}
