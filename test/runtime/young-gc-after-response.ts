/**
 * Preloaded (`--import`) into the daemon of test/runtime/gc-churn.test.ts, which runs it with
 * --max-semi-space-size=1. After each HTTP response it allocates more short-lived garbage than the
 * young generation holds, so scavenges start from JS allocation while the statements that request
 * prepared and dropped are still young: the collection that finalises them where better-sqlite3 12
 * aborts on Node >= 24.19. At exit it writes to stderr how many young-generation GCs that garbage
 * started, so the test knows the churn met them.
 */
import { subscribe } from 'node:diagnostics_channel';
import { constants, type PerformanceNodeEntry, PerformanceObserver, performance } from 'node:perf_hooks';

/** twice the young generation that --max-semi-space-size=1 allows (two 1 MB semi-spaces) */
const GARBAGE_BYTES = 4 << 20;
/** one array of 1024 small integers is 8 KB on 64-bit */
const ARRAY_BYTES = 8192;

/** the last array stays reachable, so no optimiser can leave the allocations out */
const held: number[][] = [];
/** performance-timeline start and end of each allocation after a response */
const windows: [number, number][] = [];
subscribe('http.server.response.finish', () => {
  const start = performance.now();
  for (let n = 0; n < GARBAGE_BYTES / ARRAY_BYTES; n++) held[0] = new Array<number>(1024).fill(n);
  windows.push([start, performance.now()]);
});

let started = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const young = (e as PerformanceNodeEntry).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
    if (young && windows.some(([from, to]) => e.startTime >= from && e.startTime <= to)) started++;
  }
}).observe({ entryTypes: ['gc'] });

process.on('exit', () => {
  process.stderr.write(
    `gc-churn: ${started} young-generation GCs started by the garbage after ${windows.length} responses\n`,
  );
});
