/**
 * The status page's history (GET /status/history.json): energy per hour over the last day and per
 * local day over the last week or month, for PV, grid import and export, battery in and out and the
 * house, with the state of charge and, where the site has a tariff, the savings. Everything is read
 * from the stored buckets through the telemetry query, so each figure is what the API answers for
 * the same interval: a period's energy is the difference of the lifetime counters (energyIn /
 * energyOut) at its end and at the previous period's end, which stays right on a 23- or 25-hour
 * DST day; the SoC is the value at the period's end.
 */
import type { Database } from 'better-sqlite3';
import { DateTime } from 'luxon';
import type { ChannelId } from '../core/channels.js';
import { ApiError } from '../core/errors.js';
import type { Site } from '../site/site.js';
import { siteSavings } from '../tariffs/savings.js';
import { floorToHour, HOUR_MS, periodBoundaries } from '../telemetry/align.js';
import { formatInterval } from '../telemetry/interval.js';
import { queryTelemetry } from '../telemetry/query.js';
import { flowStreams } from './flow-streams.js';

export const HISTORY_VIEWS = ['day', 'week', 'month'] as const;
export type HistoryView = (typeof HISTORY_VIEWS)[number];

/** Each energy series: the streams it sums and the counter it reads (docs/design.md signs: in = into the device). */
export const ENERGY_SERIES = {
  pv: { streams: 'pv', counter: 'energy_Wh_decrement' },
  import: { streams: 'grid', counter: 'energy_Wh_increment' },
  export: { streams: 'grid', counter: 'energy_Wh_decrement' },
  batteryIn: { streams: 'battery', counter: 'energy_Wh_increment' },
  batteryOut: { streams: 'battery', counter: 'energy_Wh_decrement' },
  house: { streams: 'house', counter: 'energy_Wh_increment' },
} as const satisfies Record<string, { streams: keyof ReturnType<typeof flowStreams>; counter: ChannelId }>;
export type EnergySeries = keyof typeof ENERGY_SERIES;

export interface SiteHistory {
  timezone: string;
  currency: string;
  view: HistoryView;
  resolution: 'PT1H' | 'P1D';
  /** the periods, as the API's entries name them (UTC start/end) */
  intervals: string[];
  /** kWh per period; null where a stream has no counter at the period's end or the one before */
  energy: Record<EnergySeries, (number | null)[]>;
  /** percent at the period's end, the mean of the storage systems; null without a value */
  soc: (number | null)[];
  /** money saved per period (GET /api/v2/sites/{id}/savings); null without a tariff */
  savings: (number | null)[] | null;
}

/** The view's period boundaries, the first one period before the first shown (its counter is the base). */
function bounds(view: HistoryView, now: number, timezone: string): { resolution: 'PT1H' | 'P1D'; b: number[] } {
  if (view === 'day') {
    const end = floorToHour(now) + HOUR_MS;
    return { resolution: 'PT1H', b: periodBoundaries('PT1H', end - 25 * HOUR_MS, end - 1, timezone) };
  }
  const today = DateTime.fromMillis(now, { zone: timezone }).startOf('day');
  const first = today.minus({ days: view === 'week' ? 7 : 31 }).toMillis();
  return { resolution: 'P1D', b: periodBoundaries('P1D', first, now, timezone) };
}

const READ: ChannelId[] = ['energy_Wh_increment', 'energy_Wh_decrement', 'soc'];
type Values = Partial<Record<ChannelId, number>>;

/** A stream's counters and SoC per period start (ms), from one telemetry query. */
function perPeriod(
  db: Database,
  site: Site,
  streamId: string,
  resolution: 'PT1H' | 'P1D',
  range: { start: number; end: number },
): Map<number, Values> {
  const stream = site.stream(streamId);
  const out = new Map<number, Values>();
  if (!stream) return out;
  const entries = queryTelemetry(db, {
    streamId,
    deviceId: streamId,
    deviceKind: stream.deviceKind,
    ...range,
    resolution,
    include: new Set(['default', 'energy']),
    channels: READ.filter((c) => stream.channels.includes(c)),
    timezone: site.config.site.timezone,
    socScale: 'percent',
  });
  for (const e of entries) out.set(Date.parse(e.interval.slice(0, e.interval.indexOf('/'))), e as Values);
  return out;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function siteHistory(db: Database, site: Site, view: HistoryView, now: number): SiteHistory {
  const timezone = site.config.site.timezone;
  const { resolution, b } = bounds(view, now, timezone);
  const range = { start: b[0]!, end: b[b.length - 1]! };
  const starts = b.slice(1, -1);
  const streams = flowStreams(site);
  // each stream read once: grid and battery serve two series each
  const read = new Map<string, Map<number, Values>>();
  const of = (id: string) => read.get(id) ?? read.set(id, perPeriod(db, site, id, resolution, range)).get(id)!;
  const energy = {} as SiteHistory['energy'];
  for (const [name, s] of Object.entries(ENERGY_SERIES) as [EnergySeries, (typeof ENERGY_SERIES)[EnergySeries]][]) {
    const counters = streams[s.streams].map(of);
    energy[name] = starts.map((start, i) => {
      if (counters.length === 0) return null;
      let wh = 0;
      for (const c of counters) {
        const end = c.get(start)?.[s.counter];
        const base = c.get(b[i]!)?.[s.counter];
        if (end === undefined || base === undefined) return null;
        // energyOut counts down (<= 0, docs/api.md): what went out is how far it fell
        wh += s.counter === 'energy_Wh_decrement' ? base - end : end - base;
      }
      return round3(wh / 1000);
    });
  }
  const socs = streams.battery.map(of);
  const soc = starts.map((start) => {
    const vs = socs.map((m) => m.get(start)?.soc).filter((v): v is number => v !== undefined);
    return vs.length === 0 ? null : Math.round((vs.reduce((a, x) => a + x, 0) / vs.length) * 10) / 10;
  });
  return {
    timezone,
    currency: site.config.site.currency,
    view,
    resolution,
    intervals: starts.map((start, i) => formatInterval(start, b[i + 2]!)),
    energy,
    soc,
    savings: savingsOf(db, site, resolution, { start: b[1]!, end: range.end }, starts, now),
  };
}

function savingsOf(
  db: Database,
  site: Site,
  resolution: 'PT1H' | 'P1D',
  range: { start: number; end: number },
  starts: number[],
  now: number,
): (number | null)[] | null {
  try {
    const { entries } = siteSavings(db, site, { range, resolution, now });
    const by = new Map(entries.map((e) => [Date.parse(e.interval.slice(0, e.interval.indexOf('/'))), e.savings]));
    return starts.map((s) => by.get(s) ?? null);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'SITE_TARIFF_UNAVAILABLE') return null;
    throw err;
  }
}
