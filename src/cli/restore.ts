/** `sitegw restore --config FILE BACKUP`: a backup in place of the database, with the gateway stopped (src/ops/backup.ts). */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { restoreDatabase } from '../ops/backup.js';
import { loadSiteConfig } from './config.js';
import { EXIT, type Output, printError, printUsage, stdio } from './output.js';

export async function restoreCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string', short: 'c' } },
  });
  const [backup, ...more] = positionals;
  if (!values.config || backup === undefined || more.length > 0) {
    printUsage(io, ['sitegw restore --config FILE BACKUP   (stop the service first)']);
    return EXIT.USAGE;
  }
  const loaded = await loadSiteConfig(values.config, io);
  if (!loaded.ok) return loaded.exit;
  try {
    const r = restoreDatabase(backup, join(loaded.config.dataDir, 'sitegw.db'));
    const kept = r.movedAside.length > 0 ? `; the files it replaced are kept as ${r.movedAside.join(', ')}` : '';
    io.out(`restored ${backup} (${r.bytes} bytes, checked)${kept}\n`);
    return EXIT.OK;
  } catch (err) {
    printError(io, 'restore', (err as Error).message);
    return EXIT.FAILURE;
  }
}
