/**
 * Retained commands are never acted on (docs/mqtt-contract.md "Commands", docs/home-assistant.md
 * "Battery control"): a plan and a resync left retained on the uplink's command topics before the
 * gateway starts are answered RETAINED_COMMAND with their requestId and change nothing; a plan
 * published with the retain flag while the gateway is connected is refused the same way (MQTT 5,
 * Retain As Published), and so is a Home Assistant operation mode. A real mosquitto, the demo
 * daemon with its uplink and Home Assistant on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { loadContract } from '../support/contract.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import {
  type Collector,
  collect,
  MOSQUITTO,
  mosquittoBroker,
  noteMosquittoSkipped,
  type TestBroker,
} from '../support/mqtt-brokers.js';
import { uplinkTo } from '../support/uplink.js';

noteMosquittoSkipped('test/e2e/retained-commands.test.ts');

const PREFIX = 'sitegw/demo-site';
const START = Date.parse('2026-01-15T00:00:00Z');
const MODE = 'sitegw-ha/demo-site/devices/inverter/operation_mode';
const slots = [{ interval: '2026-01-15T01:00:00Z/2026-01-15T01:15:00Z', mode: 'charge', powerW: 1500 }];
type Demo = Awaited<ReturnType<typeof demoSite>>;

describe.skipIf(!MOSQUITTO)('retained commands', () => {
  let broker: TestBroker;
  let demo: Demo;
  let answers: Collector;
  let modes: Collector;
  let token: string;
  const answer = (requestId: string, n = 1) =>
    waitFor(`answer ${n} to ${requestId}`, () => {
      const found = answers.messages
        .filter((m) => m.topic.endsWith('/response'))
        .map((m) => JSON.parse(m.payload))
        .filter((a) => a.requestId === requestId);
      return found.length >= n ? found[n - 1] : undefined;
    });

  beforeAll(async () => {
    broker = await mosquittoBroker();
    answers = await collect(broker.url, `${PREFIX}/#`);
    modes = await collect(broker.url, MODE);
    // left on the broker before the gateway's start, as a fleet service's mistake would
    const p = answers.client;
    await p.publishAsync(`${PREFIX}/cmd/plan`, JSON.stringify({ requestId: 'old-plan', deviceId: 'inverter', slots }), {
      qos: 1,
      retain: true,
    });
    await p.publishAsync(
      `${PREFIX}/cmd/resync`,
      JSON.stringify({ requestId: 'old-resync', interval: '2026-01-14T00:00:00Z/2026-01-15T00:00:00Z' }),
      { qos: 1, retain: true },
    );
    const up = uplinkTo(broker);
    demo = await demoSite({
      speed: 1,
      start: START,
      ...up,
      homeassistant: broker.url,
      configure: (c) => {
        up.configure(c);
        Object.assign(c.homeassistant!, { stateIntervalSeconds: 0.2 });
      },
    });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => {
    await answers?.close();
    await modes?.close();
    await demo?.cleanup();
    await broker?.close();
  });

  it('a plan and a resync retained before the start are refused by name, with their requestId, and change nothing', async () => {
    const contract = loadContract(PREFIX);
    for (const id of ['old-plan', 'old-resync']) {
      const a = await answer(id);
      expect(a).toMatchObject({ v: 2, siteId: 'demo-site', status: 'error', code: 'RETAINED_COMMAND' });
      const topic = `${PREFIX}/cmd/${id === 'old-plan' ? 'plan' : 'resync'}/response`;
      expect(contract.check(topic, a)).toEqual([]);
    }
    expect((await getJson(`${demo.url}/api/v1/devices/inverter/plan`, token)).status).toBe(404);
    // nothing republished for the resync (what the gateway sent so far came before its answer)
    expect(answers.messages.filter((m) => m.payload.includes('"resync":"old-resync"'))).toEqual([]);
  });

  it('a plan published with the retain flag while connected is refused; the same without it is stored', async () => {
    const p = answers.client;
    const body = JSON.stringify({ requestId: 'live-retained', deviceId: 'inverter', slots });
    await p.publishAsync(`${PREFIX}/cmd/plan`, body, { qos: 1, retain: true });
    expect(await answer('live-retained')).toMatchObject({ status: 'error', code: 'RETAINED_COMMAND' });
    expect((await getJson(`${demo.url}/api/v1/devices/inverter/plan`, token)).status).toBe(404);
    // clearing the retained copy is not a command: no answer to it
    await p.publishAsync(`${PREFIX}/cmd/plan`, '', { qos: 1, retain: true });
    const plain = JSON.stringify({ requestId: 'live-plain', deviceId: 'inverter', slots });
    await p.publishAsync(`${PREFIX}/cmd/plan`, plain, { qos: 1 });
    expect(await answer('live-plain')).toMatchObject({ status: 'accepted', plan: { source: 'cloud' } });
    expect(answers.json('plan/response').map((a) => a.requestId)).toEqual(['old-plan', 'live-retained', 'live-plain']);
  });

  it('a Home Assistant mode published with the retain flag while connected is not acted on', async () => {
    await waitFor('the mode state', () => modes.messages.length > 0);
    const p = modes.client;
    // in order from one publisher: the retained one is handled before the plain one
    await p.publishAsync(`${MODE}/set`, 'backup', { qos: 1, retain: true });
    await p.publishAsync(`${MODE}/set`, 'self-consumption', { qos: 1 });
    await waitFor('the plain command acted on', async () => {
      const { body } = await getJson(`${demo.url}/api/v1/devices`, token);
      const inv = (body.devices as { deviceId: string; operationMode?: string; modeChangedBy?: string }[]).find(
        (d) => d.deviceId === 'inverter',
      );
      return (
        inv?.operationMode === 'self-consumption' &&
        demo.daemon.ctx.db.prepare("SELECT changed_by FROM control_mode WHERE device_id = 'inverter'").pluck().get() ===
          'homeassistant'
      );
    });
    expect(modes.messages.filter((m) => m.topic === MODE).map((m) => m.payload)).not.toContain('backup');
    await p.publishAsync(`${MODE}/set`, '', { qos: 1, retain: true });
  });
});
