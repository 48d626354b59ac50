/**
 * What option (a) of bench/README.md "A day not asked before" would save: a stream-day's values
 * stored packed (one row, one BLOB of doubles a column) against the rows the store keeps now,
 * each read and written as the values' JSON text, in a child under systemd/sitegw.service's node
 * flags (bench/lib/packed-day.mjs). The figure is per day, in one process: what an HTTP request
 * would save of its server CPU, before node's and fastify's share.
 *
 *   node --import tsx bench/packed-day.ts        (BENCH_NODE_ARGS overrides the unit's flags)
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseDriver } from '../src/store/driver.js';
import { unitRuntime } from '../test/support/unit-runtime.js';
import { median } from './lib/stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const runtime = unitRuntime();
const driver = chooseDriver(process.version);
if (!driver.ok) throw new Error(driver.reason);
const r = spawnSync(process.execPath, [...runtime.args, join(here, 'lib', 'packed-day.mjs'), driver.pkg], {
  encoding: 'utf8',
  env: { ...process.env, ...runtime.env },
});
if (r.status !== 0) {
  process.stderr.write(r.stderr);
  process.exit(1);
}
const got = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, number[]>;
const m = (k: string) => median(got[k]!);
const cell = (k: string) =>
  `${m(k).toFixed(0)} (${Math.min(...got[k]!).toFixed(0)}–${Math.max(...got[k]!).toFixed(0)})`;
console.log(
  `Node ${process.versions.node}, flags \`${runtime.args.join(' ')}\`; µs a stream-day (96 × 5 values), median of 5 rounds (range)`,
);
console.log('');
console.log('| a day not asked before | rows (now) | packed (option a) | saved |');
console.log('|---|---:|---:|---:|');
console.log(`| read | ${cell('readRows')} | ${cell('readPacked')} | ${(m('readRows') - m('readPacked')).toFixed(0)} |`);
console.log(
  `| read and values' text | ${cell('textRows')} | ${cell('textPacked')} | ${(m('textRows') - m('textPacked')).toFixed(0)} |`,
);
