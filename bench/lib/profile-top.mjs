/**
 * Sums a V8 .cpuprofile (node --cpu-prof, or the inspector's Profiler.stop) by function: self
 * time, and total time (self plus callees, each function counted once per sample).
 *   node bench/lib/profile-top.mjs <file.cpuprofile> [rows]
 */
import { readFileSync } from 'node:fs';

const [file, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/lib/profile-top.mjs <file.cpuprofile> [rows]');
const rows = Number(rowsArg ?? 40);
const { nodes, samples, timeDeltas } = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const nameOf = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};
const self = new Map();
const total = new Map();
let all = 0;
for (let i = 0; i < samples.length; i++) {
  const dt = timeDeltas[i + 1] ?? 0;
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
