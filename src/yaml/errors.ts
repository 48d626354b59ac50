/**
 * A mistake in site.yaml, told the way an installer can act on it: where (path and line), what is
 * wrong, and what would be right. Every failure of config loading ends up as one of these, so the
 * daemon and `sitegw check-config` never show a stack trace for a bad file.
 */
export interface ConfigError {
  /** dotted path inside the file, e.g. `devices[1].connection.port`; '' for the file as a whole */
  path: string;
  /** 1-based line in the file, when the mistake can be placed */
  line?: number;
  /** 1-based column in the file */
  column?: number;
  /** what is wrong */
  message: string;
  /** what would be right */
  hint?: string;
}

/** A path segment: a mapping key or a list index. */
export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Renders segments the way installers read them: `devices[1].connection.port`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (PLAIN_KEY.test(s)) out += out === '' ? s : `.${s}`;
    // keys with spaces or dots would read ambiguously in dotted form
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
