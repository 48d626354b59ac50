/**
 * The `__bb_agg` reading's lifetime counters: the sum of the blocks' own where every block
 * reports that direction, none (so the bucketer integrates power) where one block does not.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceCounters } from '../../src/core/channels.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { batteryAggregate } from '../../src/poller/aggregate.js';
import type { DevicePoll } from '../../src/profiles/driver.js';
import { Site } from '../../src/site/site.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');
const site = new Site(
  demoSiteConfig(
    { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 2 },
  ),
);
const poll = (id: string, powerW: number, counters?: DeviceCounters): [string, DevicePoll] => [
  id,
  { readings: [{ streamId: id, ts: T0, values: { power_W: powerW, soc: 50 }, ...(counters ? { counters } : {}) }] },
];

describe('battery aggregate counters', () => {
  it('sums each direction every block counts', () => {
    const polls = new Map([
      poll('battery-1', 1000, { inWh: 3_456_700, outWh: 2_345_600 }),
      poll('battery-2', 500, { inWh: 1_234_500, outWh: 543_200 }),
    ]);
    const agg = batteryAggregate(site, 'inverter', polls)!;
    expect(agg.values.power_W).toBe(1500);
    expect(agg.counters).toEqual({ inWh: 4_691_200, outWh: 2_888_800 });
  });

  it('leaves a direction out when one block has no counter for it', () => {
    const polls = new Map([
      poll('battery-1', 1000, { inWh: 3_456_700, outWh: 2_345_600 }),
      poll('battery-2', 500, { inWh: 1_234_500 }),
    ]);
    expect(batteryAggregate(site, 'inverter', polls)!.counters).toEqual({ inWh: 4_691_200 });
    const none = new Map([poll('battery-1', 1000, { inWh: 1 }), poll('battery-2', 500)]);
    expect(batteryAggregate(site, 'inverter', none)!.counters).toBeUndefined();
  });
});
