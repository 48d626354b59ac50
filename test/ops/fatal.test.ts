/**
 * The edges of the last-resort policy (src/ops/fatal.ts) that the end-to-end test
 * (test/e2e/fatal-fault.test.ts) does not reach: a second fault while stopping, a stop that fails
 * and one that never ends. The process is an EventEmitter here; exit is a promise.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { EXIT_FATAL, exitOnUnhandled } from '../../src/ops/fatal.js';
import { capturingLogger } from '../support/uplink.js';

function harness(stop: () => Promise<void>, graceMs?: number) {
  const proc = new EventEmitter();
  const { log, lines } = capturingLogger();
  let stops = 0;
  let exited!: (code: number) => void;
  const exit = new Promise<number>((r) => (exited = r));
  const remove = exitOnUnhandled(proc as unknown as NodeJS.Process, {
    log,
    stop: () => {
      stops++;
      return stop();
    },
    exit: (code) => exited(code),
    graceMs,
  });
  return { proc, lines, exit, stops: () => stops, remove };
}

describe('exitOnUnhandled', () => {
  it('a second fault while stopping exits at once; the stop ran once', async () => {
    const h = harness(() => new Promise(() => undefined));
    h.proc.emit('unhandledRejection', new Error('first'));
    h.proc.emit('uncaughtException', new Error('second'));
    expect(await h.exit).toBe(EXIT_FATAL);
    expect(h.stops()).toBe(1);
    expect(h.lines().map((l) => [l.level, (l.err as { message: string }).message])).toEqual([
      [60, 'first'],
      [60, 'second'],
    ]);
  });

  it('a stop that fails still ends with the fatal code, and says so', async () => {
    const h = harness(() => Promise.reject(new Error('disk gone')));
    h.proc.emit('unhandledRejection', 'not an Error');
    expect(await h.exit).toBe(EXIT_FATAL);
    expect(h.lines().map((l) => (l.err as { message: string }).message)).toEqual([
      'non-Error unhandledRejection: not an Error',
      'disk gone',
    ]);
  });

  it('a stop that never ends is abandoned after the grace period', async () => {
    const h = harness(() => new Promise(() => undefined), 5);
    h.proc.emit('uncaughtException', new Error('stuck'));
    expect(await h.exit).toBe(EXIT_FATAL);
    expect(h.lines().at(-1)?.msg).toBe('the stop after a fatal fault did not finish in time; exiting now');
  });

  it('a log that throws (stdout gone) still gets the stop and the exit', async () => {
    const proc = new EventEmitter();
    let stopped = false;
    const exit = new Promise<number>((done) => {
      const broken = {
        fatal: () => {
          throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
        },
      } as unknown as Logger;
      exitOnUnhandled(proc as unknown as NodeJS.Process, {
        log: broken,
        stop: async () => void (stopped = true),
        exit: done,
      });
    });
    proc.emit('uncaughtException', new Error('first'));
    expect(await exit).toBe(EXIT_FATAL);
    expect(stopped).toBe(true);
  });

  it('removed, it no longer listens', () => {
    const h = harness(() => Promise.resolve());
    h.remove();
    expect(h.proc.listenerCount('uncaughtException') + h.proc.listenerCount('unhandledRejection')).toBe(0);
  });
});
