/** `sitegw run --config FILE`: the gateway against the devices in site.yaml, until a signal. */
import { parseArgs } from 'node:util';
import { createLogger } from '../core/log.js';
import { Daemon } from '../main.js';
import { StorageOpenError } from '../ops/integrity.js';
import { loadSiteConfig } from './config.js';
import { EXIT, type Output, printError, stdio } from './output.js';
import { watchSignals } from './until-signal.js';

export async function runCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } } });
  if (!values.config) {
    printError(io, 'run', '--config FILE is required (see examples/site.example.yaml)');
    return EXIT.USAGE;
  }
  const loaded = await loadSiteConfig(values.config, io);
  if (!loaded.ok) return loaded.exit;
  const { config } = loaded;
  const signals = watchSignals(io);
  // Daemon.start has stopped what it started when it throws; a taken port is the installer's to fix
  const daemon = await Daemon.start({ config, log: createLogger() }).catch((err: NodeJS.ErrnoException) => {
    // a data directory that is read-only or failing: one line with the path, SQLite's code and the errno
    if (err instanceof StorageOpenError) {
      printError(io, 'run', err.message);
      return null;
    }
    if (err.code !== 'EADDRINUSE' || err.syscall !== 'listen') throw err;
    const { host, port } = config.http;
    const fix = 'set http.port in site.yaml or stop the other program';
    printError(io, 'run', `port ${port} on ${host} is already in use: ${fix}`);
    return null;
  });
  return daemon ? signals.until(() => daemon.stop(), daemon.ctx.log) : EXIT.FAILURE;
}
