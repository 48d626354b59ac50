/**
 * The golden corpus (test/fixtures/devices/): for each register image built from a public register
 * document, the real daemon polls it over Modbus TCP, and what the API and the MQTT uplink report
 * for the first closed bucket is compared with the values a person reads off that document (the
 * fixture's `expect`), never with what the gateway's own decoder makes of the image.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CorpusSite, corpusSiteId, corpusSiteYaml, startCorpusSite } from '../support/corpus-site.js';
import { getJson, waitFor } from '../support/demo.js';
import { discoveryProblems } from '../support/ha-schema.js';
import { aedesBroker, type Collector, collect, type TestBroker } from '../support/mqtt-brokers.js';
import { parsePromText } from '../support/prom-text.js';
import { allFixtures, FIXTURE_DIR, imageRegisters, loadFixture } from '../support/register-image.js';

const FIXTURES = allFixtures();

/**
 * The /metrics family that shows a live channel, by the channel's name as docs/prometheus-grafana.md
 * lists them (the test's own reading, not the gateway's table).
 */
function liveFamily(channel: string): string {
  if (channel === 'status') return 'sitegw_device_status';
  if (channel.startsWith('frequency_')) return 'sitegw_frequency_hertz';
  if (channel.startsWith('voltage_')) return 'sitegw_voltage_volts';
  if (channel.startsWith('current_')) return 'sitegw_current_amperes';
  if (channel.startsWith('temperature_')) return 'sitegw_temperature_celsius';
  return 'sitegw_power_watts';
}
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface Entry {
  deviceId?: string;
  interval: string;
  [channel: string]: unknown;
}

/** Home Assistant's discovery prefix and the state topics' first levels (site.yaml defaults) */
const HA_DISCOVERY = 'homeassistant';
const haStates = (siteId: string) => `sitegw-ha/${siteId}`;

let broker: TestBroker;
beforeAll(async () => {
  broker = await aedesBroker();
});
afterAll(async () => broker?.close());

describe('the corpus files', () => {
  it('every fixture names its sources and encodes without overlaps', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(3);
    for (const f of FIXTURES) {
      expect(() => imageRegisters(f), f.name).not.toThrow();
      expect(Object.keys(f.expect.streams).length, f.name).toBeGreaterThan(0);
    }
  });

  it('a fixture whose float is not what the meter would hold is refused, not rounded', () => {
    const f = loadFixture(`${FIXTURE_DIR}/eastron-sdm630.yaml`);
    f.image.registers[0] = { ...f.image.registers[0]!, value: 230.1 };
    expect(() => imageRegisters(f)).toThrow(/not exactly representable/);
  });

  it('the generated site.yaml puts every device on the image unit', () => {
    const f = FIXTURES[0]!;
    const text = corpusSiteYaml(f, 'x', { host: '127.0.0.1', port: 1502 }, '/tmp/x');
    expect(text).toContain(`unitId: ${f.image.unitId}`);
  });
});

describe.each(FIXTURES.map((f) => [f.name, f] as const))('%s', (_name, f) => {
  let site: CorpusSite;
  let uplink: Collector;
  let ha: Collector;
  const telemetry = async (stream: string): Promise<Entry[]> => {
    const r = await getJson(
      `${site.url}/api/v1/devices/${encodeURIComponent(stream)}/telemetry?interval=${iso(site.start - 3_600_000)}/PT3H&include=default,energy`,
      site.token,
    );
    if (r.status !== 200) throw new Error(`telemetry ${stream}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.entries as Entry[];
  };

  beforeAll(async () => {
    uplink = await collect(broker.url, `sitegw/${corpusSiteId(f)}/#`);
    ha = await collect(broker.url, `${HA_DISCOVERY}/#`);
    await ha.client.subscribeAsync(`${haStates(corpusSiteId(f))}/#`, { qos: 1 });
    site = await startCorpusSite(f, broker.url);
  });
  afterAll(async () => {
    await site?.stop();
    await uplink?.close();
    await ha?.close();
  });

  it('reports the identity the device gives', async () => {
    const expected = Object.entries(f.expect.identity ?? {});
    // a device is online from its first poll on, which may come after the partner's first token
    const r = await waitFor('every device with an expected identity polled once', async () => {
      const answer = await getJson(`${site.url}/api/v1/devices`, site.token);
      const polled = expected.every(([id]) =>
        answer.body.devices?.some((d: { deviceId: string; online: boolean }) => d.deviceId === id && d.online),
      );
      return answer.status === 200 && polled && answer;
    });
    for (const [id, identity] of expected) {
      const device = r.body.devices.find((d: { deviceId: string }) => d.deviceId === id);
      expect(device, id).toMatchObject({ ...identity, online: true });
    }
  });

  /**
   * The first closed bucket every stream of the fixture has. The clock runs from before the
   * daemon's start and the first quarter hour ends 1.5 s (real) after it: on a loaded machine a
   * device polled after the others (the older LUNA2000 firmware refuses a batch first) misses it,
   * and its streams start with the next one.
   */
  const firstCommon = () =>
    waitFor(
      'a closed bucket of every stream of the fixture',
      async () => {
        const all = await Promise.all(Object.keys(f.expect.streams).map(telemetry));
        return all[0]!.find((e) => all.every((entries) => entries.some((x) => x.interval === e.interval)));
      },
      30_000,
    );

  it("the first closed bucket carries the source's values, lifetime counters included", async () => {
    const first = await firstCommon();
    for (const [stream, values] of Object.entries(f.expect.streams)) {
      const entries = await telemetry(stream);
      const entry = entries.find((e) => e.interval === first.interval);
      expect(entry, `${stream} has the bucket ${first.interval}`).toBeDefined();
      for (const [channel, want] of Object.entries(values))
        expect(entry![channel], `${stream} ${channel}`).toBe(want ?? undefined);
    }
  });

  it('the uplink message of that bucket carries the same values', async () => {
    const first = await firstCommon();
    const sent = await waitFor(`the uplink message for ${first.interval}`, () =>
      uplink
        .json('telemetry')
        .find((m: { interval: string; resync?: string }) => m.interval === first.interval && m.resync === undefined),
    );
    for (const [stream, values] of Object.entries(f.expect.streams)) {
      const entry = (sent.entries as Entry[]).find((e) => e.deviceId === stream);
      expect(entry, `${stream} in the uplink message`).toBeDefined();
      for (const [channel, want] of Object.entries(values))
        expect(entry![channel], `uplink ${stream} ${channel}`).toBe(want ?? undefined);
    }
  });

  if (f.expect.live)
    it("the live view (/metrics) shows the source's grid frequency, phase, DC, temperature and status values", async () => {
      const want = Object.entries(f.expect.live!).flatMap(([stream, values]) =>
        Object.entries(values).map(([channel, value]) => ({ stream, channel, value })),
      );
      const read = async () => {
        const res = await fetch(`${site.url}/metrics`, { headers: { authorization: `Bearer ${site.token}` } });
        const fams = parsePromText(await res.text());
        return want.map(({ stream, channel }) => {
          const samples = fams.get(liveFamily(channel))?.samples.filter((x) => x.labels.stream === stream) ?? [];
          if (channel === 'status') {
            // a code outside the profile's table is status="unknown" with the code beside it
            const on = samples.find((x) => x.value === 1)?.labels;
            return on?.code !== undefined ? `${on.status} (code ${on.code})` : on?.status;
          }
          return samples.find((x) => x.labels.channel === channel)?.value;
        });
      };
      const got = await waitFor('every live value of the fixture', async () => {
        const values = await read();
        return values.every((v) => v !== undefined) ? values : undefined;
      });
      want.forEach((w, i) => expect(got[i], `${w.stream} ${w.channel}`).toBe(w.value));
    });

  // the state of health a battery reports is a 0..1 gauge beside the API's percent (docs/prometheus-grafana.md)
  const soh = Object.entries(f.expect.streams).flatMap(([stream, values]) =>
    typeof values.soh === 'number' ? [{ stream, ratio: values.soh / 100 }] : [],
  );
  if (soh.length > 0)
    it("the live view (/metrics) shows the source's battery state of health as a ratio", async () => {
      const got = await waitFor('every state of health of the fixture', async () => {
        const res = await fetch(`${site.url}/metrics`, { headers: { authorization: `Bearer ${site.token}` } });
        const samples = parsePromText(await res.text()).get('sitegw_battery_soh_ratio')?.samples ?? [];
        const values = soh.map(({ stream }) => samples.find((x) => x.labels.stream === stream)?.value);
        return values.every((v) => v !== undefined) ? values : undefined;
      });
      soh.forEach((w, i) => expect(got[i], `${w.stream} soh`).toBeCloseTo(w.ratio, 6));
    });

  if (f.expect.live)
    it('Home Assistant discovery announces each of them, and its state is the source value', async () => {
      const states = haStates(site.siteId);
      const want = Object.entries(f.expect.live!).flatMap(([stream, values]) =>
        Object.entries(values).map(([channel, value]) => ({ topic: `${states}/streams/${stream}/${channel}`, value })),
      );
      const latest = () => {
        const m = new Map<string, string>();
        for (const x of ha.messages) m.set(x.topic, x.payload);
        return m;
      };
      const got = await waitFor('a discovery config and a state for every live value of the fixture', () => {
        const m = latest();
        const configs = [...m].filter(([t]) => t.startsWith(`${HA_DISCOVERY}/`) && t.endsWith('/config'));
        const rows = want.map((w) => ({
          ...w,
          config: configs.find(([, p]) => p !== '' && JSON.parse(p).state_topic === w.topic),
          state: m.get(w.topic),
        }));
        return rows.every((r) => r.config && r.state !== undefined && r.state !== 'None') ? rows : undefined;
      });
      for (const r of got) {
        const [topic, payload] = r.config!;
        expect(discoveryProblems(topic, payload, HA_DISCOVERY), topic).toEqual([]);
        // a status is an enum option, every other value a number as /metrics shows it
        if (typeof r.value === 'string') expect(r.state, r.topic).toBe(r.value);
        else expect(Number(r.state), r.topic).toBe(r.value);
      }
    });

  // only fixtures whose source names every stream the device has can say the list is exact
  if (f.expect.sensors)
    it('the topology lists exactly the streams the device has', async () => {
      const r = await getJson(`${site.url}/api/v1/sites/${site.siteId}/topology?compact=false`, site.token);
      expect(r.status).toBe(200);
      const sensors: string[] = [];
      type Node = { kind?: string; id?: string; nodes?: Node[]; node?: Node; rightCircuit?: Node };
      const walk = (n: Node) => {
        if (n.kind === 'sensor' && n.id) sensors.push(n.id);
        for (const c of [...(n.nodes ?? []), n.node, n.rightCircuit]) if (c) walk(c);
      };
      walk(r.body.topology);
      expect(sensors.sort()).toEqual([...(f.expect.sensors ?? [])].sort());
    });
});
