/**
 * Integrated energy across lives that end without a stop (issue 41, finding 5), through the
 * gateway's own Bucketer on a real database: a battery without counters charging at 1200 W, polled
 * every 5 s, in 30 lives of 5 to 40 s each (a seeded PRNG) with 20 s between them (the unit's 5 s
 * RestartSec and a Pi's start, longer than the 15 s a reading holds), no live view, no bucket
 * close; then what the next life continues from. Baseline:
 * the same lives without the kept counts (what the gateway did before). Then a day of 10 s polls of
 * a 16-stream site with its 96 closes, with and without the keeps: the bytes written to the data
 * directory (the card) and to the kept file (/dev/shm, memory), from /proc/self/io wchar.
 *
 *   node --import tsx bench/energy-lives.ts [seed]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamDef } from '../src/core/streams.js';
import { openDatabase } from '../src/store/db.js';
import { energyKeepFile } from '../src/store/energy-keep.js';
import { BUCKET_MS } from '../src/telemetry/align.js';
import { Bucketer } from '../src/telemetry/bucketer.js';

const seed = Number(process.argv[2] ?? 41);
const T0 = Date.parse('2026-11-23T00:00:00Z');
const wchar = () => Number(/^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const def = (i: number): StreamDef => ({
  id: `bat${i}__bb_agg`,
  deviceId: `bat${i}`,
  deviceKind: 'battery_pack',
  channels: ['power_W', 'energy_Wh_increment', 'energy_Wh_decrement'],
  energyFrom: 'power_W',
});

function rand(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The 30 lives; `reference`: the same readings into one Bucketer that never dies, what the counts
 * would be without a kill (the hold rule bridges a gap up to three polls, within a life or across).
 */
async function lives(mode: 'before' | 'keep' | 'reference'): Promise<{ alive: number; published: number }> {
  const keep = mode === 'keep';
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-lives-'));
  const keepFile = keep ? energyKeepFile(dir) : undefined;
  const r = rand(seed);
  const open = () => {
    const db = openDatabase(join(dir, 'sitegw.db'));
    const b = new Bucketer({ db, streams: [def(1)], pollPeriodMs: 5000, liveStateFile: keepFile, keepRealMs: 0 });
    b.start();
    return { db, b };
  };
  let t = 60;
  let alive = 0;
  let life = open();
  try {
    for (let i = 0; i < 30; i++) {
      const len = 5 + Math.floor(r() * 36);
      if (mode !== 'reference' && i > 0) life = open();
      for (let s = t; s <= t + len; s += 5)
        life.b.ingest({ streamId: 'bat1__bb_agg', ts: T0 + s * 1000, values: { power_W: 1200 } });
      if (mode !== 'reference') life.db.close(); // no stop(): a kill
      alive += len;
      t += len + 20;
    }
    const { db, b } = mode === 'reference' ? life : open();
    b.ingest({ streamId: 'bat1__bb_agg', ts: T0 + t * 1000, values: { power_W: 1200 } });
    b.lifetime('bat1__bb_agg');
    await b.energySynced();
    const published = b.lifetime('bat1__bb_agg')!.energyIn ?? 0;
    db.close();
    return { alive, published };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (keepFile) rmSync(keepFile, { force: true });
  }
}

function day(keep: boolean): { card: number; memory: number } {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-day-'));
  const keepFile = keep ? energyKeepFile(dir) : undefined;
  try {
    const streams = Array.from({ length: 16 }, (_, i) => def(i));
    const db = openDatabase(join(dir, 'sitegw.db'));
    const b = new Bucketer({ db, streams, pollPeriodMs: 10_000 });
    b.start();
    const bk = keep
      ? new Bucketer({
          db: openDatabase(join(dir, 'k.db')),
          streams,
          pollPeriodMs: 10_000,
          liveStateFile: keepFile,
          keepRealMs: 0,
        })
      : null;
    bk?.start();
    let card = 0;
    let memory = 0;
    for (let s = 0; s < 86_400; s += 10) {
      const ts = T0 + s * 1000;
      const w0 = wchar();
      for (const d of streams) b.ingest({ streamId: d.id, ts, values: { power_W: 1000 + (s % 700) } });
      if (s % 900 === 890) b.closeUntil(Math.floor(ts / BUCKET_MS) * BUCKET_MS + BUCKET_MS);
      card += wchar() - w0;
      if (bk) {
        const m0 = wchar();
        for (const d of streams) bk.ingest({ streamId: d.id, ts, values: { power_W: 1000 + (s % 700) } });
        memory += wchar() - m0;
      }
    }
    db.close();
    return { card, memory };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (keepFile) rmSync(keepFile, { force: true });
  }
}

const reference = await lives('reference');
const before = await lives('before');
const now = await lives('keep');
const row = (name: string, x: typeof before) =>
  `| ${name} | ${x.published.toFixed(1)} Wh | ${((reference.published - x.published) / 30).toFixed(2)} Wh (${(((reference.published - x.published) / 30 / 1200) * 3600).toFixed(1)} s of 1200 W) |`;
console.log(`seed ${seed}: 30 lives of 5-40 s (${reference.alive} s in all), 1200 W, 5 s polls, 20 s between lives`);
console.log('| | published by the next life | lost per life |');
console.log('|---|---:|---:|');
console.log(row('reference: one life, no kill', reference));
console.log(row('baseline: durable saves only (before)', before));
console.log(row('kept counts every 10 s (now)', now));
const d = day(true);
console.log(
  `a day of 16 streams at 10 s: ${(d.card / 1e6).toFixed(2)} MB to the data directory (bucket closes), ${(d.memory / 1e6).toFixed(2)} MB to the kept file in /dev/shm (memory, not the card)`,
);
