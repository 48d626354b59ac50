/**
 * `sitegw run --config FILE`: the gateway against the devices in site.yaml, until a signal.
 *
 * A change saved on the owner's setup page (src/api/http/setup.ts) restarts the gateway inside
 * this process: the daemon stops as at a signal (buckets saved, batteries released), site.yaml
 * is read again through the same load, and a new daemon starts. One path for systemd, a
 * terminal and the tests alike, and the owner's session survives it (the page waits for the
 * new start). Under systemd the stop says RELOADING=1 and the start READY=1 (src/ops/feature.ts).
 * A file that fails at the restart (changed by hand meanwhile) ends the process with its exit
 * code, which systemd's Restart=always then retries. On the package's placeholder it first serves
 * the first-run page (first-run.ts), then starts the gateway on the site written there.
 */
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import type { SessionStore } from '../api/http/status-session.js';
import type { SiteConfig } from '../config/types.js';
import { createLogger } from '../core/log.js';
import { Daemon } from '../main.js';
import { StorageOpenError } from '../ops/integrity.js';
import { unconfigured } from '../setup/site-yaml.js';
import { loadSiteConfig } from './config.js';
import { firstRun } from './first-run.js';
import { EXIT, type Output, printError, stdio } from './output.js';
import { watchSignals } from './until-signal.js';

async function startDaemon(
  config: SiteConfig,
  log: Logger,
  io: Output,
  more: Pick<Parameters<typeof Daemon.start>[0], 'setup' | 'ownerSessions'>,
): Promise<Daemon | null> {
  // Daemon.start has stopped what it started when it throws; a taken port is the installer's to fix
  return Daemon.start({ config, log, ...more }).catch((err: NodeJS.ErrnoException) => {
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
}

export async function runCommand(argv: string[], io: Output = stdio): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } } });
  if (!values.config) {
    printError(io, 'run', '--config FILE is required (see examples/site.example.yaml)');
    return EXIT.USAGE;
  }
  const file = values.config;
  const signals = watchSignals(io);
  const log = createLogger();
  let first: SiteConfig | undefined;
  // the package's placeholder: the first-run page until the owner sends a site (first-run.ts)
  const placeholder = unconfigured(file);
  if (placeholder !== null) {
    const r = await firstRun(file, placeholder, log, signals);
    if (typeof r === 'number') return r;
    first = r;
  }
  const loaded = first ? { ok: true as const, config: first } : await loadSiteConfig(file, io);
  if (!loaded.ok) return loaded.exit;
  const ownerSessions: SessionStore = new Map();
  let daemon: Daemon | null = null;
  // a restart in progress; a stop signal waits for it, then stops what it started
  let restarting: Promise<void> = Promise.resolve();
  let failed: (code: number) => void = () => undefined;
  const failure = new Promise<number>((resolve) => (failed = resolve));
  const more = { ownerSessions, setup: { file, restart: () => restart() } };
  const restart = () => {
    restarting = restarting
      .then(async () => {
        const old = daemon;
        if (!old) return;
        daemon = null;
        log.info({ config: file }, 'site.yaml changed on the setup page: restarting');
        await old.stop({ restarting: true });
        const again = await loadSiteConfig(file, io);
        if (!again.ok) return failed(again.exit);
        daemon = await startDaemon(again.config, log, io, more);
        if (!daemon) failed(EXIT.FAILURE);
      })
      .catch((err: unknown) => {
        printError(io, 'run', `the restart failed: ${String(err)}`);
        failed(EXIT.FAILURE);
      });
  };
  daemon = await startDaemon(loaded.config, log, io, more);
  if (!daemon) return EXIT.FAILURE;
  const stop = async () => {
    await restarting;
    await daemon?.stop();
  };
  return Promise.race([signals.until(stop, log), failure]);
}
