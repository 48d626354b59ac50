/**
 * Which better-sqlite3 build opens the store on this Node.
 *
 * better-sqlite3 12 aborts the process on Node >= 24.19 (its Statement finalised by GC or at exit
 * calls node::RemoveEnvironmentCleanupHook without an environment: WiseLibs/better-sqlite3#1515).
 * 13 fixes it by moving to Node-API and ships prebuilt binaries, but needs Node-API 10 (Node
 * >= 22.14) and segfaults when Node 20 loads it. So both are installed (12 under the alias
 * `better-sqlite3-node20`, optional because only Node 20 needs it compiled) and the version picks
 * one before anything is loaded: a wrong pairing cannot be caught once its addon is in the
 * process. Both have the same API and the same SQLite build options, so the store is one code.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type SqliteDriver = typeof BetterSqlite3;

/** What package.json `engines` says; a test keeps the two equal. */
export const SUPPORTED_NODE = '^20.19.0 || >=22.14.0';

export type DriverChoice =
  | { ok: true; pkg: 'better-sqlite3' | 'better-sqlite3-node20' }
  | { ok: false; reason: string };

export function chooseDriver(nodeVersion: string): DriverChoice {
  const [major = 0, minor = 0] = nodeVersion.replace(/^v/, '').split('.').map(Number);
  if (major === 20 && minor >= 19) return { ok: true, pkg: 'better-sqlite3-node20' };
  if ((major === 22 && minor >= 14) || major > 22) return { ok: true, pkg: 'better-sqlite3' };
  return {
    ok: false,
    reason: `sitegw does not run on Node ${nodeVersion}: it needs Node ${SUPPORTED_NODE} (docs/install.md)`,
  };
}

/** The store cannot open on this runtime; the message is one line for the installer. */
export class DriverUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DriverUnavailableError';
  }
}

const HOW_TO_GET: Record<'better-sqlite3' | 'better-sqlite3-node20', string> = {
  'better-sqlite3-node20':
    'on Node 20 it is compiled at install: install build-essential and python3, then run npm rebuild better-sqlite3-node20',
  'better-sqlite3':
    'it ships prebuilt for 64-bit Linux (x64, arm64); elsewhere build it with npx node-gyp rebuild in its folder',
};

let loaded: SqliteDriver | null = null;

/**
 * The driver for this process, loaded once and proven to open a database (which loads its native
 * addon). Throws DriverUnavailableError rather than loading a build that would crash the process.
 */
export function sqliteDriver(): SqliteDriver {
  if (loaded) return loaded;
  const nodeVersion = process.versions.node;
  const choice = chooseDriver(nodeVersion);
  if (!choice.ok) throw new DriverUnavailableError(choice.reason);
  let driver: SqliteDriver;
  try {
    driver = createRequire(import.meta.url)(choice.pkg) as SqliteDriver;
    new driver(':memory:').close();
  } catch (err) {
    const first = String((err as Error).message ?? err).split('\n')[0];
    throw new DriverUnavailableError(
      `sitegw cannot open its database on Node ${nodeVersion}: the SQLite driver ${choice.pkg} did not load (${first}); ${HOW_TO_GET[choice.pkg]}`,
    );
  }
  loaded = driver;
  return driver;
}
