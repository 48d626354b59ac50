/**
 * Rules the schema cannot express: values checked against the world (time zones, currencies,
 * host names) and against each other (unique ids and addresses, battery→inverter links).
 * They run on the raw data even when the schema found mistakes, so an installer sees every
 * problem in one pass; each rule therefore checks the shape it reads for itself.
 */
import { isIP } from 'node:net';
import { isIanaZone } from '../core/zone.js';
import type { Finding } from '../yaml/messages.js';
import { isRec, type Rec } from '../yaml/parse.js';
import { closest } from '../yaml/suggest.js';
import { proxyFindings } from './proxy-check.js';
import { tariffFindings } from './tariff-check.js';
import { uplinkFindings } from './uplink-check.js';

/**
 * Rules over the devices that need what config does not know: the device profiles
 * (src/profiles/site-config.ts supplies them). They see the raw data, like every rule here.
 */
export interface DeviceChecks {
  /** two devices at one Modbus address are roles of one multi-function device */
  mayShareAddress(a: Readonly<Rec>, b: Readonly<Rec>): boolean;
  /** findings about the raw `devices:` list, reported after config's own */
  findings(devices: readonly unknown[]): Finding[];
}

const zones = (): string[] => Intl.supportedValuesOf('timeZone');
const currencies = new Set(Intl.supportedValuesOf('currency'));
const CURRENCY_SYMBOLS: Record<string, string> = { '€': 'EUR', $: 'USD', '£': 'GBP', '¥': 'JPY' };

/** The zone's canonical spelling ('europe/berlin' → 'Europe/Berlin'); luxon accepts any case but partners compare strings. */
export function canonicalZone(zone: string): string {
  const lower = zone.toLowerCase();
  return zones().find((z) => z.toLowerCase() === lower) ?? zone;
}

function checkTimezone(site: Rec, out: Finding[]): void {
  const tz = site.timezone;
  if (typeof tz !== 'string' || isIanaZone(tz)) return;
  const at = ['site', 'timezone'];
  const suggestion = closest(tz, zones());
  out.push({
    segments: at,
    anchor: at,
    message: `'${tz}' is not an IANA time zone`,
    hint: suggestion
      ? `did you mean '${suggestion}'?`
      : 'use an IANA zone name such as Europe/Berlin or America/New_York (Region/City, not an offset like GMT+1)',
  });
}

function checkCurrency(site: Rec, out: Finding[]): void {
  const code = site.currency;
  if (typeof code !== 'string' || currencies.has(code)) return;
  const at = ['site', 'currency'];
  const upper = code.trim().toUpperCase();
  const fromSymbol = CURRENCY_SYMBOLS[code.trim()];
  let hint = 'use a three-letter ISO 4217 code such as EUR, GBP or USD';
  if (currencies.has(upper)) hint = `write it in capitals: '${upper}'`;
  else if (fromSymbol) hint = `write the ISO 4217 code instead of the symbol: '${fromSymbol}'`;
  out.push({ segments: at, anchor: at, message: `'${code}' is not an ISO 4217 currency code`, hint });
}

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

function checkHost(value: unknown, at: (string | number)[], out: Finding[], example: string): void {
  if (typeof value !== 'string' || value === '' || isIP(value) !== 0 || HOST_NAME.test(value)) return;
  // the usual slips: a URL or host:port pasted from a device's web page
  const stripped = value.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  const hostPort = /^(.+):(\d+)$/.exec(stripped);
  let hint = `give only an IP address or host name, e.g. ${example}`;
  if (hostPort) hint = `write only '${hostPort[1]}' here and put ${hostPort[2]} under 'port:'`;
  else if (stripped !== value && (isIP(stripped) !== 0 || HOST_NAME.test(stripped))) hint = `write only '${stripped}'`;
  out.push({ segments: at, anchor: at, message: `'${value}' is not an IP address or host name`, hint });
}

/** A certificate needs its key and the other way round; HTTPS everywhere and plain HTTP cannot both hold. */
function checkTls(http: Rec, out: Finding[]): void {
  const tls = http.tls;
  if (isRec(tls)) {
    const hasCert = typeof tls.cert === 'string';
    const hasKey = typeof tls.key === 'string';
    if (hasCert !== hasKey) {
      const [given, missing] = hasCert ? ['cert', 'key'] : ['key', 'cert'];
      out.push({
        segments: ['http', 'tls', missing],
        anchor: ['http', 'tls', given],
        message: `'${given}' is set but '${missing}' is not`,
        hint: 'give both cert and key, or neither to use the self-signed certificate sitegw creates',
      });
    }
    if (tls.mode === 'always' && http.insecure === true) {
      out.push({
        segments: ['http', 'insecure'],
        anchor: ['http', 'insecure'],
        message: 'insecure: true asks for plain HTTP while tls.mode: always asks for HTTPS',
        hint: 'remove one of the two',
      });
    }
  }
}

/** node refuses a headers timeout longer than the request timeout it is part of (defaults are filled in by now). */
function checkLimits(limits: Rec, out: Finding[]): void {
  const { headersSeconds, requestSeconds } = limits;
  if (typeof headersSeconds !== 'number' || typeof requestSeconds !== 'number' || headersSeconds <= requestSeconds)
    return;
  const at = ['limits', 'http', 'headersSeconds'];
  out.push({
    segments: at,
    anchor: at,
    message: `headersSeconds (${headersSeconds}) is longer than requestSeconds (${requestSeconds}), which includes the headers`,
    hint: 'make headersSeconds at most requestSeconds, or raise requestSeconds (default 30)',
  });
}

interface DeviceView {
  index: number;
  raw: Rec;
  id?: string;
  role?: string;
}

function checkDevices(devices: unknown[], checks: DeviceChecks, out: Finding[]): void {
  const views: DeviceView[] = devices.flatMap((raw, index) =>
    isRec(raw)
      ? [
          {
            index,
            raw,
            id: typeof raw.id === 'string' ? raw.id : undefined,
            role: typeof raw.role === 'string' ? raw.role : undefined,
          },
        ]
      : [],
  );

  const firstById = new Map<string, DeviceView>();
  for (const d of views) {
    if (d.id === undefined) continue;
    const first = firstById.get(d.id);
    if (first) {
      const at = ['devices', d.index, 'id'];
      out.push({
        segments: at,
        anchor: at,
        message: `device id '${d.id}' is already used by devices[${first.index}]`,
        hint: 'give every device its own id; ids name the device in the API and in stream ids',
      });
    } else firstById.set(d.id, d);
  }

  const gridMeters = views.filter((d) => d.role === 'grid-meter');
  const [firstMeter, ...extraMeters] = gridMeters;
  for (const extra of firstMeter ? extraMeters : []) {
    const at = ['devices', extra.index, 'role'];
    out.push({
      segments: at,
      anchor: at,
      message: `a second grid-meter; devices[${firstMeter?.index}] already measures the grid connection point`,
      hint: 'a site has one grid connection point: make this one a consumption-meter or remove it',
    });
  }

  const inverterIds = views.filter((d) => d.role === 'inverter' && d.id !== undefined).map((d) => d.id as string);
  for (const d of views) {
    const named = d.raw.inverter;
    if (named === undefined || typeof named !== 'string') continue;
    const at = ['devices', d.index, 'inverter'];
    if (d.role !== undefined && d.role !== 'battery') {
      out.push({
        segments: at,
        anchor: at,
        message: `'inverter' only applies to a battery; this device's role is ${d.role}`,
        hint: 'remove the line',
      });
      continue;
    }
    if (inverterIds.includes(named)) continue;
    const target = firstById.get(named);
    const suggestion = closest(named, inverterIds);
    out.push({
      segments: at,
      anchor: at,
      message: target
        ? `'${named}' is a ${target.role ?? 'device'}, not an inverter`
        : `no device with id '${named}' in this file`,
      hint: suggestion
        ? `did you mean '${suggestion}'?`
        : inverterIds.length > 0
          ? `name one of the inverters: ${inverterIds.join(', ')}`
          : 'add the inverter the battery is connected to as a device with role: inverter',
    });
  }

  for (const d of views) {
    for (const key of ['meterSign', 'sunspecMeter'] as const) {
      if (d.raw[key] === undefined) continue;
      const at = ['devices', d.index, key];
      if (d.role !== undefined && d.role !== 'grid-meter' && d.role !== 'consumption-meter') {
        out.push({
          segments: at,
          anchor: at,
          message: `'${key}' only applies to a meter; this device's role is ${d.role}`,
          hint: 'remove the line',
        });
      } else if (d.raw.profile !== undefined && d.raw.profile !== 'sunspec') {
        out.push({
          segments: at,
          anchor: at,
          message: `'${key}' applies to SunSpec meters; profile ${String(d.raw.profile)} gives its own registers and signs`,
          hint: 'remove the line',
        });
      }
    }
  }

  for (const d of views) {
    if (isRec(d.raw.connection))
      checkHost(d.raw.connection.host, ['devices', d.index, 'connection', 'host'], out, '192.168.1.50');
  }
  checkLinks(views, checks, out);
  out.push(...checks.findings(devices));
}

/** The wire a raw connection uses (serial device, or TCP endpoint) and its unit, when both are readable. */
function linkOf(c: Rec): { link: string; type: string; unitId: number } | undefined {
  if (typeof c.unitId !== 'number' || typeof c.type !== 'string') return undefined;
  if (c.type === 'rtu')
    return typeof c.device === 'string' ? { link: c.device, type: c.type, unitId: c.unitId } : undefined;
  if (typeof c.host !== 'string' || typeof c.port !== 'number') return undefined;
  return { link: `${c.host.toLowerCase()}:${c.port}`, type: c.type, unitId: c.unitId };
}

const LINE_SETTINGS = ['baudRate', 'parity', 'dataBits', 'stopBits'] as const;

/**
 * Devices that share a wire: one unit id each, one framing per TCP port, one set of line settings
 * per serial port (a device at another baud rate would only ever see noise).
 */
function checkLinks(views: DeviceView[], checks: DeviceChecks, out: Finding[]): void {
  const firstOnLink = new Map<string, { view: DeviceView; type: string; conn: Rec }>();
  const atAddress = new Map<string, DeviceView[]>();
  const name = (v: DeviceView) => `devices[${v.index}]${v.id ? ` ('${v.id}')` : ''}`;
  for (const d of views) {
    const c = d.raw.connection;
    if (!isRec(c)) continue;
    const link = linkOf(c);
    if (!link) continue;
    const at = ['devices', d.index, 'connection'];
    const line = firstOnLink.get(link.link);
    if (!line) firstOnLink.set(link.link, { view: d, type: link.type, conn: c });
    else if (line.type !== link.type) {
      out.push({
        segments: [...at, 'type'],
        anchor: [...at, 'type'],
        message: `${link.link} is reached as '${line.type}' by ${name(line.view)}, and as '${link.type}' here`,
        hint: 'one TCP port speaks one framing: use the same type for every device behind it (tcp for a Modbus TCP gateway, rtu-over-tcp for a transparent serial server)',
      });
      continue;
    } else if (link.type === 'rtu') {
      const key = LINE_SETTINGS.find((k) => c[k] !== undefined && line.conn[k] !== undefined && c[k] !== line.conn[k]);
      if (key) {
        out.push({
          segments: [...at, key],
          anchor: [...at, key],
          message: `${key} ${String(c[key])} differs from ${name(line.view)} on the same serial port (${String(line.conn[key])})`,
          hint: `every device on one RS-485 line uses the same settings: write ${key}: ${String(line.conn[key])} here, or change the devices to match`,
        });
      }
    }
    const address = `${link.link} unit ${link.unitId}`;
    const here = atAddress.get(address) ?? [];
    atAddress.set(address, [...here, d]);
    // the roles of one multi-function device (an inverter with its battery and meter) share a unit
    const first = here.find((e) => !checks.mayShareAddress(e.raw, d.raw));
    if (!first) continue;
    const serial = link.type !== 'tcp';
    out.push({
      segments: at,
      anchor: at,
      message: `same address as ${name(first)}: ${address}`,
      hint: serial
        ? 'every device on one RS-485 line needs its own Modbus address (unless they are roles of one device: same profile, different roles; or a profile with besideSunSpec next to a sunspec device); set unitId to the address configured on this device'
        : 'devices behind one host and port must have different unitIds (unless they are roles of one device: same profile, different roles; or a profile with besideSunSpec next to a sunspec device); set unitId to the one configured on this device',
    });
  }
}

/** Every cross-value rule, in file order. */
export function semanticFindings(data: unknown, checks: DeviceChecks): Finding[] {
  const out: Finding[] = [];
  if (!isRec(data)) return out;
  if (isRec(data.site)) {
    checkTimezone(data.site, out);
    checkCurrency(data.site, out);
  }
  if (isRec(data.http)) {
    checkHost(data.http.host, ['http', 'host'], out, '0.0.0.0');
    checkTls(data.http, out);
  }
  if (isRec(data.limits) && isRec(data.limits.http)) checkLimits(data.limits.http, out);
  tariffFindings(data.tariff, out);
  uplinkFindings(data.uplink, out);
  uplinkFindings(data.homeassistant, out, 'homeassistant');
  if (Array.isArray(data.devices)) checkDevices(data.devices, checks, out);
  proxyFindings(data, out);
  return out;
}
