/**
 * What an SD card and its filesystem do to the data directory, for the storage fault tests and
 * the storage invariant harness (test/faults/storage-*.test.ts, bench/storage-faults.ts): a tmpfs
 * of the test's own (root only: CI runs as root) that can be filled or made read-only, damage to
 * a database file between lives, and `sitegw run` as a child whose URL is read from its log.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ROOT, sitegwCommand } from './cli.js';
import { waitFor } from './demo.js';

/** null when this process may mount a tmpfs of its own; why not otherwise */
export function whyNoMount(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  return null;
}

export function mountTmpfs(dir: string, size = '16m'): void {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  if (r.status !== 0) throw new Error(`mount ${dir}: ${r.stderr.toString().trim()}`);
}

/** The filesystem read-only (`ro`) or writable again (`rw`), as a card the kernel remounted after errors. */
export function remount(dir: string, mode: 'ro' | 'rw'): void {
  const r = spawnSync('mount', ['-o', `remount,${mode}`, dir]);
  if (r.status !== 0) throw new Error(`remount ${mode} ${dir}: ${r.stderr.toString().trim()}`);
}

export function unmount(dir: string): void {
  spawnSync('umount', ['-l', dir]);
}

/** Fills the filesystem of `dir` until ENOSPC; the file to delete for room again. */
export function fillDisk(dir: string): string {
  const f = join(dir, 'filler');
  const fd = openSync(f, 'a');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return f;
}

/** mulberry32: a small seeded PRNG, so a failing seed replays the same faults */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Damage = 'truncate' | 'noise' | 'torn';

/**
 * Damages a database as a card does: cut at a random page (a lost tail), 8 KiB of noise at a
 * random page, or the second half of a few pages zeroed (writes torn at power loss). Returns what
 * was done, for the log of a failing seed.
 */
export function damageFile(db: string, kind: Damage, rand: () => number): string {
  // after a SIGKILL a young database may be one page with everything in its WAL: the WAL is damaged then
  const wal = `${db}-wal`;
  const file = statSync(db).size < 4 * 4096 && existsSync(wal) && statSync(wal).size >= 4 * 4096 ? wal : db;
  const size = statSync(file).size;
  const pages = Math.floor(size / 4096);
  if (pages < 4) return `${kind}: ${basename(file)} too small (${size} bytes)`;
  const page = () => 2 + Math.floor(rand() * (pages - 2));
  if (kind === 'truncate') {
    const at = page() * 4096;
    truncateSync(file, at);
    return `${basename(file)} truncated at ${at}`;
  }
  const fd = openSync(file, 'r+');
  try {
    if (kind === 'noise') {
      const at = page() * 4096;
      const noise = Buffer.alloc(8192);
      for (let i = 0; i < noise.length; i++) noise[i] = Math.floor(rand() * 256);
      writeSync(fd, noise, 0, noise.length, at);
      return `${basename(file)}: 8 KiB of noise at ${at}`;
    }
    const torn = [page(), page(), page()];
    for (const p of torn) writeSync(fd, Buffer.alloc(2048), 0, 2048, p * 4096 + 2048);
    return `${basename(file)}: pages ${torn.join(', ')} torn`;
  } finally {
    closeSync(fd);
  }
}

/** The WAL and its index of `dbFile` removed (an operator's rm, a cleaner), as finding 7 did. */
export function removeWal(dbFile: string): string[] {
  const gone = readdirSync(dirname(dbFile)).filter((n) => n.endsWith('-wal'));
  for (const n of gone) rmSync(join(dirname(dbFile), n), { force: true });
  return gone;
}

export interface SitegwRun {
  child: ChildProcess;
  url: string;
  out: () => string;
  exit: Promise<number | null>;
}

/** `sitegw run --config FILE` as a child, resolved once it logged its URL. */
export async function runSitegw(config: string, env: Record<string, string> = {}): Promise<SitegwRun> {
  const child = spawn(...sitegwCommand(['run', '--config', config]), {
    cwd: ROOT,
    env: { ...process.env, SITEGW_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  const url = await Promise.race([
    waitFor('sitegw started', () => /"url":"(http:[^"]+)".*sitegw started/.exec(out)?.[1], 60_000),
    exit.then((c) => Promise.reject(new Error(`sitegw run exited (${c}): ${out.slice(-2000)}`))),
  ]);
  return { child, out: () => out, url, exit };
}

/** SIGTERM (a clean stop) or SIGKILL, and its exit awaited. */
export async function stopSitegw(r: SitegwRun, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill(signal);
  await r.exit;
}
