/**
 * Questions with a default for `sitegw setup`, on node:readline (no dependency; it runs under the
 * unit's --lite-mode on Node 20 as on 24). Lines are queued as they arrive, so answers piped in
 * ahead of their question are not lost. With `--yes` every question takes its default unasked.
 */
import { createInterface, type Interface } from 'node:readline';
import { type Output, UsageError } from './output.js';
import { askHidden } from './owner.js';

/** Ctrl-C at a question, or the input ended before the questions did. */
export class Interrupted extends Error {}

/** An answer's check: undefined when fine, else what is wrong. */
export type Check = (answer: string) => string | undefined;

export interface Asker {
  /** the answer, or `fallback` for an empty line; asked again while `check` refuses it */
  ask(question: string, fallback: string, check?: Check): Promise<string>;
  /** a line without echo on a terminal ('' when skipped); closes the line reader first */
  secret(question: string): Promise<string>;
  close(): void;
}

/**
 * Every question answered by its default; a default the check refuses is a usage mistake. A
 * password given (from stdin) answers both password questions; without one it is left for later.
 */
export function defaultsAsker(password = ''): Asker {
  return {
    ask: async (question, fallback, check) => {
      const wrong = check?.(fallback);
      if (wrong !== undefined) throw new UsageError(`${question}: ${wrong}`);
      return fallback;
    },
    secret: async () => password,
    close: () => {},
  };
}

export function terminalAsker(io: Output): Asker {
  const input = process.stdin;
  let rl: Interface | undefined = createInterface({ input, output: process.stdout, terminal: input.isTTY === true });
  const lines: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let ended = false;
  rl.on('line', (line) => {
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w(line);
    } else lines.push(line);
  });
  const end = () => {
    ended = true;
    waiting?.(undefined);
  };
  rl.on('close', end);
  rl.on('SIGINT', () => {
    io.err('\n');
    rl?.close();
  });
  const nextLine = (): Promise<string | undefined> =>
    lines.length > 0
      ? Promise.resolve(lines.shift())
      : ended
        ? Promise.resolve(undefined)
        : new Promise((r) => (waiting = r));
  const close = () => {
    rl?.removeListener('close', end);
    rl?.close();
    rl = undefined;
  };

  return {
    async ask(question, fallback, check) {
      for (;;) {
        const prompt = `${question} [${fallback}]: `;
        // piped answers can outlast the input: once it ended, readline is closed, and Node 24's
        // prompt() on a closed interface throws (ERR_USE_AFTER_CLOSE); the queued lines still answer
        if (rl && !ended) {
          rl.setPrompt(prompt);
          rl.prompt();
        } else io.out(prompt);
        const line = await nextLine();
        if (line === undefined) throw new Interrupted('setup stopped: no answer (Ctrl-C or end of input)');
        const answer = line.trim() === '' ? fallback : line.trim();
        const wrong = check?.(answer);
        if (wrong === undefined) return answer;
        io.err(`  ${wrong}\n`);
      }
    },
    async secret(question) {
      if (!input.isTTY) {
        io.err(`${question}: `);
        const line = await nextLine();
        io.err('\n');
        return line ?? '';
      }
      close();
      return askHidden(io, `${question}: `);
    },
    close,
  };
}
