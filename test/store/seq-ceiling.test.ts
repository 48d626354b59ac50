/**
 * The uplink seq's ceiling beside the database (issue 27, finding 6: a database created while
 * the clock read 2020 counted from 1,577,836,800,000, below what the site had sent).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { enqueue } from '../../src/store/outbox.js';
import { outboxSeq, raiseOutboxSeq, readSeqCeiling, SEQ_BLOCK, SeqCeiling } from '../../src/store/seq-ceiling.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-seq-'));
  dirs.push(d);
  return d;
}
const msg = { topic: 'telemetry', body: '{"v":2}', retain: false };

describe('seq ceiling', () => {
  it('is written before the outbox passes it, a block ahead, and read back', () => {
    const file = join(dir(), 'uplink-seq');
    const db = openDatabase(':memory:');
    const c = new SeqCeiling(file);
    expect(c.value).toBe(0);
    c.reserve(db, 3);
    const [first] = enqueue(db, [msg, msg, msg], 0);
    expect(c.value).toBe(outboxSeq(db) + SEQ_BLOCK);
    expect(readSeqCeiling(file)).toBe(c.value);
    expect(first).toBeLessThanOrEqual(c.value);
    // within the block: no write
    writeFileSync(file, 'changed by hand\n');
    c.reserve(db, 10);
    expect(readFileSync(file, 'utf8')).toBe('changed by hand\n');
    expect(readSeqCeiling(file)).toBe(0);
    db.close();
  });

  it('a fresh database made while the clock read 2020 continues above the ceiling', () => {
    const file = join(dir(), 'uplink-seq');
    const old = openDatabase(':memory:');
    const c = new SeqCeiling(file);
    c.reserve(old, 1);
    const sent = enqueue(old, [msg], 0)[0]!;
    old.close();
    // the migration seeds from Date.now(): as a Pi without a clock would have it
    const fresh = openDatabase(':memory:');
    fresh.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'uplink_outbox'").run(1_577_836_800_770);
    raiseOutboxSeq(fresh, new SeqCeiling(file).value);
    const next = enqueue(fresh, [msg], 0)[0]!;
    expect(next).toBeGreaterThan(sent);
    // never lowered
    raiseOutboxSeq(fresh, 5);
    expect(enqueue(fresh, [msg], 0)[0]).toBe(next + 1);
    fresh.close();
  });

  it('refuses to hand out seqs when the ceiling cannot be written', () => {
    const db = openDatabase(':memory:');
    const c = new SeqCeiling(join(dir(), 'missing-dir', 'uplink-seq'));
    expect(() => c.reserve(db, 1)).toThrow(/ENOENT/);
    db.close();
  });
});
