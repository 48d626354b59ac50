/**
 * Rules the schema cannot express: values checked against the world (time zones, currencies,
 * host names) and against each other (unique ids and addresses, battery→inverter links).
 * They run on the raw data even when the schema found mistakes, so an installer sees every
 * problem in one pass; each rule therefore checks the shape it reads for itself.
 */
import { isIP } from 'node:net';
import { IANAZone } from 'luxon';
import type { Finding } from './messages.js';
import { closest } from './suggest.js';

type Rec = Record<string, unknown>;

function isRec(v: unknown): v is Rec {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
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
  if (typeof tz !== 'string' || IANAZone.isValidZone(tz)) return;
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

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

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

interface DeviceView {
  index: number;
  raw: Rec;
  id?: string;
  role?: string;
}

function checkDevices(devices: unknown[], out: Finding[]): void {
  const views: DeviceView[] = devices.flatMap((raw, index) =>
    isRec(raw)
      ? [{ index, raw, id: typeof raw.id === 'string' ? raw.id : undefined, role: typeof raw.role === 'string' ? raw.role : undefined }]
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
  for (const extra of gridMeters.slice(1)) {
    const at = ['devices', extra.index, 'role'];
    out.push({
      segments: at,
      anchor: at,
      message: `a second grid-meter; devices[${gridMeters[0].index}] already measures the grid connection point`,
      hint: 'a site has one grid connection point: make this one a consumption-meter or remove it',
    });
  }

  const inverterIds = views.filter((d) => d.role === 'inverter' && d.id !== undefined).map((d) => d.id as string);
  for (const d of views) {
    const named = d.raw.inverter;
    if (named === undefined || typeof named !== 'string') continue;
    const at = ['devices', d.index, 'inverter'];
    if (d.role !== undefined && d.role !== 'battery') {
      out.push({ segments: at, anchor: at, message: `'inverter' only applies to a battery; this device's role is ${d.role}`, hint: 'remove the line' });
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

  const firstByAddress = new Map<string, DeviceView>();
  for (const d of views) {
    const c = d.raw.connection;
    if (!isRec(c)) continue;
    checkHost(c.host, ['devices', d.index, 'connection', 'host'], out, '192.168.1.50');
    if (typeof c.host !== 'string' || typeof c.port !== 'number' || typeof c.unitId !== 'number') continue;
    const address = `${c.host.toLowerCase()}:${c.port} unit ${c.unitId}`;
    const first = firstByAddress.get(address);
    if (first) {
      const at = ['devices', d.index, 'connection'];
      out.push({
        segments: at,
        anchor: at,
        message: `same address as devices[${first.index}]${first.id ? ` ('${first.id}')` : ''}: ${address}`,
        hint: 'devices behind one host and port must have different unitIds; set unitId to the one configured on this device',
      });
    } else firstByAddress.set(address, d);
  }
}

/** Every cross-value rule, in file order. */
export function semanticFindings(data: unknown): Finding[] {
  const out: Finding[] = [];
  if (!isRec(data)) return out;
  if (isRec(data.site)) {
    checkTimezone(data.site, out);
    checkCurrency(data.site, out);
  }
  if (isRec(data.http)) checkHost(data.http.host, ['http', 'host'], out, '0.0.0.0');
  if (Array.isArray(data.devices)) checkDevices(data.devices, out);
  return out;
}
