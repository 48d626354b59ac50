#!/usr/bin/env node
import './preflight.js';
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { checkConfigCommand } from './cli/check-config.js';
import { formatConfigErrors } from './yaml/format.js';
import { loadConfig } from './profiles/site-config.js';
import { createLogger } from './core/log.js';
import { Daemon } from './main.js';
import { EXIT_FATAL, exitOnUnhandled } from './ops/fatal.js';
import { VERSION } from './version.js';

const USAGE = `sitegw ${VERSION}: edge site gateway

Usage:
  sitegw demo [--port N] [--host ADDR] [--data-dir DIR] [--history DURATION] [--speed N] [--mqtt URL] [--homeassistant URL]
      Start the built-in simulated site (real Modbus TCP, SunSpec) and the gateway on it.
      --history P2D pre-fills two days of buckets; --speed 60 runs everything 60x faster.
  sitegw simulate [--inverter-port N] [--meter-port N] [--host ADDR] [--speed N]
                  [--grid-meter sunspec|sdm630|em340] [--rtu PATH [--rtu-host meter|inverter] [--baud N] [--parity P]]
      Run only the simulated site's Modbus servers (to point 'sitegw run', 'sitegw scan' or mbpoll at);
      --rtu serves one host's units over Modbus RTU on a serial device (e.g. one end of a socat pty pair).
  sitegw scan --tcp HOST[:PORT] | --rtu DEVICE --baud N [--parity none|even|odd] [--stop-bits 1|2]
              [--units 1-247] [--timeout MS]
      Find the Modbus devices on a bus (SunSpec, or a device profile's identity) and print a site.yaml snippet.
  sitegw run --config FILE
      Run the gateway against the devices in site.yaml.
  sitegw check-config FILE
      Validate site.yaml; exit 0 when valid, 1 when invalid, 2 when unreadable.
  sitegw clients add|list|assign|rotate-secret|remove ... --config FILE
      Register API clients (partners and apps); a secret is shown once. 'sitegw clients' for details.
  sitegw owner set-password --config FILE [--username NAME]
      Set the site owner's login for the consent page (password read from the terminal or stdin).
  sitegw tls fingerprint --config FILE
      Show the SHA-256 fingerprint of the API's HTTPS certificate.
  sitegw backup --config FILE OUT
      Write a consistent copy of the database to OUT while the gateway runs (restore: README).
  sitegw consume --broker URL [--group G] [--filter sitegw/+] [--db FILE] [--client-id ID] [--username U]
                 [--gap-wait S] [--retry-after S]
      The reference cloud consumer of the uplink (docs/mqtt-contract.md): MQTT 5 shared subscription
      $share/G/<filter>/…, de-duplication by seq, telemetry upserted into SQLite, holes asked for with
      cmd/resync after --gap-wait seconds. Instances with the same --group and --db split a fleet;
      the password for --username is read from SITEGW_CONSUMER_PASSWORD.
`;

type Command = (argv: string[]) => Promise<number>;

/** The command's own lines of USAGE: its synopsis and what it does. */
function commandUsage(name: string): string {
  const lines = USAGE.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  sitegw ${name} `) || l === `  sitegw ${name}`);
  let end = start + 1;
  while (end < lines.length && lines[end]!.startsWith('   ')) end++;
  return `Usage:\n${lines.slice(start, end).join('\n')}\n`;
}

/**
 * Runs until SIGTERM/SIGINT, then stops cleanly so the open buckets' state is saved. With the
 * daemon's logger, a fault no handler contained stops it the same way and ends the process with
 * EX_SOFTWARE (src/ops/fatal.ts has the policy and why).
 */
function untilSignal(stop: () => Promise<void>, log?: Logger): Promise<number> {
  return new Promise((resolve) => {
    let stopping: Promise<void> | null = null;
    let fault = false;
    const stopOnce = () => (stopping ??= stop());
    const onSignal = (sig: NodeJS.Signals) => {
      if (stopping) return;
      process.stderr.write(`\n${sig}: stopping\n`);
      stopOnce().then(
        () => resolve(fault ? EXIT_FATAL : 0),
        (err: unknown) => {
          process.stderr.write(`error while stopping: ${String(err)}\n`);
          resolve(fault ? EXIT_FATAL : 1);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    // node's default for SIGHUP is to die without saving the open buckets' energy state; a clean
    // stop instead, and under systemd (Restart=always) the start that follows reads the new config
    process.once('SIGHUP', onSignal);
    if (log) {
      exitOnUnhandled(process, {
        log,
        stop: () => {
          fault = true;
          return stopOnce();
        },
        exit: resolve,
      });
    }
  });
}

const run: Command = async (argv) => {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } } });
  if (!values.config) {
    process.stderr.write('sitegw run: --config FILE is required (see examples/site.example.yaml)\n');
    return 2;
  }
  const result = await loadConfig(values.config);
  if (!result.ok) {
    for (const line of formatConfigErrors(result.errors, values.config)) process.stderr.write(`${line}\n`);
    return result.unreadable ? 2 : 1;
  }
  const { http } = result.config;
  // Daemon.start has stopped what it started when it throws; a taken port is the installer's to fix
  const daemon = await Daemon.start({ config: result.config, log: createLogger() }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EADDRINUSE' || err.syscall !== 'listen') throw err;
    process.stderr.write(`sitegw run: port ${http.port} on ${http.host} is already in use: set http.port in site.yaml or stop the other program\n`);
    return null;
  });
  return daemon ? untilSignal(() => daemon.stop(), daemon.ctx.log) : 1;
};

const checkConfig: Command = async (argv) => {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true });
  if (positionals.length !== 1) {
    process.stderr.write('usage: sitegw check-config FILE\n');
    return 2;
  }
  return checkConfigCommand(positionals[0]!);
};

const COMMANDS: Record<string, Command> = {
  run,
  'check-config': checkConfig,
  demo: async (argv) => (await import('./demo/command.js')).demoCommand(argv, untilSignal),
  simulate: async (argv) => (await import('./demo/command.js')).simulateCommand(argv, untilSignal),
  scan: async (argv) => (await import('./modbus/scan-command.js')).scanCommand(argv),
  clients: async (argv) => (await import('./auth/commands.js')).clientsCommand(argv),
  owner: async (argv) => (await import('./auth/commands.js')).ownerCommand(argv),
  tls: async (argv) => (await import('./auth/commands.js')).tlsCommand(argv),
  backup: async (argv) => (await import('./ops/backup.js')).backupCommand(argv),
  consume: async (argv) => (await import('./consumer/command.js')).consumeCommand(argv, untilSignal),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name ? 0 : 2;
  }
  if (name === '--version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`sitegw: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  // here for every command at once, before its own strict option parsing refuses the flag
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (options.includes('--help') || options.includes('-h')) {
    process.stdout.write(commandUsage(name));
    return 0;
  }
  try {
    return await cmd(rest);
  } catch (err) {
    // argument mistakes (parseArgs) and start-up failures end with one clear line, not a stack
    const e = err as { code?: string; message?: string };
    process.stderr.write(`sitegw ${name}: ${e.message ?? String(err)}\n`);
    if (process.env.SITEGW_DEBUG) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
    return e.code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1;
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
