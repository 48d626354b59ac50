/**
 * `sitegw migrate --config FILE`: brings the database to this version's schema (the daemon does the
 * same at start). The Debian package's postinst runs it on upgrade while the service is stopped,
 * so a failed migration shows at `apt upgrade`, not as a crash loop after it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { schemaVersion } from '../store/db.js';
import { target, WHERE_OPTIONS, WHERE_USAGE, withDb } from './data-dir.js';
import { EXIT, type Output, printUsage, stdio } from './output.js';

export async function migrateCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: WHERE_OPTIONS });
  if (positionals.length > 0) {
    printUsage(io, [`sitegw migrate ${WHERE_USAGE}`]);
    return EXIT.USAGE;
  }
  const t = await target('migrate', values, io);
  if (typeof t === 'number') return t;
  const file = join(t.dataDir, 'sitegw.db');
  if (!existsSync(file)) {
    io.out(`no database at ${file} yet: the gateway creates it at its first start\n`);
    return EXIT.OK;
  }
  const version = await withDb(t.dataDir, async (db) => schemaVersion(db));
  io.out(`${file}: schema version ${version}\n`);
  return EXIT.OK;
}
