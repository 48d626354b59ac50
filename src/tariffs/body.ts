/**
 * The bodies of POST and PATCH /api/v1/dynamicTariffs (docs/design.md "tariff pages"): checked here
 * field by field so every 400 names the field (`values[3].importPrice`) and what would be right.
 * JSON's own type coercions are not applied: `"0.3"` and `null` are not prices.
 */
import { ApiError, apiError } from '../core/errors.js';
import { isIanaZone } from '../core/zone.js';
import { TARIFF_KINDS, type TariffKind, type TariffValue } from '../store/tariffs.js';
import { BUCKET_MS } from '../telemetry/align.js';
import { formatInterval, parseInterval } from '../telemetry/interval.js';

/** A value covers whole quarter hours (the savings bucket) and at most one page window. */
export const MAX_VALUE_MS = 7 * 86_400_000;
/** A year of quarter-hour prices takes eight requests; one request stays far below the 1 MiB body limit. */
export const MAX_VALUES_PER_REQUEST = 5000;
/** Per kWh in the tariff's currency: any real price, negative ones included, is far inside. */
export const MAX_ABS_PRICE = 1_000_000;
export const MAX_NAME_LENGTH = 200;

export interface NewTariff {
  name: string;
  currency: string;
  timezone: string;
  kind: TariffKind;
  values: TariffValue[];
}

/** A value as sent, with its position in the request for messages. */
export interface BodyValue extends TariffValue {
  index: number;
}

const currencies = new Set(Intl.supportedValuesOf('currency'));

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

const bad = (field: string, message: string) => apiError('INVALID_BODY', `${field} ${message}`);

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `"${v.length > 40 ? `${v.slice(0, 37)}...` : v}"`;
  if (typeof v === 'object') return 'an object';
  return String(v);
}

function onlyKeys(obj: Rec, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k))
      throw bad(where === '' ? k : `${where}.${k}`, `is not a field here; allowed: ${allowed.join(', ')}`);
  }
}

function bodyObject(body: unknown, allowed: readonly string[]): Rec {
  if (!isRec(body))
    throw apiError('INVALID_BODY', `the body must be a JSON object with ${allowed.join(', ')}, got ${describe(body)}`);
  onlyKeys(body, allowed, '');
  return body;
}

function text(obj: Rec, key: string, hint: string): string {
  const v = obj[key];
  if (v === undefined) throw apiError('INVALID_BODY', `${key} is required; ${hint}`);
  if (typeof v !== 'string') throw bad(key, `must be a string, got ${describe(v)}; ${hint}`);
  return v;
}

function parseName(obj: Rec): string {
  const hint = `a name of 1 to ${MAX_NAME_LENGTH} characters, e.g. "Day-ahead EPEX DE-LU"`;
  const name = text(obj, 'name', hint).trim();
  if (name === '' || name.length > MAX_NAME_LENGTH)
    throw bad('name', `must be 1 to ${MAX_NAME_LENGTH} characters; ${hint}`);
  return name;
}

function parseCurrency(obj: Rec): string {
  const hint = 'a three-letter ISO 4217 code such as EUR, GBP or USD';
  const c = text(obj, 'currency', hint);
  if (!currencies.has(c)) {
    const upper = c.trim().toUpperCase();
    throw bad(
      'currency',
      `"${c.slice(0, 40)}" is not an ISO 4217 currency code; ${currencies.has(upper) ? `write "${upper}"` : hint}`,
    );
  }
  return c;
}

/** The zone in its canonical spelling ('europe/berlin' → 'Europe/Berlin'), as partners compare strings. */
function parseTimezone(obj: Rec): string {
  const hint = 'an IANA time zone such as Europe/Berlin or America/New_York';
  const tz = text(obj, 'timezone', hint);
  if (!isIanaZone(tz)) throw bad('timezone', `"${tz.slice(0, 60)}" is not an IANA time zone; ${hint}`);
  return new Intl.DateTimeFormat('en', { timeZone: tz }).resolvedOptions().timeZone;
}

function parseKind(obj: Rec): TariffKind {
  const hint = `one of ${TARIFF_KINDS.join(', ')}: which prices the values carry`;
  const k = text(obj, 'kind', hint);
  if (!(TARIFF_KINDS as readonly string[]).includes(k))
    throw bad('kind', `"${k.slice(0, 40)}" is not a tariff kind; ${hint}`);
  return k as TariffKind;
}

const PRICE_HINT = `a finite number per kWh in the tariff's currency, at most ${MAX_ABS_PRICE} either way (negative prices are allowed)`;

function parsePrice(
  item: Rec,
  key: 'importPrice' | 'exportPrice',
  where: string,
  kind: TariffKind,
): number | undefined {
  const wanted = kind === 'both' || (kind === 'import') === (key === 'importPrice');
  const v = item[key];
  if (!wanted) {
    if (v !== undefined)
      throw bad(
        `${where}.${key}`,
        `is not allowed: the tariff's kind is ${kind}, so its values carry only ${kind}Price`,
      );
    return undefined;
  }
  if (v === undefined)
    throw apiError('INVALID_BODY', `${where}.${key} is required: the tariff's kind is ${kind}; ${PRICE_HINT}`);
  // JSON.parse turns 1e999 into Infinity, so finiteness is checked here and not only by type
  if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > MAX_ABS_PRICE) {
    throw bad(`${where}.${key}`, `must be ${PRICE_HINT}, got ${describe(v)}`);
  }
  return v;
}

const INTERVAL_HINT =
  'an ISO 8601 interval start/end or start/duration with a UTC offset, starting and ending on a quarter hour ' +
  '(:00, :15, :30, :45), 15 minutes to 7 days long, e.g. 2026-11-23T13:00:00Z/PT1H';

function parseValueInterval(item: Rec, where: string): { start: number; end: number } {
  const v = item.interval;
  const field = `${where}.interval`;
  if (v === undefined) throw apiError('INVALID_BODY', `${field} is required; ${INTERVAL_HINT}`);
  if (typeof v !== 'string') throw bad(field, `must be a string, got ${describe(v)}; ${INTERVAL_HINT}`);
  let r: { start: number; end: number };
  try {
    r = parseInterval(v);
  } catch (e) {
    if (e instanceof ApiError) throw bad(field, `is not usable: ${e.message}`);
    throw e;
  }
  if (r.start % BUCKET_MS !== 0 || r.end % BUCKET_MS !== 0) {
    throw bad(field, `"${v.slice(0, 80)}" does not start and end on a quarter hour; ${INTERVAL_HINT}`);
  }
  if (r.end - r.start > MAX_VALUE_MS) throw bad(field, `"${v.slice(0, 80)}" is longer than 7 days; ${INTERVAL_HINT}`);
  return r;
}

/**
 * `values` of a POST or PATCH, ascending by start. Two values of one request that overlap are
 * refused: which of them would hold is not for the gateway to guess.
 */
export function parseValues(raw: unknown, kind: TariffKind, required: boolean): BodyValue[] {
  const hint = `a list of up to ${MAX_VALUES_PER_REQUEST} objects {interval, ${kind === 'both' ? 'importPrice, exportPrice' : `${kind}Price`}}`;
  if (raw === undefined) {
    if (required) throw apiError('INVALID_BODY', `values is required; ${hint}`);
    return [];
  }
  if (!Array.isArray(raw)) throw bad('values', `must be ${hint}, got ${describe(raw)}`);
  if (required && raw.length === 0) throw bad('values', `is empty; ${hint}`);
  if (raw.length > MAX_VALUES_PER_REQUEST) {
    throw bad(
      'values',
      `holds ${raw.length} entries, at most ${MAX_VALUES_PER_REQUEST} per request: send the rest in further PATCH requests`,
    );
  }
  const out: BodyValue[] = raw.map((item: unknown, index) => {
    const where = `values[${index}]`;
    if (!isRec(item)) throw bad(where, `must be an object {interval, importPrice, exportPrice}, got ${describe(item)}`);
    onlyKeys(item, ['interval', 'importPrice', 'exportPrice'], where);
    const { start, end } = parseValueInterval(item, where);
    const importPrice = parsePrice(item, 'importPrice', where, kind);
    const exportPrice = parsePrice(item, 'exportPrice', where, kind);
    return {
      index,
      start,
      end,
      ...(importPrice !== undefined ? { importPrice } : {}),
      ...(exportPrice !== undefined ? { exportPrice } : {}),
    };
  });
  out.sort((a, b) => a.start - b.start);
  for (let i = 1; i < out.length; i++) {
    const a = out[i - 1]!;
    const b = out[i]!;
    if (b.start < a.end) {
      const [x, y] = a.index < b.index ? [a, b] : [b, a];
      throw apiError(
        'OVERLAPPING_VALUES',
        `values[${x.index}] (${formatInterval(x.start, x.end)}) and values[${y.index}] (${formatInterval(y.start, y.end)}) overlap; ` +
          'each moment may have one price: send non-overlapping intervals',
      );
    }
  }
  return out;
}

export function parseCreateBody(body: unknown): NewTariff {
  const obj = bodyObject(body, ['name', 'currency', 'timezone', 'kind', 'values']);
  const kind = parseKind(obj);
  return {
    name: parseName(obj),
    currency: parseCurrency(obj),
    timezone: parseTimezone(obj),
    kind,
    values: parseValues(obj.values, kind, false),
  };
}

export function parsePatchBody(body: unknown, kind: TariffKind): BodyValue[] {
  const obj = bodyObject(body, ['values']);
  return parseValues(obj.values, kind, true);
}
