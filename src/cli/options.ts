/** Checks for option values given as text; a wrong value is a UsageError naming the option. */
import { type Output, printError, UsageError } from './output.js';

interface IntRange {
  min: number;
  max: number;
  /** what the value must be, for the message; "a whole number from min to max" unless given */
  what?: string;
}

export function intOption(name: string, v: string | undefined, fallback: number, range: IntRange): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < range.min || n > range.max) {
    const what = range.what ?? `a whole number from ${range.min} to ${range.max}`;
    throw new UsageError(`--${name} must be ${what}, got '${v}'`);
  }
  return n;
}

export function positiveOption(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number, got '${v}'`);
  return n;
}

/** 'a', 'a or b', 'a, b or c' */
const either = (words: readonly string[]): string =>
  words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;

export function choiceOption<T extends string>(
  name: string,
  v: string | undefined,
  fallback: T,
  allowed: readonly T[],
): T {
  if (v === undefined) return fallback;
  const found = allowed.find((a) => a === v);
  if (found === undefined) throw new UsageError(`--${name} must be ${either(allowed)}, got '${v}'`);
  return found;
}

/**
 * The values `read` checks, or undefined after printing the mistake. demo and simulate end with
 * FAILURE (1) on a wrong value, as they always have; parseArgs' own refusals end with USAGE (2).
 */
export function valuesOrMistake<T>(io: Output, command: string, read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    printError(io, command, err.message);
    return undefined;
  }
}

export const PARITIES = ['none', 'even', 'odd'] as const;

/** A serial line's settings as installers write them: '9600 8N1'. */
export function lineSettings(baudRate: number, parity: (typeof PARITIES)[number], stopBits: number): string {
  return `${baudRate} 8${parity.slice(0, 1).toUpperCase()}${stopBits}`;
}
