import type { BucketRow } from '../../src/store/buckets.js';

/** A fully covered 15-minute bucket row with every channel absent unless given. */
export function bucketRow(row: Pick<BucketRow, 'stream' | 'startS'> & Partial<BucketRow>): BucketRow {
  return {
    coveredMs: 900_000,
    power_W: null,
    power_AC_W: null,
    power_DC_W: null,
    soc: null,
    soh: null,
    energyIn: null,
    energyOut: null,
    state: null,
    ...row,
  };
}
