/**
 * A device sending a status code its profile's table does not list, and a PV string glitching,
 * through the real daemon: the GoodWe GW10K-ET image of the golden corpus with 35187 "Work Mode"
 * 4 ("Flash Mode", a firmware update: in goodwe const.py's WORK_MODES_ET, in no state of the
 * profile's table) and PV2's registers reading GoodWe's not-available 0xFFFF. /metrics says
 * `unknown` with the code, Home Assistant gets its payload for unknown (the code is no option of
 * the enum), the poll goes on, and PV1 keeps its values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CorpusSite, corpusSiteId, startCorpusSite } from '../support/corpus-site.js';
import { waitFor } from '../support/demo.js';
import { aedesBroker, type Collector, collect, type TestBroker } from '../support/mqtt-brokers.js';
import { parsePromText } from '../support/prom-text.js';
import { FIXTURE_DIR, loadFixture } from '../support/register-image.js';

let broker: TestBroker;
let site: CorpusSite;
let ha: Collector;
const fixture = loadFixture(`${FIXTURE_DIR}/goodwe-gw10k-et.yaml`);
const states = `sitegw-ha/${corpusSiteId(fixture)}/streams`;

beforeAll(async () => {
  broker = await aedesBroker();
  const regs = fixture.image.registers.filter((r) => r.address !== 35187 && ![35107, 35108].includes(r.address));
  regs.push(
    { fn: 'holding', address: 35187, type: 'u16', value: 4, name: '35187 Work Mode (4 Flash Mode)' },
    { fn: 'holding', address: 35107, type: 'words', words: [0xffff, 0xffff], name: '35107/35108 PV2 V, I glitching' },
  );
  fixture.image.registers = regs;
  ha = await collect(broker.url, `${states}/#`);
  site = await startCorpusSite(fixture, broker.url);
});
afterAll(async () => {
  await site?.stop();
  await ha?.close();
  await broker?.close();
});

const metrics = async () => {
  const res = await fetch(`${site.url}/metrics`, { headers: { authorization: `Bearer ${site.token}` } });
  expect(res.status).toBe(200);
  return parsePromText(await res.text());
};

describe('a status code outside the table, a string glitching', () => {
  it('/metrics shows the status as unknown with its code, and no state of the table', async () => {
    const samples = await waitFor('the inverter status in /metrics', async () => {
      const s = (await metrics()).get('sitegw_device_status')?.samples.filter((x) => x.labels.stream === 'inv') ?? [];
      return s.length > 0 ? s : undefined;
    });
    expect(samples.filter((x) => x.value === 1).map((x) => x.labels)).toEqual([
      expect.objectContaining({ status: 'unknown', code: '4' }),
    ]);
    expect(samples.filter((x) => x.labels.status !== 'unknown').every((x) => x.value === 0)).toBe(true);
  });

  it('Home Assistant gets its payload for unknown, and the other values go on', async () => {
    // a round of states sent before the first poll has 'None' for every value: wait for one after it
    const latest = await waitFor('the inverter status and power states after a poll', () => {
      const m = new Map(ha.messages.map((x) => [x.topic, x.payload]));
      const power = m.get(`${states}/inv/power_AC_W`);
      return m.has(`${states}/inv/status`) && power !== undefined && power !== 'None' ? m : undefined;
    });
    expect(latest.get(`${states}/inv/status`)).toBe('None');
    expect(Number(latest.get(`${states}/inv/power_AC_W`))).toBe(-2850);
  });

  it('the glitching string has no voltage or current, the other string keeps its own', async () => {
    const f = await waitFor('string 1 in /metrics', async () => {
      const m = await metrics();
      return m.get('sitegw_voltage_volts')?.samples.some((x) => x.labels.stream === 'inv__pv1') ? m : undefined;
    });
    const volts = f.get('sitegw_voltage_volts')!.samples;
    expect(volts.find((x) => x.labels.stream === 'inv__pv1')?.value).toBe(412);
    expect(volts.some((x) => x.labels.stream === 'inv__pv2')).toBe(false);
    // its own power register still answers: 35109 1,950 W
    const power = f.get('sitegw_power_watts')!.samples.find((x) => x.labels.stream === 'inv__pv2');
    expect(power?.value).toBe(-1950);
  });
});
