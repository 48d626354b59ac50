/**
 * The long run of the admission invariant harness (test/support/admission-harness.ts; the short
 * run is test/attack/admission-invariants.test.ts): `sitegw demo` with the unit's node flags and a
 * 256 MB heap, BENCH_SEEDS seeds (default 40) of 120 faults over 8 s each from 12 loopback
 * addresses, every invariant checked during and after each seed, then SIGTERM with faults holding
 * connections. Prints the faults injected, the checks made, the peak RSS, every violation with
 * its SEED, and the stop time. `npm run bench -- admission-invariants`; BENCH_SEED_FROM=<n> starts
 * elsewhere. Figures in bench/README.md "Admission invariants".
 */
import { FAULTS, Harness, stopWithin } from '../test/support/admission-harness.js';
import { childDemo } from '../test/support/child-daemon.js';
import { unitRuntime } from '../test/support/unit-runtime.js';

const SEEDS = Number(process.env.BENCH_SEEDS ?? 40);
const FROM = Number(process.env.BENCH_SEED_FROM ?? 1000);
const STEPS = 120;
const SPAN_MS = 8000;

const runtime = unitRuntime();
const d = await childDemo({ nodeArgs: [...runtime.args, '--max-old-space-size=256'], env: runtime.env });
const h = new Harness(d, Number(new URL(d.url).port));
let stopMs: number | null = null;
try {
  await h.init();
  const faults = Object.fromEntries(FAULTS.map((f) => [f, 0])) as Record<string, number>;
  let checks = 0;
  let peak = 0;
  const failed: string[] = [];
  const t0 = Date.now();
  for (let seed = FROM; seed < FROM + SEEDS; seed++) {
    const r = await h.round(seed, STEPS, SPAN_MS);
    for (const [f, n] of Object.entries(r.faults)) faults[f]! += n;
    checks += r.checks;
    peak = Math.max(peak, r.peakRssMib);
    for (const v of r.violations) failed.push(`SEED=${seed}: ${v}`);
    process.stderr.write(`seed ${seed}: ${r.violations.length === 0 ? 'ok' : r.violations.join(' | ')}\n`);
    if (!d.alive()) break;
  }
  h.holdForStop(4);
  await new Promise((r) => setTimeout(r, 500));
  stopMs = await stopWithin(d, 10_000);
  const total = Object.values(faults).reduce((a, b) => a + b, 0);
  console.log('\n## Admission invariants\n');
  console.log(
    '| seeds | faults injected | invariant checks | violations | peak RSS MiB | SIGTERM to exit ms | run s |',
  );
  console.log('|---|---|---|---|---|---|---|');
  console.log(
    `| ${SEEDS} (${FROM}..${FROM + SEEDS - 1}) | ${total} | ${checks} | ${failed.length} | ${peak.toFixed(0)} | ${stopMs ?? 'over 10000'} | ${((Date.now() - t0) / 1000).toFixed(0)} |`,
  );
  console.log(
    `\nfaults: ${Object.entries(faults)
      .map(([f, n]) => `${f} ${n}`)
      .join(', ')}`,
  );
  for (const f of failed) console.log(f);
} finally {
  h.close();
  await d.cleanup();
}
process.exit(stopMs === null ? 1 : 0);
