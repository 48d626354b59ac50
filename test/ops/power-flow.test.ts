/**
 * The status page's power flow on every site shape (issue 45): battery blocks without an
 * inverter, several inverters, no grid meter. Each site is a validated site.yaml; the readings go
 * over the event bus into the live values as the poller publishes them, and the flow is read and
 * rendered as the page does.
 */
import { describe, expect, it } from 'vitest';
import { flowSection } from '../../src/api/http/status-page.js';
import type { InstantValues } from '../../src/core/channels.js';
import { EventBus } from '../../src/core/events.js';
import { createLogger } from '../../src/core/log.js';
import { LiveValues } from '../../src/ops/live.js';
import { powerFlow } from '../../src/ops/status-view.js';
import { Site } from '../../src/site/site.js';
import { fixtureSiteConfig } from '../support/fixture-site.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');
const device = (id: string, role: string, unitId: number, extra: Record<string, unknown> = {}) => ({
  id,
  role,
  profile: 'sunspec',
  connection: { type: 'tcp', host: '127.0.0.1', port: 1502, unitId },
  ...extra,
});

function flowOf(devices: unknown[], readings: Record<string, InstantValues>) {
  const site = new Site(fixtureSiteConfig({ id: 'shape', name: 'Shape', dataDir: '/tmp/unused', devices }));
  const bus = new EventBus(createLogger('silent'));
  const live = new LiveValues(bus, site);
  live.start();
  for (const [streamId, values] of Object.entries(readings)) bus.emit('reading', { streamId, ts: T0, values });
  const flow = powerFlow({ site, live, clock: { now: () => T0 } as never });
  live.stop();
  return { flow, html: flowSection(flow) };
}

describe('power flow by site shape', () => {
  it('battery blocks without an inverter: their power summed, their SoC averaged', () => {
    const { flow, html } = flowOf(
      [device('battery-1', 'battery', 2), device('battery-2', 'battery', 3), device('grid-meter', 'grid-meter', 1)],
      {
        'battery-1': { power_W: 681, soc: 40 },
        'battery-2': { power_W: 681, soc: 60 },
        'grid-meter__GRID_METER_DERIVED': { power_W: 1500, state: 'ok' },
      },
    );
    expect(flow).toMatchObject({ batteryW: 1362, batterySoc: 50, gridW: 1500 });
    expect(html).toContain('Battery: charging');
    expect(html).not.toContain('no reading');
  });

  it('several inverters: PV and batteries of each added up', () => {
    const { flow, html } = flowOf(
      [
        device('inv-a', 'inverter', 1),
        device('bat-a', 'battery', 2, { inverter: 'inv-a' }),
        device('inv-b', 'inverter', 3),
        device('bat-b', 'battery', 4, { inverter: 'inv-b' }),
        device('grid-meter', 'grid-meter', 5),
        device('house', 'consumption-meter', 6),
      ],
      {
        'inv-a__dcm': { power_W: -3000 },
        'inv-b__dcm': { power_W: -2000 },
        'inv-a__bb_agg': { power_W: -500, soc: 30 },
        'inv-b__bb_agg': { power_W: -700, soc: 70 },
        'grid-meter__GRID_METER_DERIVED': { power_W: -4000, state: 'ok' },
        house: { power_W: 2200 },
      },
    );
    expect(flow).toMatchObject({ pvW: 5000, batteryW: -1200, batterySoc: 50, gridW: -4000, houseW: 2200 });
    expect(html).toContain('Grid: exporting · Battery: discharging');
  });

  it('no grid meter: the grid is said to have no meter, the rest still drawn', () => {
    const { flow, html } = flowOf(
      [device('inverter', 'inverter', 1), device('battery-1', 'battery', 2), device('house', 'consumption-meter', 3)],
      { inverter__dcm: { power_W: -1000 }, inverter__bb_agg: { power_W: 400, soc: 55 }, house: { power_W: 600 } },
    );
    expect(flow).toMatchObject({ pvW: 1000, batteryW: 400, batterySoc: 55, gridW: null, houseW: 600, gridState: null });
    expect(html).toContain('Grid: no meter');
    expect(html).toContain('Battery: charging');
    expect(html).toContain('>Grid (no meter)<');
  });
});
