/**
 * A minimal valid site.yaml as numbered lines, so each test can break one line and assert the
 * exact line number the error names.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { ConfigResult } from '../../src/config/load.js';
import { itemAt } from '../../src/core/item-at.js';
import type { ConfigError } from '../../src/yaml/errors.js';

export const MINIMAL: readonly string[] = [
  /* 1 */ 'site:',
  /* 2 */ '  id: home',
  /* 3 */ '  name: Home',
  /* 4 */ '  timezone: Europe/Berlin',
  /* 5 */ '  currency: EUR',
  /* 6 */ '  location:',
  /* 7 */ '    latitude: 52.5',
  /* 8 */ '    longitude: 13.4',
  /* 9 */ 'devices:',
  /* 10 */ '  - id: inv',
  /* 11 */ '    role: inverter',
  /* 12 */ '    profile: sunspec',
  /* 13 */ '    connection:',
  /* 14 */ '      type: tcp',
  /* 15 */ '      host: 192.168.1.50',
];

/** MINIMAL with 1-based `line` replaced (or removed when `text` is null). */
export function withLine(line: number, text: string | null, lines: readonly string[] = MINIMAL): string[] {
  const out = [...lines];
  if (text === null) out.splice(line - 1, 1);
  else out[line - 1] = text;
  return out;
}

export function withAppended(extra: readonly string[], lines: readonly string[] = MINIMAL): string[] {
  return [...lines, ...extra];
}

export const text = (lines: readonly string[]): string => `${lines.join('\n')}\n`;

export function errorsOf(result: ConfigResult): ConfigError[] {
  if (result.ok) throw new Error(`expected errors, config was accepted: ${JSON.stringify(result.config)}`);
  return result.errors;
}

/** The only error of a result, checked against where it must point and what it must say. */
export function expectSingleError(
  result: ConfigResult,
  want: { path: string; line: number; column?: number; message: RegExp; hint: RegExp },
): ConfigError {
  const errors = errorsOf(result);
  expect(errors, JSON.stringify(errors, null, 2)).toHaveLength(1);
  const e = itemAt(errors, 0);
  expect(e.path).toBe(want.path);
  expect(e.line).toBe(want.line);
  if (want.column !== undefined) expect(e.column).toBe(want.column);
  expect(e.message).toMatch(want.message);
  expect(e.hint ?? '').toMatch(want.hint);
  return e;
}

/**
 * examples/site.example.yaml for a site.yaml written to another folder: its TLS paths name the
 * sample files beside the example (relative, and loading a site.yaml reads them:
 * src/config/tls-files.ts), so they are made absolute.
 */
export function exampleElsewhere(): string {
  const example = readFileSync(new URL('../../examples/site.example.yaml', import.meta.url), 'utf8');
  const samples = fileURLToPath(new URL('../../examples/samples/', import.meta.url));
  const out = example.replace(/^( +(?:ca|cert|key|certificate): )samples\//gm, `$1${samples}`);
  if (out === example) throw new Error('examples/site.example.yaml: no TLS path into samples/ was found');
  return out;
}
