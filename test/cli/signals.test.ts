/**
 * The stop signals of a long-running command (src/cli/until-signal.ts): armed before the command
 * starts anything or says it is ready, so a SIGTERM sent by whoever read the ready line cannot
 * meet node's default and kill the process unsaved (seen: `sitegw consume` killed by SIGTERM
 * after printing "consuming", 1 run in 15 under CPU load).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { watchSignals } from '../../src/cli/until-signal.js';
import { captureLines } from '../support/output.js';

const fakeProcess = () => new EventEmitter() as unknown as NodeJS.Process & EventEmitter;

describe('watchSignals', () => {
  it('stops cleanly for a signal that came before the command was ready', async () => {
    const proc = fakeProcess();
    const io = captureLines();
    const signals = watchSignals(io, proc);
    proc.emit('SIGTERM', 'SIGTERM');
    let stopped = 0;
    expect(await signals.until(async () => void stopped++)).toBe(0);
    expect(stopped).toBe(1);
  });

  it('stops once for the first signal, and leaves a second one to node (which ends the process)', async () => {
    const proc = fakeProcess();
    const io = captureLines();
    const signals = watchSignals(io, proc);
    expect(['SIGTERM', 'SIGINT', 'SIGHUP'].map((s) => proc.listenerCount(s))).toEqual([1, 1, 1]);
    let release: () => void = () => undefined;
    const done = signals.until(() => new Promise<void>((r) => (release = r)));
    proc.emit('SIGINT', 'SIGINT');
    expect(['SIGTERM', 'SIGINT', 'SIGHUP'].map((s) => proc.listenerCount(s))).toEqual([0, 0, 0]);
    release();
    expect(await done).toBe(0);
    expect(io.stderr).toEqual(['', 'SIGINT: stopping']);
  });

  it('reports a stop that failed with exit 1', async () => {
    const proc = fakeProcess();
    const io = captureLines();
    const signals = watchSignals(io, proc);
    const done = signals.until(async () => {
      throw new Error('disk gone');
    });
    proc.emit('SIGTERM', 'SIGTERM');
    expect(await done).toBe(1);
  });
});
