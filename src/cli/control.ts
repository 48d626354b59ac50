/**
 * `sitegw control release --config FILE`: puts every storage system back in self-consumption and
 * restores what control changed, audited in the data directory's database (src/control/release.ts). With `control.enabled: false` nothing was ever written, and nothing is.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { releaseStorage } from '../control/release.js';
import { unconfigured } from '../setup/site-yaml.js';
import { type Database, openDatabase } from '../store/db.js';
import { loadSiteConfig } from './config.js';
import { EXIT, type Output, printUsage, stdio } from './output.js';

const FORMS = ['sitegw control release --config FILE'];

export async function controlCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string' } },
  });
  if (positionals.length !== 1 || positionals[0] !== 'release' || !values.config) {
    printUsage(io, FORMS);
    return EXIT.USAGE;
  }
  // the package's placeholder (the unit's ExecStopPost runs this after the first-run page too)
  if (unconfigured(values.config)) {
    io.out('site.yaml is the placeholder: sitegw is not set up, nothing was written, nothing to release\n');
    return EXIT.OK;
  }
  const loaded = await loadSiteConfig(values.config, io);
  if (!loaded.ok) return loaded.exit;
  if (!loaded.config.control.enabled) {
    io.out('control is off (control.enabled: false): nothing was written, nothing to release\n');
    return EXIT.OK;
  }
  // the audit and the values to restore are in the database; self-consumption goes out without it
  let db: Database | undefined;
  try {
    db = openDatabase(join(loaded.config.dataDir, 'sitegw.db'));
  } catch (err) {
    io.err(
      `control release: the database cannot be opened (${err instanceof Error ? err.message : String(err)}): self-consumption only, nothing restored or audited\n`,
    );
  }
  try {
    const results = await releaseStorage(loaded.config, db);
    for (const r of results) io.out(`${r.deviceId}: ${r.ok ? '' : 'FAILED: '}${r.detail}\n`);
    return results.every((r) => r.ok) ? EXIT.OK : EXIT.FAILURE;
  } finally {
    db?.close();
  }
}
