/**
 * What the simulated site is made of. Plain data so the CLI can build it from flags or YAML;
 * `validateSimConfig` names the bad field instead of letting the physics produce NaN.
 */

export interface OptimiserConfig {
  /** DC nameplate at STC, W */
  peakW: number;
}

export interface BatteryBlockConfig {
  capacityWh: number;
  maxChargeW: number;
  maxDischargeW: number;
  socMinPct: number;
  socMaxPct: number;
  initialSocPct: number;
  /** stored / DC energy in while charging */
  chargeEfficiency: number;
  /** DC energy out / stored energy drawn while discharging */
  dischargeEfficiency: number;
}

export interface SimConfig {
  location: { latDeg: number; lonDeg: number; timezone: string };
  seed: number;
  pv: {
    optimisers: OptimiserConfig[];
    tiltDeg: number;
    /** from south, west positive */
    azimuthFromSouthDeg: number;
    /** temperature, soiling and wiring losses between STC nameplate and optimiser output */
    derate: number;
  };
  battery: { blocks: BatteryBlockConfig[]; nominalV: number };
  inverter: {
    ratedW: number;
    /** drawn whenever the inverter is awake, W */
    standbyW: number;
    /** [fraction of ratedW on the DC side, conversion efficiency]; linear in between */
    efficiencyCurve: ReadonlyArray<readonly [number, number]>;
    /** the active power limits the inverter offers (SunSpec 123 with 121, 704 with 702); none by default */
    limitModels?: readonly (123 | 704)[];
    /** how long the output takes to follow a new limit, ms (default 1000) */
    limitLagMs?: number;
  };
  house: {
    baseW: number;
    morningPeakW: number;
    eveningPeakW: number;
    /** scales how often appliances (kettle, oven, washing machine...) switch on; 1 = typical */
    applianceRate: number;
  };
  /** mean cloud cover 0 (always clear) .. 1 (overcast); varies around this with seeded noise */
  weather: { cloudiness: number };
  /** fixed integration step of simulated time */
  stepMs: number;
  /**
   * the meter at the grid connection point: a SunSpec meter (models 1 + 203, holding registers),
   * an Eastron SDM630 (float32 input registers) or a Carlo Gavazzi EM340 (INT32 low word first),
   * so the SunSpec path and the profile engine's byte layouts are all exercised
   */
  gridMeter: GridMeterKind;
  /**
   * when set, the inverter host also answers at this unit as a Sungrow SH10RT (sungrow-sh.ts):
   * the same inverter, battery and grid in Sungrow's registers, commanded through its EMS registers
   */
  sungrowUnitId?: number;
  /**
   * when set, the inverter host also answers at this unit as a Huawei SUN2000 (huawei-sun2000.ts):
   * the same inverter in Huawei's registers, limited through its 40125 derating
   */
  huaweiUnitId?: number;
}

export const GRID_METER_KINDS = ['sunspec', 'sdm630', 'em340'] as const;
/** what each kind is, in the words `sitegw simulate` prints */
export const GRID_METER_DESCRIPTIONS: Record<GridMeterKind, string> = {
  sunspec: 'grid meter (1, 203)',
  sdm630: 'grid meter Eastron SDM630 (float32 input registers)',
  em340: 'grid meter Carlo Gavazzi EM340 (INT32 holding registers, low word first)',
};
export type GridMeterKind = (typeof GRID_METER_KINDS)[number];

export function defaultSimConfig(): SimConfig {
  const block = (): BatteryBlockConfig => ({
    capacityWh: 5000,
    maxChargeW: 2500,
    maxDischargeW: 2500,
    socMinPct: 10,
    socMaxPct: 95,
    initialSocPct: 50,
    chargeEfficiency: 0.97,
    dischargeEfficiency: 0.98,
  });
  return {
    location: { latDeg: 52.52, lonDeg: 13.4, timezone: 'Europe/Berlin' },
    seed: 1,
    pv: { optimisers: [1, 2, 3, 4].map(() => ({ peakW: 1500 })), tiltDeg: 30, azimuthFromSouthDeg: 0, derate: 0.9 },
    battery: { blocks: [block(), block()], nominalV: 51.2 },
    inverter: {
      ratedW: 6000,
      standbyW: 6,
      efficiencyCurve: [
        [0, 0.8],
        [0.05, 0.9],
        [0.1, 0.935],
        [0.2, 0.955],
        [0.3, 0.96],
        [0.5, 0.965],
        [0.75, 0.962],
        [1, 0.955],
      ],
    },
    house: { baseW: 300, morningPeakW: 700, eveningPeakW: 1100, applianceRate: 1 },
    weather: { cloudiness: 0.4 },
    stepMs: 1000,
    gridMeter: 'sunspec',
  };
}

export class SimConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`sim config ${field}: ${message}`);
    this.name = 'SimConfigError';
  }
}

export function validateSimConfig(c: SimConfig): void {
  const num = (field: string, v: number, min: number, max = Infinity) => {
    if (!Number.isFinite(v) || v < min || v > max)
      throw new SimConfigError(field, `must be a number in [${min}, ${max}], got ${v}`);
  };
  num('location.latDeg', c.location.latDeg, -90, 90);
  num('location.lonDeg', c.location.lonDeg, -180, 180);
  try {
    new Intl.DateTimeFormat('en', { timeZone: c.location.timezone });
  } catch {
    throw new SimConfigError('location.timezone', `unknown IANA time zone "${c.location.timezone}"`);
  }
  if (!Number.isInteger(c.seed)) throw new SimConfigError('seed', `must be an integer, got ${c.seed}`);
  if (c.pv.optimisers.length < 1 || c.pv.optimisers.length > 40)
    throw new SimConfigError('pv.optimisers', 'needs 1..40 entries');
  c.pv.optimisers.forEach((o, i) => num(`pv.optimisers[${i}].peakW`, o.peakW, 0, 32_000));
  num('pv.tiltDeg', c.pv.tiltDeg, 0, 90);
  num('pv.azimuthFromSouthDeg', c.pv.azimuthFromSouthDeg, -180, 180);
  num('pv.derate', c.pv.derate, 0, 1);
  if (c.battery.blocks.length > 16) throw new SimConfigError('battery.blocks', 'at most 16 blocks');
  num('battery.nominalV', c.battery.nominalV, 1, 1000);
  c.battery.blocks.forEach((b, i) => {
    const f = `battery.blocks[${i}]`;
    num(`${f}.capacityWh`, b.capacityWh, 1, 6_553_400);
    num(`${f}.maxChargeW`, b.maxChargeW, 0, 32_000);
    num(`${f}.maxDischargeW`, b.maxDischargeW, 0, 32_000);
    num(`${f}.socMinPct`, b.socMinPct, 0, 100);
    num(`${f}.socMaxPct`, b.socMaxPct, b.socMinPct, 100);
    num(`${f}.initialSocPct`, b.initialSocPct, 0, 100);
    num(`${f}.chargeEfficiency`, b.chargeEfficiency, 0.5, 1);
    num(`${f}.dischargeEfficiency`, b.dischargeEfficiency, 0.5, 1);
  });
  num('inverter.ratedW', c.inverter.ratedW, 1, 32_000);
  num('inverter.standbyW', c.inverter.standbyW, 0, 100);
  const curve = c.inverter.efficiencyCurve;
  if (curve.length < 1) throw new SimConfigError('inverter.efficiencyCurve', 'needs at least one point');
  curve.forEach(([x, eta], i) => {
    const prev = curve[i - 1];
    num(`inverter.efficiencyCurve[${i}][0]`, x, prev ? prev[0] + 1e-9 : 0, 10);
    num(`inverter.efficiencyCurve[${i}][1]`, eta, 0.5, 1);
  });
  for (const m of c.inverter.limitModels ?? [])
    if (m !== 123 && m !== 704)
      throw new SimConfigError('inverter.limitModels', `must hold 123 and/or 704, got ${String(m)}`);
  if (c.inverter.limitLagMs !== undefined) num('inverter.limitLagMs', c.inverter.limitLagMs, 0, 60_000);
  if (curve[0]?.[0] !== 0) throw new SimConfigError('inverter.efficiencyCurve', 'must start at load fraction 0');
  num('house.baseW', c.house.baseW, 0, 30_000);
  num('house.morningPeakW', c.house.morningPeakW, 0, 30_000);
  num('house.eveningPeakW', c.house.eveningPeakW, 0, 30_000);
  num('house.applianceRate', c.house.applianceRate, 0, 10);
  num('weather.cloudiness', c.weather.cloudiness, 0, 1);
  num('stepMs', c.stepMs, 10, 60_000);
  if (c.sungrowUnitId !== undefined) {
    num('sungrowUnitId', c.sungrowUnitId, 2 + c.battery.blocks.length, 247);
    if (!Number.isInteger(c.sungrowUnitId)) throw new SimConfigError('sungrowUnitId', 'must be a whole unit id');
  }
  if (c.huaweiUnitId !== undefined) {
    num('huaweiUnitId', c.huaweiUnitId, 2 + c.battery.blocks.length, 247);
    if (!Number.isInteger(c.huaweiUnitId)) throw new SimConfigError('huaweiUnitId', 'must be a whole unit id');
    if (c.huaweiUnitId === c.sungrowUnitId)
      throw new SimConfigError('huaweiUnitId', 'must differ from sungrowUnitId: one device per unit');
  }
  if (!GRID_METER_KINDS.includes(c.gridMeter))
    throw new SimConfigError('gridMeter', `must be one of ${GRID_METER_KINDS.join(', ')}, got ${String(c.gridMeter)}`);
}
