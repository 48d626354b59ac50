/** The derived house consumption stream: when it exists, how one cycle's reading is built, where the topology shows it. */
import { describe, expect, it } from 'vitest';
import type { Reading } from '../../src/core/channels.js';
import { derivedConsumption } from '../../src/poller/aggregate.js';
import type { DevicePoll } from '../../src/profiles/driver.js';
import { Site } from '../../src/site/site.js';
import { buildTopology } from '../../src/site/topology.js';
import { DERIVED_HOUSE, siteConfig } from './fixture.js';

const poll = (...readings: Reading[]): DevicePoll => ({ readings });
const grid = (w: number, ts = 1000): Reading => ({
  streamId: 'gm__GRID_METER_DERIVED',
  ts,
  values: { power_W: w, state: 'ok' },
});
const inverter = (id: string, acW: number, ts = 1000): Reading => ({
  streamId: id,
  ts,
  values: { power_AC_W: acW, power_DC_W: -acW * 1.03 },
});

describe('derived consumption', () => {
  it('exists only without a house meter and with a grid meter; it belongs to the grid meter', () => {
    expect(new Site(siteConfig()).stream(DERIVED_HOUSE)).toBeUndefined();
    const config = siteConfig([], { houseMeter: false });
    config.devices.find((d) => d.id === 'inv')!.pollIntervalSeconds = 30;
    const s = new Site(config).stream(DERIVED_HOUSE)!;
    expect(s).toMatchObject({
      deviceId: 'gm',
      deviceKind: 'meter',
      channels: ['power_W', 'energy_Wh_increment', 'energy_Wh_decrement'],
      energyFrom: 'power_W',
    });
    // it is built in cycles where both were read: at the slower device's pace
    expect(s.pollPeriodMs).toBe(30_000);
    const noGrid = siteConfig([], { houseMeter: false });
    noGrid.devices = noGrid.devices.filter((d) => d.role !== 'grid-meter');
    expect(new Site(noGrid).stream(DERIVED_HOUSE)).toBeUndefined();
  });

  it('house = grid - inverter AC from one cycle: importing 1500 W while the inverter delivers 2500 W is 4000 W', () => {
    const site = new Site(siteConfig([], { houseMeter: false }));
    const polls = new Map([
      ['gm', poll(grid(1500, 1000))],
      ['inv', poll(inverter('inv', -2500, 1200), { streamId: 'inv__dcm', ts: 1200, values: { power_W: -2600 } })],
    ]);
    expect(derivedConsumption(site, polls)).toEqual({ streamId: DERIVED_HOUSE, ts: 1200, values: { power_W: 4000 } });
    // exporting 1000 W of 2500 W: 1500 W for the house
    expect(
      derivedConsumption(
        site,
        new Map([
          ['gm', poll(grid(-1000))],
          ['inv', poll(inverter('inv', -2500))],
        ]),
      )!.values.power_W,
    ).toBe(1500);
  });

  it('sums every inverter, and is not built when one of its sources did not answer', () => {
    const config = siteConfig([], { houseMeter: false });
    config.devices.push({
      ...config.devices[0]!,
      id: 'inv2',
      connection: { type: 'tcp', host: '127.0.0.1', port: 502, unitId: 9, timeoutMs: 1000 },
    });
    const site = new Site(config);
    const all = new Map([
      ['gm', poll(grid(200))],
      ['inv', poll(inverter('inv', -1000))],
      ['inv2', poll(inverter('inv2', -300))],
    ]);
    expect(derivedConsumption(site, all)!.values.power_W).toBe(1500);
    const silent = new Map(all);
    silent.delete('inv2');
    expect(derivedConsumption(site, silent)).toBeNull();
    const noGrid = new Map(all);
    noGrid.delete('gm');
    expect(derivedConsumption(site, noGrid)).toBeNull();
    // a meter that answered without power (only the relay state) does not count as an answer
    expect(
      derivedConsumption(
        site,
        new Map([...all, ['gm', poll({ streamId: 'gm__GRID_METER_DERIVED', ts: 1, values: { state: 'ok' } })]]),
      ),
    ).toBeNull();
  });

  it('never goes below zero when the readings disagree by a few watts', () => {
    const site = new Site(siteConfig([], { houseMeter: false }));
    expect(
      derivedConsumption(
        site,
        new Map([
          ['gm', poll(grid(-2005))],
          ['inv', poll(inverter('inv', -2000))],
        ]),
      )!.values.power_W,
    ).toBe(0);
  });

  it('the topology shows it in the house circuit, compact or not', () => {
    const site = new Site(siteConfig([], { houseMeter: false }));
    for (const compact of [true, false]) {
      const house = buildTopology(site, compact).nodes![0]!.nodes!.find((n) => n.id === 'home__house');
      expect(house?.nodes?.map((n) => [n.id, n.kind, n.node])).toEqual([
        [DERIVED_HOUSE, 'sensor', { id: 'home__house', kind: 'circuit' }],
      ]);
    }
    const metered = buildTopology(new Site(siteConfig()), true).nodes![0]!.nodes!.find((n) => n.id === 'home__house');
    expect(metered?.nodes?.map((n) => n.id)).toEqual(['hm']);
  });
});
