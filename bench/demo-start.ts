/**
 * The newcomer's first minute (issue 46 item 4): `npm start` (`node dist/cli.js demo --history
 * P2D`, node's default flags) spawned, and the child's CPU (utime + stime, /proc/<pid>/stat, its
 * threads included) read when its banner is out, when the API first answers a partner's telemetry
 * question with history (the first day of the two, asked every 20 ms from the banner on), and at
 * the log line of the fill's end; then a SIGINT, and the child's exit. Baseline in the same run:
 * the same command without history (the demo's start with nothing to fill). Also from source
 * (`node --import tsx src/cli.ts demo …`, what the tests run). Target: the banner and history
 * answered within 2 s of CPU.
 *
 *   npm run build && node --import tsx bench/demo-start.ts [runs=5]
 *   BENCH_APP=<dir>: measure the build in <dir> (dist/ and src/ there, e.g. an older commit's)
 *   BENCH_SIGINT=fill: the SIGINT goes during the fill, right after history is served (the
 *   exit's wall time is then how long a Ctrl-C in the middle of the fill takes)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DemoCredentials } from '../src/demo/credentials.js';
import { bearer, get, partnerToken } from '../test/support/auth.js';
import { proc } from './lib/proc.js';
import { median } from './lib/stats.js';

const RUNS = Number(process.argv[2] ?? 5);
const APP = process.env.BENCH_APP ?? fileURLToPath(new URL('..', import.meta.url));
const SIGINT_IN_FILL = process.env.BENCH_SIGINT === 'fill';

interface Figures {
  /** CPU seconds from spawn */
  banner: number;
  history?: number;
  filled?: number;
  /** SIGINT to exit, wall ms */
  exitMs: number;
  code: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function once(entry: string[], history: string | undefined): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-demo-'));
  const args = [...entry, 'demo', '--port', '0', '--data-dir', dir, ...(history ? ['--history', history] : [])];
  const child = spawn(process.execPath, args, {
    cwd: APP,
    env: { ...process.env, SITEGW_LOG_LEVEL: 'info', SITEGW_LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const cpu = proc(child.pid!);
  let out = '';
  const seen = new Map<string, number>();
  const watch = (text: string, key: string) => {
    if (!seen.has(key) && out.includes(text)) seen.set(key, cpu.cpuSeconds());
  };
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    watch('Ctrl-C stops it', 'banner');
    watch('"msg":"history pre-filled"', 'filled');
  });
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const deadline = Date.now() + 300_000;
    while (!seen.has('banner')) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no banner: ${out.slice(-2000)}`);
      await sleep(5);
    }
    if (history) {
      const url = /Energy Site API:\s+(http:\/\/\S+)/.exec(out)![1]!;
      const creds = JSON.parse(readFileSync(join(dir, 'demo-credentials.json'), 'utf8')) as DemoCredentials;
      const token = await partnerToken(creds);
      const from = `${new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 13)}:00:00Z`;
      const path = `${url}/api/v1/devices/grid-meter__GRID_METER_DERIVED/telemetry?interval=${from}/P1D`;
      for (;;) {
        const res = await get(path, bearer(token));
        if (res.status === 200 && (res.body.entries as unknown[]).length > 0) break;
        if (Date.now() > deadline) throw new Error(`no history served: ${res.status} ${res.text.slice(0, 200)}`);
        await sleep(20);
      }
      seen.set('history', cpu.cpuSeconds());
      while (!SIGINT_IN_FILL && !seen.has('filled')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no fill end: ${out.slice(-2000)}`);
        await sleep(5);
      }
    }
    const t0 = performance.now();
    child.kill('SIGINT');
    const code = await exit;
    return {
      banner: seen.get('banner')!,
      history: seen.get('history'),
      filled: seen.get('filled'),
      exitMs: performance.now() - t0,
      code,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

const cases: { name: string; entry: string[]; history?: string }[] = [
  { name: 'baseline: `node dist/cli.js demo`, no history', entry: ['dist/cli.js'] },
  { name: '`npm start`: `node dist/cli.js demo --history P2D`', entry: ['dist/cli.js'], history: 'P2D' },
  {
    name: 'from source: `node --import tsx src/cli.ts demo --history P2D`',
    entry: ['--import', 'tsx', 'src/cli.ts'],
    history: 'P2D',
  },
];

const results = new Map<string, Figures[]>(cases.map((c) => [c.name, []]));
// interleaved, so the machine's load falls on every case alike
for (let r = 0; r < RUNS; r++) for (const c of cases) results.get(c.name)!.push(await once(c.entry, c.history));

const baseline = median(results.get(cases[0]!.name)!.map((f) => f.banner));
const fmt = (xs: (number | undefined)[]) => {
  const v = xs.filter((x): x is number => x !== undefined);
  return v.length === 0 ? '' : `${median(v).toFixed(2)} (${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)})`;
};
console.log(
  `${APP}: ${RUNS} runs each, interleaved; CPU s of the child from spawn (utime + stime), median (range); SIGINT ${SIGINT_IN_FILL ? 'during the fill, once history is served' : 'after the fill'}\n`,
);
console.log(
  '| demo start | banner, CPU s | ratio to baseline | history answered, CPU s (target ≤ 2) | fill ended, CPU s | SIGINT to exit, ms | exit codes |',
);
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const c of cases) {
  const fs = results.get(c.name)!;
  console.log(
    `| ${c.name} | ${fmt(fs.map((f) => f.banner))} | ${(median(fs.map((f) => f.banner)) / baseline).toFixed(2)}× | ${fmt(fs.map((f) => f.history))} | ${fmt(fs.map((f) => f.filled))} | ${median(fs.map((f) => f.exitMs)).toFixed(0)} | ${[...new Set(fs.map((f) => f.code))].join(', ')} |`,
  );
}
