import { CHANNEL_TABLE } from '../../src/core/channels.js';
import type { BucketRow } from '../../src/store/buckets.js';

/** A fully covered 15-minute bucket row with every channel absent unless given. */
export function bucketRow(row: Pick<BucketRow, 'stream' | 'startS'> & Partial<BucketRow>): BucketRow {
  const absent = Object.fromEntries(CHANNEL_TABLE.map((c) => [c.field, null]));
  return { coveredMs: 900_000, ...absent, ...row } as BucketRow;
}
