/**
 * The site as the grid operator's server is told of it (docs/grid-operator.md "What the client
 * does": reporting and readings): its DER (src/gridop/report.ts) and its readings
 * (src/gridop/mirror.ts). Built from what the daemon already holds: the inverters' ratings the
 * limits loop read from them, the batteries' capacity and control's rates, and the
 * power flow now. Nothing is reported until a rating is known: DERCapability's rtgMaxW is
 * required, and a guessed one would tell the operator a false size.
 */
import type { ControlConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { ownStreamId } from '../core/roles.js';
import { MIRROR_QUANTITIES, type MirrorPoint, type MirrorValues, UOM_W } from '../gridop/mirror.js';
import type { DerReport } from '../gridop/report.js';
import type { SiteLimitsStatus } from '../limits/status.js';
import type { Site } from '../site/site.js';
import type { LiveValues } from './live.js';
import { type PowerFlow, powerFlow } from './status-view.js';

/** IEEE 2030.5 DERType: PV system, other storage, combined PV and storage */
const DER_TYPE = { pv: 4, storage: 80, both: 83 } as const;

export interface DerFacts {
  /** the inverters' rated AC output together, W; 0 while none was read */
  ratedW: number;
  flow: PowerFlow;
  /** the site limits now; null on a site without them */
  limits: SiteLimitsStatus | null;
  hasPv: boolean;
  /** with batteries: control's rates (site.yaml control:) and the capacity the devices gave, when they gave it */
  storage?: { maxChargeW: number; maxDischargeW: number; capacityWh?: number };
}

export function derReportOf(f: DerFacts): DerReport | undefined {
  if (!(f.ratedW > 0)) return undefined;
  const { flow } = f;
  const s = f.storage;
  return {
    type: f.hasPv && s ? DER_TYPE.both : s ? DER_TYPE.storage : DER_TYPE.pv,
    ratedW: Math.round(f.ratedW),
    ...(s ? { maxChargeW: s.maxChargeW, maxDischargeW: s.maxDischargeW } : {}),
    ...(s?.capacityWh ? { capacityWh: Math.round(s.capacityWh) } : {}),
    // the relay open (an outage) is the one sure sign of not being connected; unknown is not it
    connected: flow.gridState !== 'not_present',
    operating: (flow.pvW ?? 0) > 0 || (flow.batteryW ?? 0) !== 0,
    ...(flow.batterySoc === null ? {} : { socPercent: flow.batterySoc }),
    // what the limits hold back is what the site could still give (an upper bound, limits/status.ts)
    availableW: f.limits?.curtailedW ?? 0,
    // the limits loop holds export, import (by shedding charge) and generation; a load limit is not acted on
    doeModes: { exportW: true, importW: true, generationW: true, loadW: false },
  };
}

/** The report from the running daemon: the site, its live values, the limits loop and control's settings. */
export function siteDerReport(d: {
  site: Site;
  live: LiveValues;
  clock: Clock;
  limits: { ratedW(): number; status(): SiteLimitsStatus };
  control: Pick<ControlConfig, 'maxChargeW' | 'maxDischargeW'>;
}): DerReport | undefined {
  const batteries = d.site.byRole('battery');
  const capacityWh = batteries.reduce((a, b) => a + (b.capacityWh ?? 0), 0);
  return derReportOf({
    ratedW: d.limits.ratedW(),
    flow: powerFlow(d),
    limits: d.limits.status(),
    hasPv: d.site.byRole('inverter').length > 0,
    ...(batteries.length > 0
      ? { storage: { maxChargeW: d.control.maxChargeW, maxDischargeW: d.control.maxDischargeW, capacityWh } }
      : {}),
  });
}

type MirrorQuantity = (typeof MIRROR_QUANTITIES)[number];

/**
 * The readings sampled for the grid operator's MirrorUsagePoints (src/gridop/mirror.ts): the
 * connection point as the grid meter reads it (+ import, the forward flow), the DER as its
 * inverters do, turned to + delivering (the reverse flow; an inverter's AC power is − while it
 * delivers, docs/design.md signs): powers summed over the inverters, voltage and frequency the
 * first inverter's that has them.
 */
export function siteMirrorValues(d: {
  site: Site;
  live: LiveValues;
  clock: Clock;
}): Partial<Record<MirrorPoint, MirrorValues>> {
  const now = d.clock.now();
  const valuesOf = (deviceId: string, role: 'grid-meter' | 'inverter') =>
    d.live.current(ownStreamId(role, deviceId), now)?.values as Record<string, unknown> | undefined;
  // an inverter's own power is its AC side's
  const pick = (v: Record<string, unknown> | undefined, q: MirrorQuantity) => {
    const x = v?.[q.key === 'powerW' && v?.power_AC_W !== undefined ? 'power_AC_W' : q.channel];
    return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
  };
  const out: Partial<Record<MirrorPoint, MirrorValues>> = {};
  const meter = d.site.byRole('grid-meter')[0];
  const m = meter && valuesOf(meter.config.id, 'grid-meter');
  if (m) {
    const site: MirrorValues = {};
    for (const q of MIRROR_QUANTITIES) {
      const x = pick(m, q);
      if (x !== undefined) site[q.key] = x;
    }
    out.site = site;
  }
  const inverters = d.site
    .byRole('inverter')
    .map((i) => valuesOf(i.config.id, 'inverter'))
    .filter((v) => v !== undefined);
  if (inverters.length > 0) {
    const der: MirrorValues = {};
    for (const q of MIRROR_QUANTITIES) {
      const xs = inverters.map((v) => pick(v, q)).filter((x): x is number => x !== undefined);
      if (xs.length === 0) continue;
      der[q.key] = q.uom === UOM_W ? -xs.reduce((a, b) => a + b, 0) : xs[0]!;
    }
    out.der = der;
  }
  return out;
}
