/**
 * The site's DER as the grid operator's server is told of it (src/gridop/report.ts,
 * docs/grid-operator.md "Reporting"): built from what the daemon already holds, the inverters'
 * ratings the limits loop read from them, the batteries' capacity and control's rates, and the
 * power flow now. Nothing is reported until a rating is known: DERCapability's rtgMaxW is
 * required, and a guessed one would tell the operator a false size.
 */
import type { ControlConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
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
