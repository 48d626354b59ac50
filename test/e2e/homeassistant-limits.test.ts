/**
 * The site limits in Home Assistant end to end (docs/home-assistant.md "Site limits"): the demo's
 * gateway announces an Export limit number and a Curtailed power sensor to a real mosquitto, in
 * Home Assistant's documented schema; a value on the number is written as the limit schedule
 * through the schedule's own checks (GET /api/v1/sites/{siteId}/limits shows it, source
 * `homeassistant`), the loop holds it at the simulator's meter through SunSpec 704, and the sensor
 * shows the power held back. Text, a fraction, a value over the schedule's maximum and a retained
 * command are refused: the number is told the limit in force again and the schedule is unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSimConfig } from '../../src/sim/config.js';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { discoveryProblems } from '../support/ha-schema.js';
import {
  type Collector,
  collect,
  MOSQUITTO,
  mosquittoBroker,
  noteMosquittoSkipped,
  type TestBroker,
} from '../support/mqtt-brokers.js';

noteMosquittoSkipped('test/e2e/homeassistant-limits.test.ts');

type Demo = Awaited<ReturnType<typeof demoSite>>;
const NUMBER = 'homeassistant/number/sitegw_demo-site/site_export_limit/config';
const SENSOR = 'homeassistant/sensor/sitegw_demo-site/site_curtailed_power/config';
const NOON = Date.parse('2026-06-21T10:30:00Z');

describe.skipIf(!MOSQUITTO)('the export limit and the curtailed power in Home Assistant', () => {
  let broker: TestBroker;
  let demo: Demo;
  let token: string;
  let states: Collector;
  let number: { command_topic: string; state_topic: string; max: number };
  let sensor: { state_topic: string };

  const lastOf = (topic: string) => states.messages.filter((m) => m.topic === topic).at(-1)?.payload;
  const set = (payload: string, retain = false) =>
    states.client.publishAsync(number.command_topic, payload, { qos: 1, retain });
  const schedule = async () => (await getJson(`${demo.url}/api/v1/sites/demo-site/limits`, token)).body;
  const exportW = () => -demo.sim.snapshot().gridW;

  beforeAll(async () => {
    broker = await mosquittoBroker();
    const sim = defaultSimConfig();
    sim.weather.cloudiness = 0;
    sim.house.applianceRate = 0;
    sim.inverter.limitModels = [704];
    for (const b of sim.battery.blocks) b.initialSocPct = b.socMaxPct;
    demo = await demoSite({
      speed: 1,
      start: NOON,
      pollSeconds: 5,
      sim,
      homeassistant: broker.url,
      configure: (cfg) => Object.assign(cfg.homeassistant!, { stateIntervalSeconds: 0.5 }),
    });
    token = await partnerToken(demo.credentials);
    states = await collect(broker.url, 'sitegw-ha/demo-site/limits/#');
    const c = await collect(broker.url, 'homeassistant/+/sitegw_demo-site/+/config');
    try {
      const config = (t: string) =>
        waitFor(`the config ${t}`, () => c.messages.find((x) => x.topic === t && x.retain && x.payload !== ''));
      const n = await config(NUMBER);
      const s = await config(SENSOR);
      expect(discoveryProblems(NUMBER, n.payload, 'homeassistant')).toEqual([]);
      expect(discoveryProblems(SENSOR, s.payload, 'homeassistant')).toEqual([]);
      number = JSON.parse(n.payload);
      sensor = JSON.parse(s.payload);
    } finally {
      await c.close();
    }
  });
  afterAll(async () => {
    await states?.close();
    await demo?.cleanup();
    await broker?.close();
  });

  it('a value on the number becomes the schedule, is held at the meter, and the curtailment shows', async () => {
    // no limit in force yet: the number is unknown, nothing is curtailed
    await waitFor('the states', () => lastOf(number.state_topic) === 'None' && lastOf(sensor.state_topic) === '0');
    expect(exportW()).toBeGreaterThan(2000);

    await set('800');
    await waitFor('the number at the limit in force', () => lastOf(number.state_topic) === '800');
    const body = await schedule();
    expect(body.inForce).toMatchObject({ exportW: 800, sources: { exportW: 'schedule' } });
    expect(body.source).toBe('homeassistant');
    expect(body.slots).toHaveLength(1);

    await waitFor('the export held', () => Math.abs(exportW() - 800) < 100, 30_000);
    const curtailed = Number(
      await waitFor('the curtailed power', () => {
        const v = Number(lastOf(sensor.state_topic));
        return v > 0 ? String(v) : undefined;
      }),
    );
    const s = demo.sim.snapshot();
    const lost = s.pvAvailableW.reduce((a, b) => a + b, 0) - s.pvW.reduce((a, b) => a + b, 0);
    expect(lost).toBeGreaterThan(500);
    // an upper bound of what the PV lost, within the rating
    expect(curtailed).toBeGreaterThanOrEqual(lost - 200);
    expect(curtailed).toBeLessThanOrEqual(6000);
  }, 90_000);

  it('refuses text, a fraction, a value over the maximum and a retained command; the schedule stays', async () => {
    const before = await schedule();
    const sent = states.messages.length;
    for (const bad of ['abc', '', '12.5', String(number.max + 1), '-5', '0x10']) await set(bad);
    await set('100', true);
    // the number is told the limit in force again after each (and at every state interval)
    await waitFor('the answers', () =>
      states.messages.slice(sent).filter((m) => m.topic === number.state_topic).length >= 7 ? true : undefined,
    );
    expect(lastOf(number.state_topic)).toBe('800');
    const after = await schedule();
    expect(after.slots).toEqual(before.slots);
    expect(after.inForce.exportW).toBe(800);
    // the retained copy left on the broker is cleared, so no later test meets it
    await states.client.publishAsync(number.command_topic, '', { qos: 1, retain: true });
  }, 60_000);
});
