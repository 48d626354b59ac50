/**
 * Config errors as compiler-style lines (`file:line:col path: message — hint`), the form editors
 * and terminals already turn into clickable locations.
 */
import type { ConfigError } from './errors.js';

export function formatConfigError(error: ConfigError, fileName: string): string {
  const where = error.line === undefined ? fileName : `${fileName}:${error.line}:${error.column ?? 1}`;
  const what = error.path === '' ? error.message : `${error.path}: ${error.message}`;
  return `${where} ${what}${error.hint ? ` — ${error.hint}` : ''}`;
}

/** One line per error, in the order given. */
export function formatConfigErrors(errors: readonly ConfigError[], fileName: string): string[] {
  return errors.map((e) => formatConfigError(e, fileName));
}
