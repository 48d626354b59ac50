/**
 * The site's and the DER's readings as IEEE 2030.5 MirrorUsagePoints (CSIP-AUS asks for both,
 * docs/grid-operator.md "What the client does"): one MirrorUsagePoint for the connection point (roleFlags
 * isMirror | isPremisesAggregationPoint) and one for the DER (isMirror | isDER | isSubmeter),
 * each with a MirrorMeterReading per quantity and statistic, the ReadingTypes told once when the
 * point is created, then the average, maximum and minimum of the samples over each post interval.
 *
 * The codes are IEEE 2030.5-2018's (RoleFlagsType, ServiceKind, the ReadingType enumerations after
 * IEC 61968-9: kind 37 power, uom 38 W, 29 V, 33 Hz, dataQualifier 2 average, 8 maximum, 9 minimum,
 * flowDirection 1 forward, 19 reverse, phase 0, 128/64/32 A/B/C and 129/65/33 AN/BN/CN); which
 * quantities a site reports, and its flow directions, follow the CSIP-AUS client guide as
 * open-dynamic-export, a certified client, carries them out (read, not copied).
 */
import { createHash } from 'node:crypto';
import { GridOpError } from './errors.js';
import { SEP_NS, writeXml, type XmlNode } from './xml.js';

/** Each quantity mirrored: one row, posted as average, maximum and minimum; `channel` is the live channel it is read from. */
export const MIRROR_QUANTITIES = [
  { key: 'powerW', channel: 'power_W', name: 'W', uom: 38, phase: 0, multiplier: 0 },
  { key: 'powerL1W', channel: 'power_L1_W', name: 'W A', uom: 38, phase: 128, multiplier: 0 },
  { key: 'powerL2W', channel: 'power_L2_W', name: 'W B', uom: 38, phase: 64, multiplier: 0 },
  { key: 'powerL3W', channel: 'power_L3_W', name: 'W C', uom: 38, phase: 32, multiplier: 0 },
  { key: 'voltageL1V', channel: 'voltage_L1_V', name: 'V AN', uom: 29, phase: 129, multiplier: -1 },
  { key: 'voltageL2V', channel: 'voltage_L2_V', name: 'V BN', uom: 29, phase: 65, multiplier: -1 },
  { key: 'voltageL3V', channel: 'voltage_L3_V', name: 'V CN', uom: 29, phase: 33, multiplier: -1 },
  { key: 'frequencyHz', channel: 'frequency_Hz', name: 'Hz', uom: 33, phase: 0, multiplier: -2 },
] as const;

/** IEEE 2030.5 uom of real power (W): the quantities whose sign follows the flow direction */
export const UOM_W = 38;

export type MirrorKey = (typeof MIRROR_QUANTITIES)[number]['key'];
/** One sample of a point: each quantity it has now, in W, V and Hz (power positive in the point's flow direction). */
export type MirrorValues = Partial<Record<MirrorKey, number>>;

const STATISTICS = [
  { name: 'Avg', dataQualifier: 2 },
  { name: 'Max', dataQualifier: 8 },
  { name: 'Min', dataQualifier: 9 },
] as const;

/** The two points: the connection point's readings as the grid meter gives them (+ import), the DER's as its inverters do (+ delivering). */
export const MIRROR_POINTS = {
  site: { description: 'Site', roleFlags: 0x03, flowDirection: 1 },
  der: { description: 'DER', roleFlags: 0x49, flowDirection: 19 },
} as const;
export type MirrorPoint = keyof typeof MIRROR_POINTS;

const ELECTRICITY = 0;
const ON = 1;
const KIND_POWER = 37;
const COMMODITY_SECONDARY_METERED = 1;

/**
 * An mRID made by sitegw: 96 bits from the device's LFDI and what it names, then the maker's IANA
 * Private Enterprise Number in the low 32 bits, as IEEE 2030.5's mRIDType asks.
 */
export function clientMrid(lfdi: string, what: string, pen: number): string {
  const id = createHash('sha256').update(`${lfdi}/${what}`).digest('hex').slice(0, 24);
  return `${id}${pen.toString(16).padStart(8, '0')}`.toUpperCase();
}

interface Stat {
  sum: number;
  n: number;
  max: number;
  min: number;
}

/** One MirrorUsagePoint: its definition, and the statistics of the samples since the last post. */
export class Mirror {
  readonly mRID: string;
  /** where the server put it (the Location of the POST); null until created */
  href: string | null = null;
  private stats = new Map<MirrorKey, Stat>();
  /** server-clock seconds of the first sample since the last post */
  private since: number | null = null;

  constructor(
    readonly point: MirrorPoint,
    private readonly lfdi: string,
    private readonly pen: number,
  ) {
    this.mRID = clientMrid(lfdi, `mup/${point}`, pen);
  }

  private readingMrid(key: MirrorKey, stat: string): string {
    return clientMrid(this.lfdi, `mup/${this.point}/${key}/${stat}`, this.pen);
  }

  /** Takes one sample; values that are not finite are left out. */
  sample(values: MirrorValues, at: number): void {
    for (const q of MIRROR_QUANTITIES) {
      const v = values[q.key];
      if (v === undefined || !Number.isFinite(v)) continue;
      const s = this.stats.get(q.key);
      if (s) {
        s.sum += v;
        s.n++;
        if (v > s.max) s.max = v;
        if (v < s.min) s.min = v;
      } else this.stats.set(q.key, { sum: v, n: 1, max: v, min: v });
      this.since ??= at;
    }
  }

  get hasSamples(): boolean {
    return this.stats.size > 0;
  }

  /** The MirrorUsagePoint the client POSTs to the server's list: every reading's ReadingType, no values. */
  definitionBody(): string {
    const p = MIRROR_POINTS[this.point];
    const readings: XmlNode[] = MIRROR_QUANTITIES.flatMap((q) =>
      STATISTICS.map(
        (st): XmlNode => [
          'MirrorMeterReading',
          {},
          ['mRID', {}, this.readingMrid(q.key, st.name)],
          ['description', {}, `${p.description} ${st.name} ${q.name}`],
          [
            'ReadingType',
            {},
            ['commodity', {}, COMMODITY_SECONDARY_METERED],
            ['dataQualifier', {}, st.dataQualifier],
            ['flowDirection', {}, p.flowDirection],
            ['kind', {}, KIND_POWER],
            ['phase', {}, q.phase],
            ['powerOfTenMultiplier', {}, q.multiplier],
            ['uom', {}, q.uom],
          ],
        ],
      ),
    );
    return writeXml([
      'MirrorUsagePoint',
      { xmlns: SEP_NS },
      ['mRID', {}, this.mRID],
      ['description', {}, `sitegw ${p.description}`],
      ['roleFlags', {}, p.roleFlags.toString(16).toUpperCase().padStart(4, '0')],
      ['serviceCategoryKind', {}, ELECTRICITY],
      ['status', {}, ON],
      ['deviceLFDI', {}, this.lfdi],
      ...readings,
    ]);
  }

  /**
   * The statistics since the last post as a MirrorMeterReadingList (server-clock seconds), and
   * starts a new interval; undefined without a sample (nothing is known, so nothing is said).
   */
  takeReadings(now: number, next: number): string | undefined {
    if (this.since === null || this.stats.size === 0) return undefined;
    const start = this.since;
    const duration = Math.max(0, Math.round(now - start));
    const readings: XmlNode[] = [];
    for (const q of MIRROR_QUANTITIES) {
      const s = this.stats.get(q.key);
      if (!s) continue;
      const of = { Avg: s.sum / s.n, Max: s.max, Min: s.min };
      for (const st of STATISTICS)
        readings.push([
          'MirrorMeterReading',
          {},
          ['mRID', {}, this.readingMrid(q.key, st.name)],
          ['lastUpdateTime', {}, Math.floor(now)],
          ['nextUpdateTime', {}, Math.floor(next)],
          [
            'Reading',
            {},
            // bit 0: valid (the device's own reading); the average is derived from them
            ['qualityFlags', {}, st.name === 'Avg' ? '0021' : '0001'],
            ['timePeriod', {}, ['duration', {}, duration], ['start', {}, Math.floor(start)]],
            ['value', {}, Math.round(of[st.name] / 10 ** q.multiplier)],
          ],
        ]);
    }
    this.stats = new Map();
    this.since = null;
    return writeXml([
      'MirrorMeterReadingList',
      { xmlns: SEP_NS, all: readings.length, results: readings.length },
      ...readings,
    ]);
  }
}

/** how often the points are sampled, s: the post interval's average, maximum and minimum come from these */
export const SAMPLE_SECONDS = 5;
/** the readings of this many intervals wait for a server that is gone (an hour at 300 s), oldest dropped first */
export const MAX_UNSENT = 12;
/** the post interval when neither the MirrorUsagePoint nor the EndDevice names one */
const DEFAULT_POST_SECONDS = 300;

export interface MirrorTransport {
  send(method: 'POST', href: string, body: string): Promise<{ status: number; headers: Record<string, unknown> }>;
  /** the postRate the server set on a point it created, if it set one */
  postRateOf(href: string): Promise<number | undefined>;
}

/**
 * Both points over time: samples every SAMPLE_SECONDS, creates each point on the server once
 * (POST to the MirrorUsagePointList; the Location is where its readings go), then takes the
 * statistics every postRate and posts them. The readings are taken on time whether the server
 * answers or not (collect(), at every turn of the client's loop), so an outage leaves one reading
 * per interval waiting, not one average over the whole outage; at most MAX_UNSENT of them per
 * point, the oldest dropped first and counted. A point the server forgot (404) is created again
 * and its waiting readings are posted to the new one.
 */
export class MirrorPoster {
  private readonly mirrors: Mirror[];
  private readonly unsent = new Map<Mirror, string[]>();
  /** mono ms when the next readings are due; 0 before the points exist */
  private due = 0;
  private postSeconds: number | undefined;
  /** the post interval, s: known once the points exist */
  private every = DEFAULT_POST_SECONDS;
  /** readings lists (one per point and interval) dropped since the start: the server was gone longer than MAX_UNSENT intervals */
  dropped = 0;
  /** of those, dropped since the server last took every reading waiting: the outage that is losing data now (health says so) */
  droppedInOutage = 0;

  constructor(
    private readonly d: {
      lfdi: string;
      pen: number;
      minPollSeconds: number;
      serverNow: () => number;
      mono: () => number;
      /** told each time readings are dropped: how many now, how many since the start */
      onDropped?: (now: number, total: number) => void;
    },
  ) {
    this.mirrors = (Object.keys(MIRROR_POINTS) as MirrorPoint[]).map((p) => new Mirror(p, d.lfdi, d.pen));
  }

  sample(values: Partial<Record<MirrorPoint, MirrorValues>>): void {
    const at = this.d.serverNow();
    for (const m of this.mirrors) {
      const v = values[m.point];
      if (v) m.sample(v, at);
    }
  }

  /** ms until readings are due; undefined before the points were created */
  untilDue(): number | undefined {
    return this.due === 0 ? undefined : this.due - this.d.mono();
  }

  /** readings lists waiting for the server, the larger of the two points' */
  get unsentCount(): number {
    return Math.max(0, ...[...this.unsent.values()].map((q) => q.length));
  }

  /** Takes the interval's readings when they are due, whether the server answers or not; a no-op before the points exist. */
  collect(): void {
    const mono = this.d.mono();
    if (this.due === 0 || mono < this.due) return;
    this.due = mono + this.every * 1000;
    const now = this.d.serverNow();
    let dropped = 0;
    for (const m of this.mirrors) {
      const queue = this.unsent.get(m) ?? [];
      const body = m.takeReadings(now, now + this.every);
      if (body) queue.push(body);
      dropped += Math.max(0, queue.length - MAX_UNSENT);
      this.unsent.set(m, queue.slice(-MAX_UNSENT));
    }
    if (dropped > 0) {
      this.dropped += dropped;
      this.droppedInOutage += dropped;
      this.d.onDropped?.(dropped, this.dropped);
    }
  }

  /** What the walk of the server does for the readings: the points created, the due readings taken, and what waits posted. */
  async post(listHref: string, t: MirrorTransport, endDevicePostRate: number | undefined): Promise<void> {
    for (const m of this.mirrors) {
      if (m.href) continue;
      const res = await t.send('POST', listHref, m.definitionBody());
      const location = res.headers.location;
      if (res.status < 200 || res.status > 299 || typeof location !== 'string')
        throw new GridOpError(
          'GRIDOP_HTTP_STATUS',
          `POST ${listHref} (MirrorUsagePoint): HTTP ${res.status}, expected 201 with a Location`,
        );
      m.href = location;
      this.postSeconds ??= await t.postRateOf(location);
    }
    this.every = Math.max(this.d.minPollSeconds, this.postSeconds ?? endDevicePostRate ?? DEFAULT_POST_SECONDS);
    if (this.due === 0) this.due = this.d.mono() + this.every * 1000;
    this.collect();
    for (const m of this.mirrors) {
      const queue = this.unsent.get(m) ?? [];
      while (queue.length > 0) {
        const res = await t.send('POST', m.href!, queue[0]!);
        if (res.status === 404) {
          // the server forgot the point: made again at the next walk, its readings kept for the new one
          m.href = null;
          break;
        }
        if (res.status >= 500)
          throw new GridOpError('GRIDOP_HTTP_STATUS', `POST ${m.href} (readings): HTTP ${res.status}`);
        // 2xx taken; another 4xx will not be taken later either
        queue.shift();
      }
    }
    if (this.unsentCount === 0) this.droppedInOutage = 0;
  }
}
