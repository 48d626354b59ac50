/**
 * `sitegw setup`: the installer's first run on a terminal. It asks for the site and the Modbus
 * buses, scans each bus (src/discovery, as `sitegw scan`), lets the installer confirm or change
 * each device's role and id, writes site.yaml with comments (setup-site-yaml.ts), checks it as
 * `sitegw check-config` does, asks what the setup page asks (a tariff, the uplink, Home
 * Assistant, control, an export limit, a partner client: setup-extras.ts, through the page's
 * core src/setup/edit.ts), sets the owner password, and says how to start the service and
 * where the status page is. Every question has a default; flags answer them and `--yes` takes
 * the rest unasked, so a script can run it. An existing site.yaml is replaced only when the
 * installer says so (or `--force`); the package's placeholder counts as none.
 */
import {
  accessSync,
  chownSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ClientError } from '../auth/clients.js';
import { OWNER_NAME, PASSWORD_MIN, setOwnerPassword } from '../auth/owner.js';
import { DEVICE_ROLES, type DeviceRole } from '../core/device-role.js';
import { lostUnits, scanBusAgain } from '../discovery/scan.js';
import { formatScanReport } from '../discovery/scan-report.js';
import { ModbusError } from '../modbus/errors.js';
import { installedProfiles } from '../profiles/registry.js';
import {
  mergeBuses,
  type ProposedDevice,
  proposedDevices,
  type SiteAnswers,
  siteYamlText,
  unconfigured,
  withChoice,
} from '../setup/site-yaml.js';
import { ID_PATTERN } from '../yaml/schema.js';
import { checkConfigCommand } from './check-config.js';
import { withDb } from './data-dir.js';
import { EXIT, isUsageMistake, type Output, printError, printFailure, stdio, UsageError } from './output.js';
import { firstLineOfStdin } from './owner.js';
import { type Asker, type Check, defaultsAsker, Interrupted, terminalAsker } from './prompt.js';
import { planScan, RTU_DEFAULT_UNITS, TCP_DEFAULT_UNITS } from './scan.js';
import { extraAnswers } from './setup-extras.js';

const PACKAGE_CONFIG = '/etc/sitegw/site.yaml';
const PACKAGE_DATA_DIR = '/var/lib/sitegw';

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  tcp: { type: 'string', multiple: true },
  rtu: { type: 'string', multiple: true },
  baud: { type: 'string' },
  parity: { type: 'string' },
  units: { type: 'string' },
  timeout: { type: 'string' },
  'site-id': { type: 'string' },
  'site-name': { type: 'string' },
  timezone: { type: 'string' },
  currency: { type: 'string' },
  latitude: { type: 'string' },
  longitude: { type: 'string' },
  'http-host': { type: 'string' },
  'http-port': { type: 'string' },
  'data-dir': { type: 'string' },
  owner: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  force: { type: 'boolean' },
  // the questions the setup page asks too (setup-extras.ts)
  'import-price': { type: 'string' },
  'export-price': { type: 'string' },
  'uplink-url': { type: 'string' },
  'homeassistant-url': { type: 'string' },
  control: { type: 'string' },
  'export-limit': { type: 'string' },
  client: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

const idCheck: Check = (v) =>
  new RegExp(ID_PATTERN).test(v) && v.length <= 64 ? undefined : "use 1-64 lowercase letters, digits, '-' and '_'";
const numberIn =
  (min: number, max: number): Check =>
  (v) => {
    const n = Number(v);
    return v !== '' && Number.isFinite(n) && n >= min && n <= max ? undefined : `give a number from ${min} to ${max}`;
  };
const zoneCheck: Check = (v) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: v });
    return v.includes('/') || v === 'UTC' ? undefined : 'give an IANA zone such as Europe/Berlin';
  } catch {
    return 'give an IANA zone such as Europe/Berlin';
  }
};

/** The bus an installer most likely has: a USB RS-485 adapter if one is plugged in. */
function firstBusGuess(): string {
  try {
    const byId = readdirSync('/dev/serial/by-id');
    if (byId[0]) return join('/dev/serial/by-id', byId[0]);
  } catch {}
  return existsSync('/dev/ttyUSB0') ? '/dev/ttyUSB0' : '127.0.0.1:502';
}

async function siteAnswers(ask: Asker, v: Values, configFile: string): Promise<SiteAnswers> {
  const siteId = await ask.ask('site id (the root of every stream id)', v['site-id'] ?? 'home', idCheck);
  const siteName = await ask.ask('site name shown to partners', v['site-name'] ?? 'Home');
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const timezone = await ask.ask(
    'time zone',
    v.timezone ?? (zone && zone !== 'UTC' ? zone : 'Europe/Berlin'),
    zoneCheck,
  );
  const currency = await ask.ask('currency (ISO 4217)', v.currency ?? 'EUR', (c) =>
    /^[A-Z]{3}$/.test(c) ? undefined : 'three capital letters, e.g. EUR',
  );
  const latitude = Number(
    await ask.ask('latitude (decimal degrees, north +)', v.latitude ?? '52.52', numberIn(-90, 90)),
  );
  const longitude = Number(
    await ask.ask('longitude (decimal degrees, east +)', v.longitude ?? '13.405', numberIn(-180, 180)),
  );
  const httpHost = await ask.ask(
    'API and status page address (0.0.0.0: the whole LAN over HTTPS; 127.0.0.1: this box only)',
    v['http-host'] ?? '0.0.0.0',
  );
  const httpPort = Number(await ask.ask('API port', v['http-port'] ?? '8080', numberIn(1, 65535)));
  const packaged = resolve(configFile) === PACKAGE_CONFIG;
  const dataDir = await ask.ask('data folder (sitegw.db)', v['data-dir'] ?? (packaged ? PACKAGE_DATA_DIR : './data'));
  return { siteId, siteName, timezone, currency, latitude, longitude, httpHost, httpPort, dataDir };
}

/** `sitegw scan`'s arguments for each bus: from the flags, or asked one by one until an empty answer. */
async function busArgs(ask: Asker, v: Values, interactive: boolean): Promise<string[][]> {
  const common = (units: string | undefined) => [
    ...(units ? ['--units', units] : []),
    ...(v.timeout ? ['--timeout', v.timeout] : []),
  ];
  const rtu = (device: string, baud: string, parity: string, units?: string) => [
    '--rtu',
    device,
    '--baud',
    baud,
    '--parity',
    parity,
    ...common(units),
  ];
  const given = [
    ...(v.tcp ?? []).map((t) => ['--tcp', t, ...common(v.units)]),
    ...(v.rtu ?? []).map((d) => rtu(d, v.baud ?? '9600', v.parity ?? 'none', v.units)),
  ];
  if (given.length > 0 || !interactive) {
    if (given.length === 0)
      throw new UsageError('--yes needs the buses: --tcp HOST[:PORT] or --rtu DEVICE (several allowed)');
    return given;
  }
  const buses: string[][] = [];
  for (let n = 1; ; n++) {
    const first = n === 1;
    const bus = await ask.ask(
      first
        ? 'Modbus bus: TCP host[:port], or the RS-485 adapter (e.g. /dev/ttyUSB0)'
        : `another Modbus bus (empty: no more)`,
      first ? firstBusGuess() : '',
    );
    if (bus === '') return buses;
    const serial = bus.startsWith('/');
    const units = await ask.ask(
      `  unit ids to ask on ${bus}`,
      v.units ?? (serial ? RTU_DEFAULT_UNITS : TCP_DEFAULT_UNITS),
    );
    if (!serial) {
      buses.push(['--tcp', bus, ...common(units)]);
      continue;
    }
    const baud = await ask.ask(
      '  baud rate (the same on every device of the line)',
      v.baud ?? '9600',
      numberIn(1200, 115200),
    );
    const parity = await ask.ask('  parity (none, even or odd)', v.parity ?? 'none', (p) =>
      ['none', 'even', 'odd'].includes(p) ? undefined : 'none, even or odd',
    );
    buses.push(rtu(bus, baud, parity, units));
  }
}

/** Scans one bus; what it found as proposed site.yaml entries. A bus that cannot be opened finds nothing. */
async function scanOne(
  argv: string[],
  io: Output,
): Promise<{ name: string; devices: ProposedDevice[]; lost: number[] }> {
  const plan = planScan(argv);
  const { link, bus } = plan;
  const name = link.type === 'tcp' ? `${link.host}:${link.port}` : link.device;
  io.out(`\nScanning ${name}, at most about ${Math.ceil(plan.boundMs / 1000)} s...\n`);
  try {
    // units that gave no answer are asked again: one missed request must not leave a device out
    const result = await scanBusAgain(bus, {
      units: plan.units,
      profiles: [...installedProfiles().profiles.values()],
    });
    // the report's lines without its snippet: setup writes the devices itself
    io.out(`${formatScanReport(result, link).split('\n\nsite.yaml snippet')[0]!.trimEnd()}\n`);
    return { name, devices: proposedDevices(result, link), lost: lostUnits(result) };
  } catch (err) {
    if (!(err instanceof ModbusError && err.kind === 'connection')) throw err;
    printError(io, 'setup', `${name}: ${err.message}`);
    return { name, devices: [], lost: [] };
  } finally {
    await bus.close();
  }
}

/** Each device's role and id, confirmed or changed; 'skip' leaves it out. */
async function confirmDevices(ask: Asker, devices: ProposedDevice[], io: Output): Promise<ProposedDevice[]> {
  const kept: ProposedDevice[] = [];
  const ids = new Set<string>();
  const roles = [...DEVICE_ROLES, 'skip'];
  for (const d of devices) {
    io.out(`\n${d.id}: ${d.notes.join('; ')}\n`);
    const role = await ask.ask(`  role (${roles.join(', ')})`, d.role, (r) =>
      roles.includes(r) ? undefined : `one of ${roles.join(', ')}`,
    );
    if (role === 'skip') continue;
    const id = await ask.ask('  device id', d.id, (v) => idCheck(v) ?? (ids.has(v) ? `${v} is taken` : undefined));
    ids.add(id);
    kept.push(withChoice(d, role as DeviceRole, id));
  }
  return kept;
}

/**
 * Files the command creates as root in a data folder someone else owns are given to that owner:
 * every root-owned entry below it, not a list of names (credentials.db, its WAL and the backups
 * came after the list was written, and the service could not open the credentials root left).
 */
function keepOwner(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = statSync(dataDir);
  if (uid === 0) return;
  const walk = (dir: string, depth: number) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isSymbolicLink()) continue;
      if (lstatSync(path).uid === 0) chownSync(path, uid, gid);
      if (e.isDirectory() && depth < 4) walk(path, depth + 1);
    }
  };
  walk(dataDir, 0);
}

async function ownerPassword(ask: Asker, v: Values, file: string, dataDir: string, io: Output): Promise<boolean> {
  const later = `set it later: sitegw owner set-password --config ${file}`;
  const username = await ask.ask('owner user name for the status page', v.owner ?? 'owner', (u) =>
    OWNER_NAME.test(u) ? undefined : "1-64 letters, digits, '.', '_', '@' or '-'",
  );
  for (;;) {
    const password = await ask.secret(`owner password (at least ${PASSWORD_MIN} characters; empty: later)`);
    if (password === '') {
      io.out(`No owner password set: ${later}\n`);
      return false;
    }
    if ((await ask.secret('again')) !== password) {
      io.err('  the two passwords differ\n');
      continue;
    }
    try {
      await withDb(dataDir, (db) => setOwnerPassword(db, username, password, Date.now()));
      keepOwner(dataDir);
      io.out(`Owner '${username}' can log in on the status page.\n`);
      return true;
    } catch (e) {
      if (!(e instanceof ClientError)) throw e;
      io.err(`  ${e.message}\n`);
    }
  }
}

/** False when an existing site.yaml is to be kept. */
async function mayWrite(ask: Asker, file: string, v: Values, io: Output): Promise<boolean> {
  try {
    accessSync(existsSync(file) ? file : dirname(file), constants.W_OK);
  } catch {
    printError(io, 'setup', `cannot write ${file}: run it as root (sudo sitegw setup) or give --config FILE`);
    return false;
  }
  if (!existsSync(file) || unconfigured(file) !== null) return true;
  if (v.force) return true;
  if (v.yes) {
    printError(io, 'setup', `${file} exists: it is kept (--force replaces it)`);
    return false;
  }
  const answer = await ask.ask(
    `${file} exists. Replace it (the old one is kept as ${file}.bak)? yes or no`,
    'no',
    (a) => (['yes', 'no', 'y', 'n'].includes(a) ? undefined : 'yes or no'),
  );
  if (answer.startsWith('y')) return true;
  io.out(`${file} is kept as it is.\n`);
  return false;
}

function statusUrl(a: SiteAnswers): string {
  const host = a.httpHost === '0.0.0.0' || a.httpHost === '::' ? '<this box>' : a.httpHost;
  const scheme = a.httpHost === '127.0.0.1' || a.httpHost === '::1' || a.httpHost === 'localhost' ? 'http' : 'https';
  return `${scheme}://${host}:${a.httpPort}/`;
}

async function setup(v: Values, io: Output): Promise<number> {
  const file = resolve(v.config ?? PACKAGE_CONFIG);
  if (v['password-stdin'] && !v.yes) throw new UsageError('--password-stdin goes with --yes');
  const ask = v.yes ? defaultsAsker(v['password-stdin'] ? await firstLineOfStdin() : '') : terminalAsker(io);
  try {
    if (!(await mayWrite(ask, file, v, io))) return EXIT.FAILURE;
    const site = await siteAnswers(ask, v, file);
    const scans = [];
    for (const argv of await busArgs(ask, v, !v.yes)) scans.push(await scanOne(argv, io));
    const lost = scans.filter((s) => s.lost.length > 0);
    if (lost.length > 0) {
      // a site without a device that is there would say OK and never poll it
      const which = lost.map((s) => `unit ${s.lost.join(', ')} on ${s.name}`).join('; ');
      printError(
        io,
        'setup',
        `${which} answered, then stopped answering before it was identified, so no site.yaml was written: check the wiring and the device, then run setup again (sitegw scan asks one bus on its own; docs/install.md)`,
      );
      return EXIT.FAILURE;
    }
    const proposed = mergeBuses(scans.map((s) => s.devices));
    if (proposed.length === 0) {
      printError(
        io,
        'setup',
        'no device found on any bus, so no site.yaml was written: check wiring and settings (docs/install.md)',
      );
      return EXIT.FAILURE;
    }
    const devices = await confirmDevices(ask, proposed, io);
    if (devices.length === 0) {
      printError(io, 'setup', 'every device was skipped, so no site.yaml was written');
      return EXIT.FAILURE;
    }
    if (existsSync(file) && unconfigured(file) === null) copyFileSync(file, `${file}.bak`);
    const text = siteYamlText(
      site,
      devices,
      scans.map((s) => s.name),
      new Date().toISOString().slice(0, 10),
    );
    writeFileSync(file, text, { mode: 0o640 });
    // a new file written by root in the package's /etc/sitegw (root:sitegw 0750) is the service's to read
    if (process.getuid?.() === 0) chownSync(file, 0, statSync(dirname(file)).gid);
    io.out(`\nWrote ${file}. Checking it:\n`);
    const checked = await checkConfigCommand(file, io);
    if (checked !== EXIT.OK) {
      printError(io, 'setup', `${file} has the mistakes above: fix them, then sitegw check-config ${file}`);
      return checked;
    }
    const dataDir = resolve(dirname(file), site.dataDir);
    await extraAnswers(
      ask,
      v,
      file,
      dataDir,
      devices.map((d) => d.id),
      io,
    );
    // a partner client made the database as root
    if (existsSync(dataDir)) keepOwner(dataDir);
    const owner = await ownerPassword(ask, v, file, dataDir, io);
    io.out(
      [
        '',
        'Next:',
        file === PACKAGE_CONFIG
          ? '  systemctl enable --now sitegw     # start the gateway now and at every boot'
          : `  sitegw run --config ${file}`,
        '  systemctl status sitegw           # "Status:" is its one-line summary',
        `  status page: ${statusUrl(site)}${owner ? '' : ' (after sitegw owner set-password)'}`,
        '',
      ].join('\n'),
    );
    return EXIT.OK;
  } catch (err) {
    if (err instanceof Interrupted) {
      printError(io, 'setup', err.message);
      return EXIT.INTERRUPTED;
    }
    throw err;
  } finally {
    ask.close();
  }
}

export async function setupCommand(argv: string[], io: Output = stdio): Promise<number> {
  try {
    return await setup(parseArgs({ args: argv, options: OPTIONS }).values, io);
  } catch (err) {
    if (err instanceof UsageError || isUsageMistake(err)) return printFailure(io, 'setup', err);
    throw err;
  }
}
