/**
 * The command line: finds the command, answers --help and --version, and turns a failure no command
 * handled into one line and an exit code (output.ts). Each command is loaded when called, so
 * `sitegw scan` does not load the daemon.
 */
import { VERSION } from '../version.js';
import { EXIT, type Output, printFailure, stdio } from './output.js';

const USAGE = `sitegw ${VERSION}: edge site gateway

Usage:
  sitegw demo [--port N] [--host ADDR] [--data-dir DIR] [--history DURATION] [--speed N]
              [--mqtt URL] [--homeassistant URL] [--inverter-port N] [--meter-port N] [--sim-control-port N]
              [--site-id ID]
      Start the built-in simulated site (real Modbus TCP, SunSpec) and the gateway on it.
      --history P2D pre-fills two days of buckets; --speed 60 runs everything 60x faster
      (a restart continues the simulated time where the data directory's buckets end);
      the simulator's ports are free ones unless given; --site-id (default demo-site) also names
      the MQTT client ids and topics, so demos share a broker.
  sitegw simulate [--inverter-port N] [--meter-port N] [--host ADDR] [--speed N]
                  [--grid-meter sunspec|sdm630|em340] [--rtu PATH [--rtu-host meter|inverter] [--baud N] [--parity P]]
      Run only the simulated site's Modbus servers (to point 'sitegw run', 'sitegw scan' or mbpoll at);
      --rtu serves one host's units over Modbus RTU on a serial device (e.g. one end of a socat pty pair).
  sitegw scan --tcp HOST[:PORT] | --rtu DEVICE --baud N [--parity none|even|odd] [--stop-bits 1|2]
              [--units 1-247] [--timeout MS]
      Find the Modbus devices on a bus (SunSpec, or a device profile's identity) and print a site.yaml snippet.
  sitegw setup [--config FILE] [--tcp HOST[:PORT]]... [--rtu DEVICE [--baud N] [--parity P]]... [--units 1-247]
               [--site-id ID] [--site-name T] [--timezone TZ] [--currency C] [--latitude N] [--longitude N]
               [--http-host ADDR] [--http-port N] [--data-dir DIR] [--import-price N [--export-price N]]
               [--uplink-url URL] [--homeassistant-url URL] [--control yes|no] [--export-limit W] [--client ID]
               [--owner NAME] [--yes [--password-stdin]] [--force]
      First run on a terminal: asks for the site and the Modbus buses, scans them, lets you confirm each
      device's role and id, writes site.yaml (default /etc/sitegw/site.yaml), checks it, asks for a tariff,
      the uplink, Home Assistant, control, an export limit and a partner client, and sets the owner
      password. Flags answer questions; --yes takes the defaults for the rest. An existing site.yaml is
      replaced only when you say so (or --force).
  sitegw run --config FILE
      Run the gateway against the devices in site.yaml.
  sitegw check-config FILE [--offline]
      Validate site.yaml; with site limits, ask each inverter what it does when the gateway is gone
      (--offline: not); exit 0 when valid, 1 when invalid, 2 when unreadable.
  sitegw clients add|list|assign|rotate-secret|remove ... --config FILE
      Register API clients (partners and apps); a secret is shown once. 'sitegw clients' for details.
  sitegw owner set-password --config FILE [--username NAME]
      Set the site owner's login for the consent page (password read from the terminal or stdin).
  sitegw tls fingerprint --config FILE
      Show the SHA-256 fingerprint of the API's HTTPS certificate.
  sitegw control release --config FILE
      Put every battery back in its own self-consumption (the unit runs it after every stop: docs/control.md).
  sitegw backup --config FILE OUT
      Write a consistent copy of the database to OUT while the gateway runs (restore: docs/install.md).
  sitegw restore --config FILE BACKUP
      With the gateway stopped: put BACKUP (a 'sitegw backup' file, or dataDir/backups/sitegw.db) in place
      of the database; the files it replaces are kept beside them.
  sitegw migrate --config FILE
      Bring the database to this version's schema (the gateway also does it at start; the package runs it on upgrade).
  sitegw consume --broker URL [--group G] [--filter sitegw/+] [--db FILE | --postgres URL] [--client-id ID] [--username U]
                 [--gap-wait S] [--retry-after S]
      The reference cloud consumer of the uplink (docs/mqtt-contract.md): MQTT 5 shared subscription
      $share/G/<filter>/… for the data (the retained topics plainly), de-duplication by seq,
      telemetry upserted into SQLite (--db) or PostgreSQL
      (--postgres), holes asked for with cmd/resync after --gap-wait seconds. Instances with the same
      --group and database split a fleet; the password for --username is read from
      SITEGW_CONSUMER_PASSWORD.
  sitegw optimise --input FILE|-
      The cheapest battery plan for one case (prices, PV and load forecasts, battery, grid limits;
      docs/optimiser.md), printed as JSON with its cost and the cost of plain self-consumption.
`;

type Command = (argv: string[], io: Output) => Promise<number>;

// a Map, not an object: a word like 'constructor' must not find Object.prototype's members
const COMMANDS = new Map<string, Command>([
  ['run', async (argv, io) => (await import('./run.js')).runCommand(argv, io)],
  ['check-config', async (argv, io) => (await import('./check-config.js')).checkConfigArgs(argv, io)],
  ['demo', async (argv, io) => (await import('./demo.js')).demoCommand(argv, io)],
  ['simulate', async (argv, io) => (await import('./simulate.js')).simulateCommand(argv, io)],
  ['setup', async (argv, io) => (await import('./setup.js')).setupCommand(argv, io)],
  ['scan', async (argv, io) => (await import('./scan.js')).scanCommand(argv, io)],
  ['clients', async (argv, io) => (await import('./clients.js')).clientsCommand(argv, io)],
  ['owner', async (argv, io) => (await import('./owner.js')).ownerCommand(argv, io)],
  ['tls', async (argv, io) => (await import('./tls.js')).tlsCommand(argv, io)],
  ['control', async (argv, io) => (await import('./control.js')).controlCommand(argv, io)],
  ['backup', async (argv, io) => (await import('./backup.js')).backupCommand(argv, io)],
  ['restore', async (argv, io) => (await import('./restore.js')).restoreCommand(argv, io)],
  ['migrate', async (argv, io) => (await import('./migrate.js')).migrateCommand(argv, io)],
  ['consume', async (argv, io) => (await import('./consume.js')).consumeCommand(argv, io)],
  ['optimise', async (argv, io) => (await import('./optimise.js')).optimiseCommand(argv, io)],
]);

/** The command's own lines of USAGE: its synopsis and what it does. */
function commandUsage(name: string): string {
  const lines = USAGE.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  sitegw ${name} `) || l === `  sitegw ${name}`);
  let end = start + 1;
  while (end < lines.length && lines[end]?.startsWith('   ')) end++;
  return `Usage:\n${lines.slice(start, end).join('\n')}\n`;
}

export async function main(argv: string[], io: Output = stdio): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name ? EXIT.OK : EXIT.USAGE;
  }
  if (name === '--version') {
    io.out(`${VERSION}\n`);
    return EXIT.OK;
  }
  const cmd = COMMANDS.get(name);
  if (!cmd) {
    io.err(`sitegw: unknown command '${name}'\n\n${USAGE}`);
    return EXIT.USAGE;
  }
  // here for every command at once, before its own strict option parsing refuses the flag
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (options.includes('--help') || options.includes('-h')) {
    io.out(commandUsage(name));
    return EXIT.OK;
  }
  try {
    return await cmd(rest, io);
  } catch (err) {
    // argument mistakes (parseArgs, UsageError) and start-up failures end with one clear line, not a stack
    return printFailure(io, name, err);
  }
}
