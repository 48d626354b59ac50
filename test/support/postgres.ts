/**
 * A throwaway PostgreSQL server for the consumer's PostgreSQL store: Debian's `postgresql`
 * package (which .ci/run installs), a cluster made with initdb in a temporary folder, on a free
 * loopback port, removed at the end. As root, the server runs as the package's `postgres` user,
 * since PostgreSQL refuses to run as root.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './mqtt-brokers.js';

/** The server programs' folder, newest version first; null when PostgreSQL is not installed. */
export const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
})();

/** CI installs PostgreSQL, so there a missing server is a failure, not a skip. */
export const SKIP_POSTGRES = !PG_BIN && !process.env.CI;

export function notePostgresSkipped(file: string): void {
  if (SKIP_POSTGRES)
    console.warn(
      `\n*** ${file}: PostgreSQL is not installed: its PostgreSQL tests are SKIPPED (apt-get install postgresql; .ci/run installs it) ***\n`,
    );
}

export interface TestPostgres {
  /** a URL of a new, empty database on the server */
  newDatabase(): Promise<string>;
  close(): Promise<void>;
}

const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
const gidOf = (user: string) => Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());

export async function startPostgres(): Promise<TestPostgres> {
  if (!PG_BIN) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  const run = (program: string, args: string[]) => {
    const [cmd, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, program), ...args]]
      : [join(PG_BIN, program), args];
    const r = spawnSync(cmd, argv as string[], { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${program} failed (${r.status}): ${r.stderr || r.stdout || r.error?.message}`);
  };
  const data = join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'sitegw', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off`;
  run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'log'), '-o', opts]);
  const url = (db: string) => `postgres://sitegw@127.0.0.1:${port}/${db}`;
  let n = 0;
  return {
    async newDatabase() {
      const name = `t${++n}`;
      const admin = new pg.Client({ connectionString: url('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    async close() {
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
