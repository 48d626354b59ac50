/**
 * The status page's history (GET /status/history.json, src/ops/history.ts) on a year of the demo
 * site's buckets: each view's answer built and serialised, against a bare SELECT of the same rows
 * (every stream the view reads, over the view's range) + JSON.stringify measured in the same run.
 *
 *   node --expose-gc --import tsx bench/status-history.ts [runs]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { demoSiteConfig } from '../src/demo/default-site.js';
import { flowStreams } from '../src/ops/flow-streams.js';
import { type HistoryView, siteHistory } from '../src/ops/history.js';
import { Site } from '../src/site/site.js';
import { insertBuckets } from '../src/store/buckets.js';
import { openDatabase } from '../src/store/db.js';
import { streamKey } from '../src/store/streams.js';
import { bucketRow } from '../test/support/bucket-row.js';
import { median } from './lib/stats.js';

const RUNS = Number(process.argv[2] ?? 15);
const YEAR_START = Date.parse('2026-01-01T00:00:00Z');
const NOW = Date.parse('2026-12-31T12:00:00Z');
const BUCKET_MS = 900_000;
const RANGE_MS: Record<HistoryView, number> = { day: 26 * 3_600_000, week: 9 * 86_400_000, month: 33 * 86_400_000 };

const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-'));
try {
  const ep = { host: '127.0.0.1', port: 1502 };
  const site = new Site(
    demoSiteConfig(
      { inverter: ep, meter: ep },
      { httpHost: '127.0.0.1', httpPort: 0, dataDir: dir, pollSeconds: 10, batteryBlocks: 2 },
    ),
  );
  const db = openDatabase(join(dir, 'bench.db'));
  const f = flowStreams(site);
  const ids = [...new Set([...f.pv, ...f.battery, ...f.grid, ...f.house])];
  const fillStart = performance.now();
  for (const id of ids) {
    const stream = streamKey(db, id);
    const rows = [];
    let inWh = 0;
    let outWh = 0;
    for (let t = YEAR_START; t < NOW; t += BUCKET_MS) {
      const w = Math.round(2000 * Math.sin((t / 86_400_000) * 2 * Math.PI));
      if (w > 0) inWh += w / 4;
      else outWh -= w / 4;
      rows.push(bucketRow({ stream, startS: t / 1000, power_W: w, soc: 50, energyIn: inWh, energyOut: -outWh }));
    }
    insertBuckets(db, rows);
  }
  const fillMs = performance.now() - fillStart;

  const bare = db.prepare('SELECT * FROM buckets WHERE stream = ? AND start_s >= ? AND start_s < ? ORDER BY start_s');
  const keys = ids.map((id) => streamKey(db, id));
  const cases: [string, () => string][] = [];
  for (const view of ['day', 'week', 'month'] as const) {
    cases.push([
      `baseline ${view}: bare SELECT + JSON`,
      () => JSON.stringify(keys.map((k) => bare.all(k, (NOW - RANGE_MS[view]) / 1000, NOW / 1000))),
    ]);
    cases.push([`history.json ${view}`, () => JSON.stringify(siteHistory(db, site, view, NOW))]);
  }
  const samples = new Map<string, number[]>(cases.map(([n]) => [n, []]));
  for (let r = 0; r < RUNS; r++) {
    for (const [name, fn] of cases) {
      (globalThis as { gc?: () => void }).gc?.();
      const t0 = performance.now();
      fn();
      samples.get(name)!.push(performance.now() - t0);
    }
  }
  console.log(
    `filled ${ids.length} streams × one year of 15-minute buckets in ${(fillMs / 1000).toFixed(1)} s; ${RUNS} runs each`,
  );
  console.log('');
  console.log('| case | median ms | ratio vs its baseline |');
  console.log('|---|---:|---:|');
  let base = 1;
  for (const [name] of cases) {
    const m = median(samples.get(name)!);
    if (name.startsWith('baseline')) base = m;
    console.log(`| ${name} | ${m.toFixed(1)} | ${(m / base).toFixed(2)}× |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
