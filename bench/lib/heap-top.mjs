/**
 * Sums V8 sampling heap profiles (.heapprofile, the inspector's HeapProfiler.stopSampling, taken
 * with the objects the collector freed included) by the function that allocated: what a round
 * allocated, garbage and all, which is what the young generation's collections pay for.
 *   ROWS=40 node bench/lib/heap-top.mjs <file.heapprofile>...   (several files are summed)
 */
import { readFileSync } from 'node:fs';
import { frameName } from './frame-name.mjs';

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: node bench/lib/heap-top.mjs <file.heapprofile>...');
const rows = Number(process.env.ROWS ?? 40);
const self = new Map();
let total = 0;
const walk = (n) => {
  const bytes = n.selfSize;
  if (bytes > 0) {
    const k = frameName(n.callFrame);
    self.set(k, (self.get(k) ?? 0) + bytes);
    total += bytes;
  }
  for (const c of n.children ?? []) walk(c);
};
for (const file of files) walk(JSON.parse(readFileSync(file, 'utf8')).head);
console.log(`${(total / 2 ** 20).toFixed(1)} MB allocated (sampled estimate)\n`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, rows))
  console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${(v / 2 ** 10).toFixed(0).padStart(8)} kB  ${k}`);
