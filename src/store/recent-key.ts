/**
 * The recent table's key (docs/design.md "Storage: where the buckets are"): k = start_s ×
 * STREAM_SPAN + stream, so a quarter hour's rows are adjacent and in time order (a CHECK in the
 * table holds it). A file of its own: recent-buckets.ts and uplink-telemetry.ts both need it, and
 * recent-buckets.ts imports uplink-telemetry.ts.
 */
export const STREAM_SPAN = 2 ** 20;

/** A bucket's key in the recent table. */
export const recentKey = (startS: number, stream: number): number => startS * STREAM_SPAN + stream;
