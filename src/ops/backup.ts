/**
 * `sitegw backup --config FILE OUT`: a consistent copy of the database while the daemon runs.
 * SQLite's online backup API (better-sqlite3 `db.backup()`) copies page by page from a second,
 * read-only connection; in WAL mode the daemon keeps writing meanwhile and the copy is one
 * snapshot. The copy is written beside OUT, checked with quick_check, then renamed into place,
 * so OUT is never half a file. It holds the API clients' and owner's hashed secrets: mode 0600.
 */
import { chmodSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../profiles/site-config.js';
import { formatConfigErrors } from '../yaml/format.js';
import { sqliteDriver } from '../store/driver.js';
import { quickCheck } from './integrity.js';

export interface BackupResult {
  file: string;
  bytes: number;
}

export async function backupDatabase(dbFile: string, out: string): Promise<BackupResult> {
  const target = resolve(out);
  if (existsSync(target)) throw new Error(`${target} exists; choose a new file name (a backup never overwrites)`);
  if (!existsSync(dbFile)) throw new Error(`no database at ${dbFile} (is dataDir right?)`);
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  const src = new (sqliteDriver())(dbFile, { readonly: true, fileMustExist: true });
  try {
    await src.backup(partial);
  } finally {
    src.close();
  }
  try {
    chmodSync(partial, 0o600);
    const problem = quickCheck(partial);
    if (problem !== null) throw new Error(`the copy failed its check (${problem}); the database itself may be damaged`);
    renameSync(partial, target);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return { file: target, bytes: statSync(target).size };
}

export async function backupCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { config: { type: 'string', short: 'c' } } });
  if (!values.config || positionals.length !== 1) {
    process.stderr.write('usage: sitegw backup --config FILE OUT\n');
    return 2;
  }
  const result = await loadConfig(values.config);
  if (!result.ok) {
    for (const line of formatConfigErrors(result.errors, values.config)) process.stderr.write(`${line}\n`);
    return result.unreadable ? 2 : 1;
  }
  const r = await backupDatabase(join(result.config.dataDir, 'sitegw.db'), positionals[0]!);
  process.stdout.write(`backup written: ${r.file} (${r.bytes} bytes, checked)\n`);
  return 0;
}
