import { describe, expect, it } from 'vitest';
import { wholePeriods } from '../../src/telemetry/align.js';
import { type TelemetryQuery, type TelemetryResolution, telemetryPeriods } from '../../src/telemetry/query.js';

const Q = 900_000;
const RESOLUTIONS: TelemetryResolution[] = ['PT15M', 'PT1H', 'P1D'];

describe('telemetryPeriods', () => {
  it('counts the whole periods the query lists, counted on the grid for PT15M and PT1H', () => {
    let s = 7;
    const rnd = () => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
    const t0 = Date.parse('2026-03-20T00:00:00Z');
    for (let n = 0; n < 150; n++) {
      const resolution = RESOLUTIONS[n % 3]!;
      // starts and ends on and off the quarter-hour grid, up to 40 days long
      const start = t0 + Math.floor(rnd() * 96 * 20) * Q + (rnd() < 0.5 ? Math.floor(rnd() * Q) : 0);
      const end = start + 1 + Math.floor(rnd() * 40 * 96 * Q);
      const q = { start, end, resolution, timezone: 'Europe/Berlin' } as TelemetryQuery;
      expect(telemetryPeriods(q), `${resolution} ${start}/${end}`).toBe(
        wholePeriods(resolution, start, end, q.timezone).bounds.length - 1,
      );
    }
    expect(telemetryPeriods({ start: t0, end: t0, resolution: 'PT15M', timezone: 'UTC' } as TelemetryQuery)).toBe(0);
  });
});
