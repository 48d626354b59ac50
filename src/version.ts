import { readFileSync } from 'node:fs';

/** The package version, read once from package.json next to src/ or dist/. */
export const VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/**
 * The earliest wall-clock time that can be right, ms epoch: a clock reading earlier is a Pi
 * without a real-time clock that NTP has not set yet (src/core/time-labels.ts). `npm run build`
 * writes dist/build-info.json with the build time (SOURCE_DATE_EPOCH when set, for reproducible
 * builds); run from source, the date below, which is moved on now and then, is the floor.
 */
const SOURCE_FLOOR = '2026-11-01T00:00:00Z';

export const BUILT_AT: number = (() => {
  const floor = Date.parse(SOURCE_FLOOR);
  try {
    const info = JSON.parse(readFileSync(new URL('./build-info.json', import.meta.url), 'utf8')) as {
      builtAt?: unknown;
    };
    const at = typeof info.builtAt === 'string' ? Date.parse(info.builtAt) : Number.NaN;
    return Number.isFinite(at) ? Math.max(floor, at) : floor;
  } catch {
    return floor;
  }
})();
