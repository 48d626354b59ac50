import pino, { type Logger } from 'pino';
import type { SiteConfig } from '../../src/config/types.js';
import { Control } from '../../src/control/control.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';

const ep = { host: '127.0.0.1', port: 1502 };

/**
 * The demo site's control over an in-memory database, not started: no executor, no device bus.
 * For tests of what control stores and answers (modes, reserves, plans), not of what the device does.
 */
export function demoControl(
  o: {
    enabled?: boolean;
    batteryBlocks?: number;
    start?: number;
    log?: Logger;
    configure?: (c: SiteConfig) => void;
  } = {},
) {
  const config = demoSiteConfig(
    { inverter: ep, meter: ep },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/x', pollSeconds: 5, batteryBlocks: o.batteryBlocks ?? 1 },
  );
  config.control.enabled = o.enabled ?? true;
  o.configure?.(config);
  const site = new Site(config);
  const db = openDatabase(':memory:');
  const log = o.log ?? pino({ level: 'silent' });
  const clock = new ManualClock(o.start ?? Date.UTC(2026, 0, 1));
  const bus = new EventBus(log);
  const control = new Control({
    config: config.control,
    site,
    db,
    clock,
    bus,
    log,
    busFor: () => {
      throw new Error('no bus in this test: nothing is started');
    },
    controlFor: async () => undefined,
    tickMs: 1000,
  });
  return { config, site, db, log, clock, bus, control };
}
