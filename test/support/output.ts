/**
 * A command's Output (src/cli/output.ts) that keeps what it printed as lines, for tests that
 * compare whole lines: each write's text is split at its line ends.
 */
import type { Output } from '../../src/cli/output.js';

export function captureLines(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const lines = (text: string) => text.replace(/\n$/, '').split('\n');
  return { stdout, stderr, out: (t) => stdout.push(...lines(t)), err: (t) => stderr.push(...lines(t)) };
}
