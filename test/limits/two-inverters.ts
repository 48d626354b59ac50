/**
 * The limits feature in process on a site of two inverters (inv, inv2) and a grid meter (gm): the
 * real feature, sources and event bus on a manual clock; each inverter's limit is the test's.
 */
import pino from 'pino';
import type { ActivePowerLimit } from '../../src/core/active-power-limit.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { SiteLimitsFeature } from '../../src/limits/feature.js';
import { Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';
import { siteConfig } from '../tariffs/fixture.js';

export const T0 = Date.parse('2026-06-21T10:00:00Z');

/** the feature with `limits` lines in site.yaml, each inverter's limit from `limitOf` */
export function twoInverters(
  limits: readonly string[],
  limitOf: (id: string) => ActivePowerLimit,
  clock = new ManualClock(T0),
): { f: SiteLimitsFeature; bus: EventBus; clock: ManualClock } {
  const config = siteConfig([
    '  - { id: inv2, role: inverter, profile: sunspec, connection: { type: tcp, host: 127.0.0.2, unitId: 1 } }',
    'limits:',
    ...limits,
  ]);
  const bus = new EventBus(pino({ level: 'silent' }));
  const f = new SiteLimitsFeature({
    config,
    site: new Site(config),
    db: openDatabase(':memory:'),
    clock,
    bus: bus.as('limits'),
    log: pino({ level: 'silent' }),
    poller: { pollFast: () => undefined },
    busFor: () => ({ readHolding: async () => [], readInput: async () => [], writeHolding: async () => undefined }),
    limitFor: async (d) => limitOf(d.config.id),
  });
  return { f, bus, clock };
}
