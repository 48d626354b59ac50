/**
 * The compact topology's battery (`<inverter>__bb_agg`) counts what its blocks count: with two
 * battery blocks that each report lifetime charge and discharge counters, the aggregate's energy
 * is their sum, not an integral of the summed power from zero (issue 33). The real daemon polls
 * two GoodWe register images over Modbus TCP: the corpus fixture `goodwe-gw10k-et` (inverter and
 * its battery) and a second GoodWe whose battery is named to the first inverter with `inverter:`.
 * The second image is the fixture's with other counter values, read off goodwe et.py as the
 * fixture's are: 35206 "Total Battery Charge" and 35209 "Total Battery Discharge", U32 in 0.1 kWh.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CorpusSite, startCorpusSite } from '../support/corpus-site.js';
import { getJson, waitFor } from '../support/demo.js';
import { type DeviceFixture, FIXTURE_DIR, loadFixture } from '../support/register-image.js';

const first = loadFixture(`${FIXTURE_DIR}goodwe-gw10k-et.yaml`);
// block 2: 12,345 x 0.1 kWh = 1,234,500 Wh charged, 5,432 x 0.1 kWh = 543,200 Wh discharged
const COUNTERS: Record<number, number> = { 35206: 12_345, 35209: 5_432 };
const second: DeviceFixture = {
  ...first,
  name: 'goodwe-second-block',
  image: {
    ...first.image,
    registers: first.image.registers.map((r) =>
      COUNTERS[r.address] !== undefined ? { ...r, value: COUNTERS[r.address]! } : r,
    ),
  },
};
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

describe('battery aggregate of two blocks that count', () => {
  let site: CorpusSite;
  beforeAll(async () => {
    site = await startCorpusSite({ ...first, devices: first.devices.filter((d) => d.id !== 'load') }, undefined, [
      {
        fixture: second,
        devices: [{ id: 'bat2', role: 'battery', profile: 'goodwe-et', options: { inverter: 'inv' } }],
      },
    ]);
  });
  afterAll(async () => site?.stop());

  it('reports the sum of the blocks’ own lifetime counters', async () => {
    const telemetry = async (stream: string) => {
      const r = await getJson(
        `${site.url}/api/v1/devices/${stream}/telemetry?interval=${iso(site.start - 3_600_000)}/PT3H&include=default,energy`,
        site.token,
      );
      if (r.status !== 200) throw new Error(`telemetry ${stream}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.entries as Record<string, unknown>[];
    };
    const bucket = await waitFor(
      'a closed bucket of inv__bb_agg',
      async () => (await telemetry('inv__bb_agg'))[0],
      30_000,
    );
    // block 1 (the fixture): 3,456,700 Wh in, 2,345,600 Wh out; block 2: 1,234,500 and 543,200
    expect(bucket.energy_Wh_increment).toBe(3_456_700 + 1_234_500);
    expect(bucket.energy_Wh_decrement).toBe(-(2_345_600 + 543_200));
    // both blocks charge at 1,500 W (the fixture's 35182 = -1,500, + discharging)
    expect(bucket.power_W).toBe(3000);
    const bat2 = (await telemetry('bat2')).find((e) => e.interval === bucket.interval);
    expect(bat2?.energy_Wh_increment).toBe(1_234_500);
  });
});
