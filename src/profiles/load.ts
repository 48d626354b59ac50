/**
 * device-profiles/*.yaml → DeviceProfiles, or every mistake with its file, line and hint. Reads
 * synchronously: it runs once at start (and in check-config), over a handful of small files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseDocument, type YAMLError } from 'yaml';
import { formatPath, type ConfigError } from '../config/errors.js';
import { formatConfigError } from '../config/format.js';
import { translate, type Finding } from '../config/messages.js';
import { positionOf } from '../config/source-map.js';
import { weakValidator } from '../config/weak-validator.js';
import { compileProfile } from './compile.js';
import type { DeviceProfile } from './compiled.js';
import type { ProfileFile } from './profile-types.js';
import { profileSchema } from './schema.js';

export type ProfileResult = { ok: true; profile: DeviceProfile } | { ok: false; errors: ConfigError[] };

const profileValidator = weakValidator(() => {
  // the pattern on sentinels applies to their string form only; union types are intended there.
  // inlineRefs off: the schema's $defs become functions called from each use, not copies of code
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true, inlineRefs: false });
  ajv.addKeyword({ keyword: 'hint', schemaType: 'string' });
  return ajv.compile(profileSchema);
});

/** Validates one profile's text; `name` is its file name without .yaml, `file` its path for messages. */
export function parseProfile(text: string, name: string, file: string): ProfileResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // the first slip is the one to fix; later parser complaints mostly echo it
    const e = doc.errors[0] as YAMLError;
    const { line, col } = lineCounter.linePos(e.pos[0]);
    return {
      ok: false,
      errors: [{ path: '', line, column: col, message: `YAML syntax error: ${e.message.split('\n')[0]}`, hint: "check the indentation and that each line is 'key: value' or '- item'" }],
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, errors: [{ path: '', line: 1, column: 1, message: `cannot read the file: ${(e as Error).message}`, hint: 'write plain values instead of nested YAML aliases' }] };
  }
  const place = (f: Finding): ConfigError => {
    const pos = positionOf(doc, lineCounter, f.anchor);
    return { path: formatPath(f.segments), message: f.message, ...(pos ? { line: pos.line, column: pos.column } : {}), ...(f.hint ? { hint: f.hint } : {}) };
  };
  const validate = profileValidator();
  if (!validate(data)) {
    const seen = new Set<string>();
    const errors: ConfigError[] = [];
    for (const e of (validate.errors ?? []) as ErrorObject[]) {
      const err = place(translate(e, data));
      // one wrong value can break several keywords; the first says what matters
      if (seen.has(err.path)) continue;
      seen.add(err.path);
      errors.push(err);
    }
    return { ok: false, errors: errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)) };
  }
  const { profile, findings } = compileProfile(data as unknown as ProfileFile, name, file);
  if (!profile) return { ok: false, errors: findings.map(place) };
  return { ok: true, profile };
}

export interface ProfileDir {
  dir: string;
  profiles: Map<string, DeviceProfile>;
  /** profile name → its mistakes */
  broken: Map<string, ConfigError[]>;
}

/** Every *.yaml of a folder; a file that cannot be read counts as broken, a missing folder as empty. */
export function readProfileDir(dir: string): ProfileDir {
  const out: ProfileDir = { dir, profiles: new Map(), broken: new Map() };
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw e;
  }
  for (const f of files) {
    const name = basename(f, '.yaml');
    const path = join(dir, f);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      out.broken.set(name, [{ path: '', message: `cannot read the file: ${(e as Error).message}` }]);
      continue;
    }
    const r = parseProfile(text, name, path);
    if (r.ok) out.profiles.set(name, r.profile);
    else out.broken.set(name, r.errors);
  }
  return out;
}

/** Compiler-style lines (`file:line:col path: message — hint`) for every broken profile. */
export function formatProfileErrors(d: ProfileDir): string[] {
  return [...d.broken].flatMap(([name, errors]) => errors.map((e) => formatConfigError(e, join(d.dir, `${name}.yaml`))));
}
