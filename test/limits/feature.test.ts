/**
 * The limits feature's lanes (src/limits/feature.ts): an inverter whose writes never come back
 * (a dead link whose timeout has not run out) holds up neither another inverter's limit nor the
 * fail-safe. Two inverters with their own buses; the capability is a recording one, the loop,
 * the sources and the event bus are the real ones.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ActivePowerLimit, PowerLimitCommand } from '../../src/core/active-power-limit.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { streamIds } from '../../src/core/streams.js';
import { SiteLimitsFeature } from '../../src/limits/feature.js';
import { Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';
import { siteConfig } from '../tariffs/fixture.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');

function limitOf(hangs: boolean, applied: PowerLimitCommand[]): ActivePowerLimit {
  return {
    revert: { kind: 'revert-unlimited', seconds: 60 },
    ratedW: async () => 5000,
    apply: (_bus, command) => {
      applied.push(command);
      return hangs ? new Promise(() => undefined) : Promise.resolve([]);
    },
  };
}

describe('the limits feature', () => {
  it('a hung inverter holds up neither the other inverter nor the next steps', async () => {
    const config = siteConfig([
      '  - { id: inv2, role: inverter, profile: sunspec, connection: { type: tcp, host: 127.0.0.2, unitId: 1 } }',
      'limits:',
      '  exportW: 0',
    ]);
    const site = new Site(config);
    const clock = new ManualClock(T0);
    const bus = new EventBus(pino({ level: 'silent' }));
    const applied: Record<string, PowerLimitCommand[]> = { inv: [], inv2: [] };
    const f = new SiteLimitsFeature({
      config,
      site,
      db: openDatabase(':memory:'),
      clock,
      bus: bus.as('limits'),
      log: pino({ level: 'silent' }),
      poller: { pollFast: () => undefined },
      busFor: () => ({
        readHolding: async () => [],
        readInput: async () => [],
        writeHolding: async () => undefined,
      }),
      // the first inverter in the list is the one that hangs
      limitFor: async (d) => limitOf(d.config.id === 'inv', applied[d.config.id]!),
    });
    await f.start();
    // the inverters' limits are looked for in the background at the start
    await new Promise((r) => setTimeout(r, 10));
    const poll = (ts: number, gridW: number, acW: number) => {
      for (const id of ['inv', 'inv2'])
        bus.emit('reading', { streamId: streamIds.inverter(id), ts, values: { power_AC_W: -acW } });
      bus.emit('reading', { streamId: streamIds.gridMeter('gm'), ts, values: { power_W: gridW } });
    };
    // the house draws 1000 W, each inverter gives 2000 W: 3000 W exported
    poll(T0 + 1000, -3000, 2000);
    await new Promise((r) => setTimeout(r, 10));
    expect(applied.inv).toHaveLength(1);
    expect(applied.inv2).toEqual([{ kind: 'limit', watts: Math.floor((1000 - 0.005 * 10_000) / 2) }]);
    // the house rises: the next step writes the second inverter again, the first is still on its way
    poll(T0 + 2000, 500, 475);
    await new Promise((r) => setTimeout(r, 10));
    expect(applied.inv2!.length).toBe(2);
    expect(applied.inv).toHaveLength(1);
    await Promise.race([f.stop(), new Promise((r) => setTimeout(r, 50))]);
  });
});
