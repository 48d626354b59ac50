/** `sitegw backup --config FILE OUT`: a checked copy of the database while the daemon runs (src/ops/backup.ts). */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { backupDatabase } from '../ops/backup.js';
import { loadSiteConfig } from './config.js';
import { EXIT, type Output, printUsage, stdio } from './output.js';

export async function backupCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string', short: 'c' } },
  });
  const [out, ...more] = positionals;
  if (!values.config || out === undefined || more.length > 0) {
    printUsage(io, ['sitegw backup --config FILE OUT']);
    return EXIT.USAGE;
  }
  const loaded = await loadSiteConfig(values.config, io);
  if (!loaded.ok) return loaded.exit;
  const r = await backupDatabase(join(loaded.config.dataDir, 'sitegw.db'), out);
  io.out(`backup written: ${r.file} (${r.bytes} bytes, checked)\n`);
  return EXIT.OK;
}
