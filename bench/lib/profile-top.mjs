/**
 * Sums a V8 .cpuprofile (node --cpu-prof, or the inspector's Profiler.stop) by function: self
 * time, and total time (self plus callees, each function counted once per sample).
 *   ROWS=40 node bench/lib/profile-top.mjs <file.cpuprofile>...   (several files are summed)
 */
import { readFileSync } from 'node:fs';
import { frameName } from './frame-name.mjs';

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: node bench/lib/profile-top.mjs <file.cpuprofile>...');
const rows = Number(process.env.ROWS ?? 40);
// the files' nodes renumbered into one tree of ids, their samples appended
const byId = new Map();
const parent = new Map();
const samples = [];
const timeDeltas = [];
let base = 0;
for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  let top = 0;
  for (const n of p.nodes) {
    byId.set(base + n.id, n);
    for (const c of n.children ?? []) parent.set(base + c, base + n.id);
    top = Math.max(top, n.id);
  }
  // timeDeltas[i + 1] is sample i's length
  for (let i = 0; i < p.samples.length; i++) {
    samples.push(base + p.samples[i]);
    timeDeltas.push(p.timeDeltas[i] ?? 0);
  }
  timeDeltas.push(0);
  samples.push(undefined);
  base += top + 1;
}
const nameOf = (n) => frameName(n.callFrame);
const self = new Map();
const total = new Map();
let all = 0;
for (let i = 0; i < samples.length; i++) {
  const dt = timeDeltas[i + 1] ?? 0;
  if (samples[i] === undefined) continue;
  all += dt;
  let id = samples[i];
  const name = nameOf(byId.get(id));
  self.set(name, (self.get(name) ?? 0) + dt);
  const seen = new Set();
  while (id !== undefined) {
    const nm = nameOf(byId.get(id));
    if (!seen.has(nm)) {
      seen.add(nm);
      total.set(nm, (total.get(nm) ?? 0) + dt);
    }
    id = parent.get(id);
  }
}
const pct = (x) => `${((100 * x) / all).toFixed(1).padStart(5)} %`;
console.log(`${(all / 1000).toFixed(0)} ms sampled`);
console.log('\nself time');
for (const [n, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${pct(t)}  ${n}`);
console.log('\ntotal time');
for (const [n, t] of [...total].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${pct(t)}  ${n}`);

// each sample's time given to the innermost frame of the project's own code (src/, dist/, bench/) on its
// stack: what each of our functions costs with everything it calls into node and its packages
const ours = new Map();
for (let i = 0; i < samples.length; i++) {
  const dt = timeDeltas[i + 1] ?? 0;
  if (samples[i] === undefined) continue;
  let id = samples[i];
  let name = '(no frame of ours)';
  while (id !== undefined) {
    const n = byId.get(id);
    if (/\/(src|dist|bench)\//.test(n.callFrame.url) && !n.callFrame.url.includes('node_modules')) {
      name = nameOf(n);
      break;
    }
    id = parent.get(id);
  }
  ours.set(name, (ours.get(name) ?? 0) + dt);
}
console.log('\ninnermost frame of ours, with what it calls');
for (const [n, t] of [...ours].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${pct(t)}  ${n}`);
