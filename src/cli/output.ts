/**
 * The one way a command prints: results to stdout, mistakes to stderr as `sitegw <command>: <what>`,
 * and the process ends with a code from EXIT. Commands take an Output so tests can read what they
 * print without a child process; the text handed to it carries its own line ends, as a stream's does.
 */
import { EXIT_FATAL } from '../ops/fatal.js';

export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

export const stdio: Output = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/**
 * Exit codes. Scripts tell "fix the file" (1) from "wrong path or wrong command line" (2), so a config
 * that cannot be read shares USAGE's code. Values are what the commands have always returned.
 */
export const EXIT = {
  OK: 0,
  /** the command ran and failed: nothing found, a refused change, a port in use, a bad demo option */
  FAILURE: 1,
  /** site.yaml was read and has mistakes */
  CONFIG_INVALID: 1,
  /** wrong arguments, an unknown command, or a bus that cannot be opened at all */
  USAGE: 2,
  /** site.yaml is missing, a folder, or not readable */
  CONFIG_UNREADABLE: 2,
  /** Ctrl-C at a prompt (128 + SIGINT) */
  INTERRUPTED: 130,
  /** a fault no handler contained stopped the daemon (src/ops/fatal.ts) */
  FATAL: EXIT_FATAL,
} as const;

/** A mistake in the command line: printed as one line, exit USAGE. */
export class UsageError extends Error {}

/** `sitegw <command>: <message>` on stderr. */
export function printError(io: Output, command: string, message: string): void {
  io.err(`sitegw ${command}: ${message}\n`);
}

/** A command's synopsis on a usage mistake: one form on the `usage:` line, several below it. */
export function printUsage(io: Output, forms: readonly string[]): void {
  io.err(forms.length === 1 ? `usage: ${forms[0]}\n` : `usage:\n${forms.map((f) => `  ${f}\n`).join('')}`);
}

/** A parseArgs refusal (unknown option, missing value) or a UsageError. */
export function isUsageMistake(err: unknown): err is Error {
  return err instanceof UsageError || (err as { code?: string } | null)?.code?.startsWith('ERR_PARSE_ARGS') === true;
}

/**
 * A failure no command handled, as one line instead of a stack (SITEGW_DEBUG adds the stack):
 * USAGE for a command-line mistake, FAILURE for anything else.
 */
export function printFailure(io: Output, command: string, err: unknown): number {
  printError(io, command, (err as { message?: string } | null)?.message ?? String(err));
  if (process.env.SITEGW_DEBUG) io.err(`${(err as Error).stack ?? ''}\n`);
  return isUsageMistake(err) ? EXIT.USAGE : EXIT.FAILURE;
}
