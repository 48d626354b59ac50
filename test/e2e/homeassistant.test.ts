/**
 * Home Assistant MQTT discovery end to end: the demo's gateway announces itself to a real
 * mosquitto, and a client on the other side reads what Home Assistant would: the retained
 * discovery configs checked against Home Assistant's documented schema (test/support/ha-schema.ts),
 * the availability, and the states, whose numbers are the API's: energy equal to the API's
 * bucket (exactly once readings stop, and between the bucket before and the bucket after while
 * they run), power, SoC and grid state equal to /metrics at the same moment. The energy sensors
 * never decrease, across a meter's counter reset and a gateway restart. States go out at the
 * configured rate, not on every poll.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { discoveryProblems } from '../support/ha-schema.js';
import { newestBuckets, silenceAndSettle } from '../support/live.js';
import {
  type Collector,
  collect,
  MOSQUITTO,
  mosquittoBroker,
  noteMosquittoSkipped,
  type TestBroker,
} from '../support/mqtt-brokers.js';
import { parsePromText, sampleOf } from '../support/prom-text.js';

noteMosquittoSkipped('test/e2e/homeassistant.test.ts');

const Q = 15 * 60_000;
const DISCOVERY = 'homeassistant';
const STATES = 'sitegw-ha/demo-site';
type Demo = Awaited<ReturnType<typeof demoSite>>;

/** The retained messages below `filter` that a client connecting now gets, once `expected` of them arrived. */
async function retained(
  broker: TestBroker,
  filter: string,
  expected: (m: Map<string, string>) => boolean,
  /** also the live messages after the retained copies, the latest per topic (what the broker then retains) */
  live = false,
): Promise<Map<string, string>> {
  // a subscription gets the broker's retained copies once: when they are not yet what is
  // expected (the gateway still sending its configs after a restart, on a loaded machine),
  // subscribe again rather than wait on a snapshot that cannot change
  const until = Date.now() + 40_000;
  for (;;) {
    const c = await collect(broker.url, filter);
    try {
      const m = await waitFor(
        `retained ${filter}`,
        () => {
          const m = new Map(c.messages.filter((x) => live || x.retain).map((x) => [x.topic, x.payload]));
          return expected(m) ? m : undefined;
        },
        live ? 20_000 : 4_000,
      ).catch((err: unknown) => {
        if (live || Date.now() > until) throw err;
        return undefined;
      });
      if (m) return m;
    } finally {
      await c.close();
    }
  }
}

/** kWh with 5 decimals and Wh with 2 name the same count when kWh·1e5 = Wh·100. */
const sameCount = (kwh: string, wh: number) => Math.round(Number(kwh) * 1e5) === Math.round(Math.abs(wh) * 100);

function expectNeverDecreasing(c: Collector): number {
  const last = new Map<string, number>();
  let checked = 0;
  for (const m of c.messages) {
    if (!/\/energy_(in|out)$/.test(m.topic) || m.payload === '') continue;
    const v = Number(m.payload);
    expect(Number.isFinite(v), `${m.topic}: '${m.payload}'`).toBe(true);
    const before = last.get(m.topic);
    if (before !== undefined) expect(v, `${m.topic} went from ${before} to ${v}`).toBeGreaterThanOrEqual(before);
    last.set(m.topic, v);
    checked++;
  }
  return checked;
}

describe.skipIf(!MOSQUITTO)('Home Assistant discovery to mosquitto', () => {
  let broker: TestBroker;
  let demo: Demo;
  let c: Collector;
  let token: string;
  /** energy states with the daemon-clock time they arrived */
  const timed: { topic: string; payload: string; at: number }[] = [];
  const expectedConfigs = () =>
    1 +
    demo.daemon.site.streams().reduce(
      (n, s) =>
        n +
        s.channels.filter((ch) =>
          [
            'power_W',
            'power_AC_W',
            'power_DC_W',
            'soc',
            'soh',
            'state',
            'energy_Wh_increment',
            'energy_Wh_decrement',
          ].includes(ch),
        ).length +
        // the Energy dashboard's companion of a battery's and the PV's power (+ discharging, + producing)
        (['battery', 'battery_block', 'pv'].includes(s.role ?? '') ? 1 : 0) +
        // the live channels its device reported (grid frequency, phase values, temperature, status, DC values)
        (s.live?.length ?? 0),
      // the operation mode select and the reserve number of each storage system (the demo enables control)
      2 *
        demo.daemon.site.byRole('inverter').filter((d) => demo.daemon.site.batteriesOf(d.config.id).length > 0).length +
        // the site limits' export limit number and curtailed power sensor (test/e2e/homeassistant-limits.test.ts)
        2,
    );

  beforeAll(async () => {
    broker = await mosquittoBroker();
    c = await collect(broker.url, '#');
    demo = await demoSite({
      speed: 300,
      history: 'PT1H',
      homeassistant: broker.url,
      // faster than the schema's 1 s, so several states fall into each poll period of the 300x clock
      configure: (cfg) => Object.assign(cfg.homeassistant!, { stateIntervalSeconds: 0.05, reconnectMaxSeconds: 1 }),
    });
    c.client.on('message', (topic, payload) => {
      if (/\/energy_(in|out)$/.test(topic)) timed.push({ topic, payload: payload.toString(), at: demo.clock.now() });
    });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => {
    await demo?.cleanup();
    await c?.close();
    await broker?.close();
  });

  it('announces every device and sensor in the documented discovery schema, with availability and states', async () => {
    const site = demo.daemon.site;
    // a device's live channels are learned at its first answer (the demo's then stay the same)
    await waitFor(
      'every device answered',
      () => [...site.devices.values()].every((d) => d.lastSeen !== null) || undefined,
    );
    const configs = await retained(broker, `${DISCOVERY}/#`, (m) => m.size >= expectedConfigs());
    expect(configs.size).toBe(expectedConfigs());
    const parsed = new Map<string, any>();
    for (const [topic, payload] of configs) {
      expect(discoveryProblems(topic, payload, DISCOVERY), topic).toEqual([]);
      parsed.set(topic, JSON.parse(payload));
    }
    const all = [...parsed.values()];
    expect(new Set(all.map((x) => x.unique_id)).size, 'unique ids').toBe(all.length);
    // the gateway is a device of its own, and every configured device hangs below it
    const gateway = all.find((x) => x.device_class === 'connectivity');
    expect(gateway).toMatchObject({ state_topic: `${STATES}/status`, payload_on: 'online', payload_off: 'offline' });
    const gatewayId = gateway.device.identifiers[0];
    for (const d of site.devices.values()) {
      const mine = all.filter((x) => x.device.name === (d.config.name ?? d.config.id));
      expect(mine.length, d.config.id).toBeGreaterThan(0);
      expect(
        d.identity.serial && d.identity.model && d.identity.manufacturer,
        `${d.config.id} identity learned`,
      ).toBeTruthy();
      for (const x of mine) {
        expect(x.device).toMatchObject({
          manufacturer: d.identity.manufacturer,
          model: d.identity.model,
          serial_number: d.identity.serial,
          via_device: gatewayId,
        });
        expect(x.availability).toEqual([
          { topic: `${STATES}/status` },
          { topic: `${STATES}/devices/${d.config.id}/availability` },
        ]);
        expect(x.availability_mode).toBe('all');
      }
    }
    // power, lifetime energy in and out per stream, battery SoC, the grid state as a binary sensor
    const of = (stream: string) => all.filter((x) => x.state_topic.startsWith(`${STATES}/streams/${stream}/`));
    for (const s of site.streams()) {
      const sensors = of(s.id);
      const energy = sensors.filter((x) => x.device_class === 'energy');
      expect(energy.map((x) => x.state_topic.split('/').at(-1)).sort(), s.id).toEqual(['energy_in', 'energy_out']);
      for (const x of energy) expect(x).toMatchObject({ state_class: 'total_increasing', unit_of_measurement: 'kWh' });
      for (const x of sensors.filter((y) => y.device_class === 'power' && !y.payload_on))
        expect(x).toMatchObject({ state_class: 'measurement', unit_of_measurement: 'W' });
      if (s.channels.includes('soc'))
        expect(sensors.find((x) => x.device_class === 'battery')).toMatchObject({
          unit_of_measurement: '%',
          state_class: 'measurement',
        });
      if (s.channels.includes('state')) {
        const grid = parsed.get(`${DISCOVERY}/binary_sensor/${gatewayId}/${s.id}_state/config`);
        expect(grid).toMatchObject({ device_class: 'power', payload_on: 'ON', payload_off: 'OFF' });
      }
    }
    // retained state for every sensor, availability online
    // a number for every quantity: at 300x on a loaded machine a device's reading can be stale
    // (None) for a moment, so this waits for the states to be current rather than taking the first
    // (a number's state is what is in force: the export limit number's is None while there is none)
    const numeric = (x: any) =>
      !x.command_topic &&
      (x.device_class === 'energy' || (x.device_class === 'power' && !x.payload_on) || x.device_class === 'battery');
    const current = (m: Map<string, string>) =>
      all.every((x) => m.has(x.state_topic) && (!numeric(x) || Number.isFinite(Number(m.get(x.state_topic)))));
    const states = await retained(broker, `${STATES}/#`, current, true);
    expect(states.get(`${STATES}/status`)).toBe('online');
    for (const d of site.devices.values())
      expect(states.get(`${STATES}/devices/${d.config.id}/availability`)).toBe('online');
    for (const x of all.filter(numeric)) {
      const v = states.get(x.state_topic)!;
      expect(Number.isFinite(Number(v)), `${x.state_topic}: ${v}`).toBe(true);
    }
    expect(states.get(`${STATES}/streams/grid-meter__GRID_METER_DERIVED/state`)).toBe('ON');
  });

  it('energy states lie between the API’s bucket before and the bucket after, and never decrease', async () => {
    const start = demo.clock.now();
    await waitFor('three buckets closed', () => demo.clock.now() > start + 3 * Q + Q / 2 || undefined, 60_000);
    const api = new Map<string, { end: number; in?: number; out?: number }[]>();
    for (const s of demo.daemon.site.streams()) {
      const { body } = await getJson(
        `${demo.url}/api/v1/devices/${encodeURIComponent(s.id)}/telemetry?interval=${new Date(start - 2 * Q).toISOString()}/PT3H&include=energy`,
        token,
      );
      api.set(
        s.id,
        (body.entries as any[]).map((e) => ({
          end: Date.parse(e.interval.split('/')[1]),
          in: e.energy_Wh_increment,
          out: e.energy_Wh_decrement,
        })),
      );
    }
    let lower = 0;
    let upper = 0;
    for (const m of timed.filter((x) => x.at > start && x.at < start + 3 * Q)) {
      const [, stream, key] = /streams\/([^/]+)\/(energy_in|energy_out)$/.exec(m.topic)!;
      const rows = api.get(stream!)!;
      const wh = (r: { in?: number; out?: number }) => Math.abs((key === 'energy_in' ? r.in : r.out) ?? NaN);
      const v = Math.round(Number(m.payload) * 1e5);
      // the state can only hold what was counted by the time it arrived: at most the next bucket's count
      const after = rows.find((r) => r.end >= m.at);
      if (after) expect(v, `${m.topic} at ${m.at}`).toBeLessThanOrEqual(Math.round(wh(after) * 100)), upper++;
      // and it holds at least what a bucket that ended a bucket earlier already had
      const before = rows.filter((r) => r.end <= m.at - Q).at(-1);
      if (before) expect(v, `${m.topic} at ${m.at}`).toBeGreaterThanOrEqual(Math.round(wh(before) * 100)), lower++;
    }
    expect(lower).toBeGreaterThan(50);
    expect(upper).toBeGreaterThan(50);
    expect(expectNeverDecreasing(c)).toBeGreaterThan(100);
  });

  it('energy states never decrease across a meter counter reset and a gateway restart', async () => {
    const house = `${STATES}/streams/house-meter/energy_in`;
    const lastOf = (topic: string) => Number(c.messages.filter((m) => m.topic === topic).at(-1)!.payload);
    const beforeReset = lastOf(house);
    // both meters count from zero again, as after a replacement in the field
    expect(demo.sim.resetCounters('meter', 1)).toBe(true);
    expect(demo.sim.resetCounters('meter', 2)).toBe(true);
    const resetAt = demo.clock.now();
    await waitFor('a bucket closed after the reset', () => demo.clock.now() > resetAt + Q || undefined, 60_000);
    const n = c.messages.length;
    await demo.restartDaemon();
    await waitFor('states after the restart', () => c.messages.slice(n).some((m) => m.topic === house) || undefined);
    const restartedAt = demo.clock.now();
    await waitFor('a bucket closed after the restart', () => demo.clock.now() > restartedAt + Q || undefined, 60_000);
    // the house went on consuming: the count went on growing from where it was, not from the meter's zero
    expect(lastOf(house)).toBeGreaterThan(beforeReset);
    // the PV modules learned before the restart were known at start: none of their configs was deleted
    const deleted = c.messages.slice(n).filter((m) => m.topic.startsWith(`${DISCOVERY}/`) && m.payload === '');
    expect(deleted.map((m) => m.topic)).toEqual([]);
    expect(expectNeverDecreasing(c)).toBeGreaterThan(200);
    // the gateway said it was gone while stopped, and is back
    const status = c.messages.filter((m) => m.topic === `${STATES}/status`).map((m) => m.payload);
    expect(status.slice(-2)).toEqual(['offline', 'online']);
  });

  it('removes the configs and states of a device that left site.yaml', async () => {
    await demo.restartDaemon(() => {
      const cfg = demo.daemon.ctx.config;
      cfg.devices = cfg.devices.filter((d) => d.id !== 'house-meter');
    });
    const configs = await retained(
      broker,
      `${DISCOVERY}/#`,
      (m) => m.size === expectedConfigs() && ![...m.keys()].some((t) => t.includes('/house-meter_')),
    );
    expect([...configs.keys()].filter((t) => t.includes('house-meter'))).toEqual([]);
    // the derived house consumption takes its place
    expect([...configs.keys()].some((t) => t.includes('__CONSUMPTION_METER_DERIVED_energy_in'))).toBe(true);
    const states = await retained(broker, `${STATES}/#`, (m) =>
      [...m.keys()].some((t) => t.includes('__CONSUMPTION_METER_DERIVED/energy_in')),
    );
    expect([...states.keys()].filter((t) => t.includes('/streams/house-meter/'))).toEqual([]);
    // its retained availability too (it said `online` for ever before)
    expect([...states.keys()].filter((t) => t.includes('/devices/house-meter/'))).toEqual([]);
  });

  it('once readings stop: energy equal to the API’s last bucket, power unknown, devices unavailable', async () => {
    await silenceAndSettle(demo);
    const api = await newestBuckets(demo, token);
    const n = c.messages.length;
    // a full round of states after the settling
    await waitFor(
      'states after settling',
      () =>
        c.messages.slice(n).filter((m) => m.topic.endsWith('/energy_out')).length >=
          2 * demo.daemon.site.streams().length || undefined,
    );
    const latest = new Map(c.messages.map((m) => [m.topic, m.payload]));
    let compared = 0;
    for (const s of demo.daemon.site.streams()) {
      const e = api.get(s.id)!;
      expect(
        sameCount(latest.get(`${STATES}/streams/${s.id}/energy_in`)!, e.energy_Wh_increment!),
        `${s.id} in: ${latest.get(`${STATES}/streams/${s.id}/energy_in`)} vs ${e.energy_Wh_increment}`,
      ).toBe(true);
      expect(
        sameCount(latest.get(`${STATES}/streams/${s.id}/energy_out`)!, e.energy_Wh_decrement!),
        `${s.id} out`,
      ).toBe(true);
      for (const ch of ['power_W', 'power_AC_W', 'power_DC_W', 'soc'])
        if (latest.has(`${STATES}/streams/${s.id}/${ch}`))
          expect(latest.get(`${STATES}/streams/${s.id}/${ch}`), `${s.id} ${ch}`).toBe('None');
      compared++;
    }
    expect(compared).toBe(demo.daemon.site.streams().length);
    for (const d of demo.daemon.site.devices.values())
      expect(latest.get(`${STATES}/devices/${d.config.id}/availability`)).toBe('offline');
  });
});

describe.skipIf(!MOSQUITTO)('Home Assistant states and /metrics at the same moment', () => {
  let broker: TestBroker;
  let demo: Demo;
  let c: Collector;
  let token: string;
  beforeAll(async () => {
    broker = await mosquittoBroker();
    c = await collect(broker.url, `${STATES}/streams/#`);
    // real time: a poll every 10 s leaves long stretches in which nothing changes
    demo = await demoSite({
      speed: 1,
      homeassistant: broker.url,
      configure: (cfg) => Object.assign(cfg.homeassistant!, { stateIntervalSeconds: 0.1 }),
    });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => {
    await demo?.cleanup();
    await c?.close();
    await broker?.close();
  });

  it('power, SoC, grid state and energy equal the /metrics values scraped around them', async () => {
    const scrape = async () => {
      const res = await fetch(`${demo.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      return { text, f: parsePromText(text) };
    };
    const live = (text: string) =>
      text
        .split('\n')
        .filter((l) =>
          /^sitegw_(power_watts|energy_joules_total|battery_soc_ratio|grid_state|frequency_hertz|voltage_volts|current_amperes|temperature_celsius|device_status)\{/.test(
            l,
          ),
        )
        .join('\n');
    await waitFor(
      'live values',
      async () => live((await scrape()).text).includes('sitegw_battery_soc_ratio') || undefined,
    );
    let compared = 0;
    let liveCompared = 0;
    for (let attempt = 0; attempt < 20 && compared === 0; attempt++) {
      const a = await scrape();
      const n = c.messages.length;
      // a whole round of states published after the first scrape
      await waitFor(
        'a round of states',
        () =>
          c.messages.slice(n).filter((m) => m.topic.endsWith('/energy_out')).length >=
            2 * demo.daemon.site.streams().length || undefined,
      );
      const b = await scrape();
      // a reading came in between: its states are not the ones scraped; try the next stretch
      if (live(a.text) !== live(b.text)) continue;
      const round = new Map(c.messages.slice(n).map((m) => [m.topic, m.payload]));
      for (const s of demo.daemon.site.streams()) {
        const labels = { stream: s.id };
        const state = (key: string) => round.get(`${STATES}/streams/${s.id}/${key}`);
        for (const ch of ['power_W', 'power_AC_W', 'power_DC_W'] as const) {
          if (!s.channels.includes(ch)) continue;
          expect(Number(state(ch)), `${s.id} ${ch}`).toBe(
            sampleOf(b.f, 'sitegw_power_watts', { ...labels, channel: ch }),
          );
        }
        // the live channels: the same number, or the status whose series is 1
        const family = {
          frequency: 'sitegw_frequency_hertz',
          voltage: 'sitegw_voltage_volts',
          current: 'sitegw_current_amperes',
          temperature: 'sitegw_temperature_celsius',
          power: 'sitegw_power_watts',
        } as const;
        for (const ch of s.live ?? []) {
          const got = state(ch);
          if (ch === 'status') {
            const on = b.f.get('sitegw_device_status')!.samples.find((x) => x.labels.stream === s.id && x.value === 1);
            expect(got, `${s.id} status`).toBe(on?.labels.status ?? 'None');
            liveCompared++;
            continue;
          }
          const name = family[ch.split('_')[0] as keyof typeof family];
          expect(Number(got), `${s.id} ${ch}`).toBe(sampleOf(b.f, name, { ...labels, channel: ch }));
          liveCompared++;
        }
        if (s.channels.includes('soc'))
          expect(Number(state('soc')) / 100, `${s.id} soc`).toBeCloseTo(
            sampleOf(b.f, 'sitegw_battery_soc_ratio', labels),
            10,
          );
        if (s.channels.includes('state'))
          expect(state('state')).toBe(
            sampleOf(b.f, 'sitegw_grid_state', { ...labels, state: 'ok' }) === 1 ? 'ON' : 'OFF',
          );
        for (const dir of ['in', 'out'] as const) {
          expect(
            sameCount(
              state(`energy_${dir}`)!,
              sampleOf(b.f, 'sitegw_energy_joules_total', { ...labels, direction: dir }) / 3600,
            ),
            `${s.id} energy ${dir}`,
          ).toBe(true);
        }
      }
      compared++;
    }
    expect(compared).toBe(1);
    // the demo's devices offer frequency, phase values, temperature, status and DC values (20 and more)
    expect(liveCompared).toBeGreaterThanOrEqual(20);
    expect(sampleOf((await scrape()).f, 'sitegw_homeassistant_connected', {})).toBe(1);
  });

  it('a command on the operation mode select changes the mode the API reports; a bad one is refused and changes nothing', async () => {
    const select = `${DISCOVERY}/select/sitegw_demo-site/inverter_operation_mode/config`;
    const config = JSON.parse((await retained(broker, select, (m) => m.has(select))).get(select)!);
    expect(config.options).toEqual(['self-consumption', 'plan', 'backup', 'optimise']);
    const mode = async () => {
      const { body } = await getJson(`${demo.url}/api/v1/devices`, token);
      return (body.devices as { deviceId: string; operationMode?: string }[]).find((x) => x.deviceId === 'inverter')
        ?.operationMode;
    };
    const states = await collect(broker.url, config.state_topic);
    const stateOf = async () => (await retained(broker, config.state_topic, (m) => m.size > 0)).get(config.state_topic);
    expect(await mode()).toBe('self-consumption');

    await c.client.publishAsync(config.command_topic, 'backup', { qos: 1 });
    await waitFor('the API to report backup', async () => (await mode()) === 'backup');
    await waitFor('the select state backup', async () => (await stateOf()) === 'backup');

    // refused, each with a log line, and the select told the mode in force again: not a mode,
    // nothing, bytes that are no text
    await waitFor('the retained mode', () => states.messages.at(-1)?.payload === 'backup' || undefined);
    // the mode goes out when it changes, not at every state interval: each message after this is an answer
    const before = states.messages.length;
    const bad = ['turbo', '', Buffer.from([0xff, 0xfe, 0x00])];
    for (const b of bad) await c.client.publishAsync(config.command_topic, b, { qos: 1 });
    await waitFor('the refusals answered', () => states.messages.length >= before + bad.length || undefined);
    expect(states.messages.slice(before).map((m) => m.payload)).toEqual(bad.map(() => 'backup'));
    expect(await mode()).toBe('backup');

    await c.client.publishAsync(config.command_topic, 'self-consumption', { qos: 1 });
    await waitFor('the API to report self-consumption', async () => (await mode()) === 'self-consumption');
    expect(await stateOf()).toBe('self-consumption');
    await states.close();
  });
});

describe.skipIf(!MOSQUITTO)('Home Assistant state rate', () => {
  let broker: TestBroker;
  let demo: Demo;
  let c: Collector;
  beforeAll(async () => {
    broker = await mosquittoBroker();
    c = await collect(broker.url, `${STATES}/streams/#`);
    demo = await demoSite({
      speed: 300,
      homeassistant: broker.url,
      configure: (cfg) => {
        Object.assign(cfg.homeassistant!, { stateIntervalSeconds: 3600 });
        // as on a real site before the installer's checks: no operation mode select
        cfg.control.enabled = false;
      },
    });
  });
  afterAll(async () => {
    await demo?.cleanup();
    await c?.close();
    await broker?.close();
  });

  it('publishes states at the configured rate, not on every poll', async () => {
    const topic = `${STATES}/streams/house-meter/power_W`;
    await waitFor('the first round of states', () => c.messages.some((m) => m.topic === topic) || undefined);
    let polls = 0;
    const off = demo.daemon.ctx.bus.on('devicePolled', (e) => void (e.deviceId === 'house-meter' && polls++));
    try {
      await waitFor('20 polls of the house meter', () => polls >= 20 || undefined);
    } finally {
      off();
    }
    // one round when connecting, the next one only after an hour of real time
    expect(c.messages.filter((m) => m.topic === topic)).toHaveLength(1);
  });

  it('offers no operation mode select and no reserve number with control disabled', async () => {
    // the configs go out before the states of the same announcement, in order
    const configs = await retained(broker, `${DISCOVERY}/#`, (m) => m.size > 1);
    await waitFor('the first round of states', () => c.messages.length > 0 || undefined);
    const after = await retained(broker, `${DISCOVERY}/#`, (m) => m.size >= configs.size);
    expect([...after.keys()].filter((t) => t.startsWith(`${DISCOVERY}/binary_sensor/`)).length).toBeGreaterThan(0);
    expect([...after.keys()].filter((t) => t.startsWith(`${DISCOVERY}/select/`))).toEqual([]);
    // nor the reserve number (test/e2e/control-reserve.test.ts has it with control on); the site's
    // export limit number is the limits', not control's (test/e2e/homeassistant-limits.test.ts)
    expect([...after.keys()].filter((t) => t.startsWith(`${DISCOVERY}/number/`))).toEqual([
      `${DISCOVERY}/number/sitegw_demo-site/site_export_limit/config`,
    ]);
  });
});
