import { CHANNEL_TABLE } from '../core/channels.js';

type Channel = (typeof CHANNEL_TABLE)[number];

/** A stored column of the bucket tables besides stream and start_s, by its name in the table. */
export type BucketColumn = 'covered_ms' | Channel['column'];
/** every column after start_s, in BucketTuple order */
export const ALL_COLUMNS: readonly BucketColumn[] = ['covered_ms', ...CHANNEL_TABLE.map((c) => c.column)];
