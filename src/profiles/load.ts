/**
 * device-profiles/*.yaml → DeviceProfiles, or every mistake with its file, line and hint. Reads
 * synchronously: it runs once at start (and in check-config), over a handful of small files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ConfigError } from '../yaml/errors.js';
import { formatConfigError } from '../yaml/format.js';
import type { Finding } from '../yaml/messages.js';
import { dataOf, firstSyntaxError, parseYaml, place, placeFirstPerPath } from '../yaml/parse.js';
import { schemaFindings, yamlValidator } from '../yaml/validator.js';
import { compileProfile } from './compile.js';
import type { DeviceProfile } from './compiled.js';
import { profileSchema } from './schema.js';

export type ProfileResult = { ok: true; profile: DeviceProfile } | { ok: false; errors: ConfigError[] };

// the pattern on sentinels applies to their string form only; union types are intended there.
// inlineRefs off: the schema's $defs become functions called from each use, not copies of code
const profileValidator = yamlValidator(profileSchema, { allowUnionTypes: true, inlineRefs: false });

/** Validates one profile's text; `name` is its file name without .yaml, `file` its path for messages. */
export function parseProfile(text: string, name: string, file: string): ProfileResult {
  const parsed = parseYaml(text);
  const syntax = firstSyntaxError(parsed);
  // the first slip is the one to fix; later parser complaints mostly echo it
  if (syntax) return { ok: false, errors: [syntax] };
  const read = dataOf(parsed.doc, 'write plain values instead of nested YAML aliases');
  if ('error' in read) return { ok: false, errors: [read.error] };
  const { data } = read;
  const validate = profileValidator();
  if (!validate(data)) {
    const findings = schemaFindings(validate, data);
    const errors = placeFirstPerPath(findings, parsed);
    return { ok: false, errors: errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)) };
  }
  const { profile, findings } = compileProfile(data, name, file);
  if (!profile) return { ok: false, errors: findings.map((f: Finding) => place(f, parsed)) };
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
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
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
  return [...d.broken].flatMap(([name, errors]) =>
    errors.map((e) => formatConfigError(e, join(d.dir, `${name}.yaml`))),
  );
}
