/**
 * The status page's server-rendered times (src/api/http/status-time.ts) across Europe/Berlin's
 * DST end: the control slot's end and a device's last answer in the site's zone with the zone's
 * name, so the 02:30 before and after the clocks go back read apart, and never a UTC 'Z' stamp.
 */
import { describe, expect, it } from 'vitest';
import { controlSection, devicesSection } from '../../src/api/http/status-page.js';
import { siteDateTime } from '../../src/api/http/status-time.js';
import type { DeviceView, StatusView } from '../../src/ops/status-view.js';

const site = { id: 's', name: 'S', timezone: 'Europe/Berlin' };

describe('status page times in the site’s zone', () => {
  it('tells the two 02:30s of the night the clocks go back apart', () => {
    expect(siteDateTime('2026-10-25T00:30:00Z', 'Europe/Berlin')).toBe('2026-10-25 02:30:00 CEST');
    expect(siteDateTime('2026-10-25T01:30:00Z', 'Europe/Berlin')).toBe('2026-10-25 02:30:00 CET');
    expect(siteDateTime(Date.parse('2026-06-21T22:05:09Z'), 'Australia/Sydney')).toMatch(/^2026-06-22 08:05:09 /);
  });

  it('renders the control slot’s end and a device’s last answer that way', () => {
    const control = {
      enabled: true,
      storages: [
        {
          deviceId: 'inverter',
          mode: 'plan',
          slot: {
            start: '2026-10-25T01:15:00Z',
            end: '2026-10-25T01:30:00Z',
            mode: 'charge',
            powerW: 2000,
            status: 'running',
          },
          command: null,
        },
      ],
    } as unknown as StatusView['control'];
    const html = controlSection({ site, control } as StatusView);
    expect(html).toContain('charge 2000 W until 02:30 CET (running)');
    const device = {
      id: 'm',
      name: null,
      role: 'grid-meter',
      online: true,
      lastSeen: '2026-10-25T00:59:59.500Z',
      lastError: null,
      errors: {},
      manufacturer: null,
      model: null,
      values: null,
    } as DeviceView;
    const rows = devicesSection([device], 'Europe/Berlin');
    expect(rows).toContain('2026-10-25 02:59:59 CEST');
    expect(rows + html).not.toMatch(/\d\d:\d\d(:\d\d)?Z/);
  });
});
