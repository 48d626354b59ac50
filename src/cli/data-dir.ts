/**
 * Where the installer's commands (clients, owner, tls) find the data directory: the site.yaml the
 * daemon runs with (devices are then checked against it) or the directory itself. They work on it
 * while the daemon runs: the daemon re-reads a client and its tokens after any change to the database.
 */
import { join, resolve } from 'node:path';
import type { SiteConfig } from '../config/types.js';
import { type Database, openDatabase } from '../store/db.js';
import { loadSiteConfig } from './config.js';
import { EXIT, type Output, printError } from './output.js';

export const WHERE_OPTIONS = {
  config: { type: 'string', short: 'c' },
  'data-dir': { type: 'string' },
} as const;

export const WHERE_USAGE = '(--config FILE | --data-dir DIR)';

export interface Target {
  dataDir: string;
  config?: SiteConfig;
}

/** The target, or the exit code after printing why there is none. */
export async function target(
  command: string,
  values: { config?: string; 'data-dir'?: string },
  io: Output,
): Promise<Target | number> {
  if (values.config) {
    const loaded = await loadSiteConfig(values.config, io);
    return loaded.ok ? { dataDir: loaded.config.dataDir, config: loaded.config } : loaded.exit;
  }
  if (values['data-dir']) return { dataDir: resolve(values['data-dir']) };
  printError(io, command, 'give --config FILE (the site.yaml the daemon runs with) or --data-dir DIR');
  return EXIT.USAGE;
}

export async function withDb<T>(dataDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = openDatabase(join(dataDir, 'sitegw.db'));
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}
