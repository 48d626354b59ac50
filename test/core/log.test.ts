/**
 * The log's write policy (src/core/log.ts) on a stream whose reader is under the test's control:
 * a reader that stops costs lines (bounded, counted), never memory; a channel that broke costs
 * the lines, never an error or a wait. The daemon's side (a real stdout pipe that stalls or
 * breaks, then SIGTERM) is test/e2e/fatal-fault.test.ts.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { logDestination, logDrained, MAX_QUEUED_LOG_BYTES } from '../../src/core/log.js';

/** A reader that takes nothing until `resume()`; `got` is what it took. */
function stallingReader() {
  const got: string[] = [];
  let stalled = true;
  const waiting: (() => void)[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      got.push(chunk.toString());
      if (stalled) waiting.push(done);
      else done();
    },
  });
  const resume = () => {
    stalled = false;
    for (const done of waiting.splice(0)) done();
  };
  return { out, got, resume };
}

const LINE = `${JSON.stringify({ level: 30, msg: 'x'.repeat(200) })}\n`;

describe('logDestination', () => {
  it('a reader that stopped: lines past the bound are dropped, then counted in a note when it reads again', async () => {
    const { out, got, resume } = stallingReader();
    const dest = logDestination(out);
    // a line is taken while the queue is within the bound, so the bound plus one line at most
    const taken = Math.floor(MAX_QUEUED_LOG_BYTES / LINE.length) + 1;
    for (let i = 0; i < taken + 50; i++) dest.write(LINE);
    expect(out.writableLength).toBeLessThanOrEqual(MAX_QUEUED_LOG_BYTES + LINE.length);
    resume();
    await logDrained(out);
    expect(out.writableLength).toBe(0);
    dest.write(LINE);
    const note = JSON.parse(got[got.length - 2] ?? '') as { msg: string; dropped: number };
    expect(note.msg).toMatch(/log lines dropped/);
    expect(note.dropped).toBe(50);
    expect(got.length).toBe(taken + 2);
  });

  it('a broken channel: writes are dropped without an error reaching anyone', async () => {
    const out = new Writable({
      write: (_c, _e, done) => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })),
    });
    const dest = logDestination(out);
    dest.write(LINE);
    await new Promise((r) => out.once('close', r));
    expect(out.destroyed).toBe(true);
    expect(() => dest.write(LINE)).not.toThrow();
  });

  it('logDrained: a reader that never reads holds the exit no longer than the bound', async () => {
    const { out } = stallingReader();
    logDestination(out).write(LINE);
    expect(out.writableLength).toBeGreaterThan(0);
    await logDrained(out, 10);
    expect(out.writableLength).toBeGreaterThan(0);
  });
});
