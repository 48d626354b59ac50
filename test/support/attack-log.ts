/**
 * The attack suite's log scan (issue 26 finding 3: a live token was written to the log). Every
 * daemon an attack test starts logs at debug into `attackLog()` (or, for a child process, to its
 * stdout), and each file checks at its end that no line holds a token, secret, code or ticket
 * of the gateway's own formats, whatever the attacks put in URLs, headers and bodies.
 */
import { type Logger, pino } from 'pino';
import { afterAll, expect } from 'vitest';
import { SECRET_PREFIX } from '../../src/auth/clients.js';
import { ACCESS_PREFIX, CODE_PREFIX, REFRESH_PREFIX } from '../../src/auth/context.js';

/** the prefixes of everything secret the gateway hands out (the consent ticket's and the session's too) */
const PREFIXES = [ACCESS_PREFIX, REFRESH_PREFIX, CODE_PREFIX, SECRET_PREFIX, 'sgw_ct_', 'sgw_ss_'];

/** Fails with the lines that contain a secret's prefix (in any case or URL-encoded form). */
export function expectNoSecrets(lines: readonly string[]): void {
  const found = lines.filter((l) => {
    const text = decodeURIComponentSafe(l).toLowerCase();
    return PREFIXES.some((p) => text.includes(p));
  });
  expect(found, 'log lines holding a token, secret or code').toEqual([]);
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * A debug-level logger for a test file's daemons; the file's last afterAll scans all it wrote.
 * Call once per file, at its top level.
 */
export function attackLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(s) });
  afterAll(() => expectNoSecrets(lines));
  return { log, lines };
}
