/**
 * `sitegw control release --config FILE`: puts every storage system back in self-consumption
 * (src/control/release.ts). With `control.enabled: false` nothing was ever written, and nothing is.
 */
import { parseArgs } from 'node:util';
import { releaseStorage } from '../control/release.js';
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
  const loaded = await loadSiteConfig(values.config, io);
  if (!loaded.ok) return loaded.exit;
  if (!loaded.config.control.enabled) {
    io.out('control is off (control.enabled: false): nothing was written, nothing to release\n');
    return EXIT.OK;
  }
  const results = await releaseStorage(loaded.config);
  for (const r of results) io.out(`${r.deviceId}: ${r.ok ? '' : 'FAILED: '}${r.detail}\n`);
  return results.every((r) => r.ok) ? EXIT.OK : EXIT.FAILURE;
}
