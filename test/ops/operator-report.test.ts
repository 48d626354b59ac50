import { describe, expect, it } from 'vitest';
import { type DerFacts, derReportOf } from '../../src/ops/operator-report.js';

const facts = (over: Partial<DerFacts> = {}): DerFacts => ({
  ratedW: 6000,
  flow: { pvW: 4000, batteryW: 0, batterySoc: 55.5, houseW: 500, gridW: -3500, gridState: 'ok' },
  limits: null,
  hasPv: true,
  ...over,
});

describe("the site's DER as the grid operator is told of it", () => {
  it('reports nothing before a rating was read from the inverters', () => {
    expect(derReportOf(facts({ ratedW: 0 }))).toBeUndefined();
  });

  it('is PV, storage or both by what the site has, with the rates and capacity of its batteries', () => {
    expect(derReportOf(facts())).toMatchObject({ type: 4, ratedW: 6000, socPercent: 55.5 });
    expect(derReportOf(facts())).not.toHaveProperty('maxChargeW');
    const storage = { maxChargeW: 5000, maxDischargeW: 4000, capacityWh: 10_000 };
    expect(derReportOf(facts({ storage }))).toMatchObject({
      type: 83,
      maxChargeW: 5000,
      maxDischargeW: 4000,
      capacityWh: 10_000,
    });
    expect(derReportOf(facts({ storage: { ...storage, capacityWh: 0 }, hasPv: false }))).toMatchObject({ type: 80 });
    expect(derReportOf(facts({ storage: { ...storage, capacityWh: 0 } }))).not.toHaveProperty('capacityWh');
  });

  it('is disconnected only while the relay is open, operating while PV or the battery run, available what the limits hold back', () => {
    expect(derReportOf(facts({ flow: { ...facts().flow, gridState: 'not_present' } }))?.connected).toBe(false);
    expect(derReportOf(facts({ flow: { ...facts().flow, gridState: 'unknown' } }))?.connected).toBe(true);
    expect(derReportOf(facts({ flow: { ...facts().flow, pvW: 0, batteryW: 0 } }))?.operating).toBe(false);
    expect(derReportOf(facts({ flow: { ...facts().flow, pvW: 0, batteryW: -800 } }))?.operating).toBe(true);
    const limits = { inForce: {}, capW: 1500, binding: 'exportW' as const, curtailedW: 4500, failSafe: false };
    expect(derReportOf(facts({ limits }))?.availableW).toBe(4500);
    expect(derReportOf(facts())?.availableW).toBe(0);
  });
});
