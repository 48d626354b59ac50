/**
 * A change to site.yaml proposed as data (the browser's setup page, docs/install.md "Setup in
 * the browser"): each change sets or removes the value at a path. The edited text is written
 * beside the file and checked by loadConfig, the very load `sitegw check-config` and `sitegw run`
 * do, so no rule is repeated here; a refused change leaves site.yaml as it was. An accepted one
 * keeps the file's comments (the yaml package's Document API), keeps the old file as a
 * timestamped backup beside it (the newest BACKUPS_KEPT), and replaces the file by a rename, so
 * a power cut leaves the old file or the new one.
 */
import {
  closeSync,
  copyFileSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { type Document, isMap, isScalar, isSeq, stringify } from 'yaml';
import type { ConfigError } from '../config/load.js';
import type { SiteConfig } from '../config/types.js';
import { loadConfig } from '../profiles/site-config.js';
import { formatPath } from '../yaml/errors.js';
import { parseYaml } from '../yaml/parse.js';

/**
 * The sections an owner may change from the page. Left out on purpose: `http` (a wrong port or
 * certificate would lock the page out of its own gateway), `dataDir`, `auth` and `gridOperator`
 * (the enrolment's certificate files), which stay a matter for the terminal.
 */
export const EDITABLE_SECTIONS = [
  'site',
  'tariff',
  'uplink',
  'homeassistant',
  'control',
  'limits',
  'devices',
  'poll',
] as const;

export const BACKUPS_KEPT = 5;
const MAX_CHANGES = 50;
const MAX_DEPTH = 8;
const KEY = /^[A-Za-z0-9_-]{1,64}$/;

export interface ConfigChange {
  path: (string | number)[];
  /** the new value (plain JSON data); left out or null removes the key */
  value?: unknown;
}

export type EditRefusal =
  /** the edited file fails a check of check-config; `errors` has each with its line and hint */
  | 'CONFIG_REFUSED'
  /** a change names a path outside EDITABLE_SECTIONS or malformed */
  | 'CONFIG_PATH_REFUSED'
  /** site.yaml as it is now cannot be read or parsed, so no change can be placed in it */
  | 'CONFIG_UNREADABLE'
  /** the folder of site.yaml cannot be written by the gateway's user */
  | 'CONFIG_NOT_WRITABLE'
  /** the changes leave the file as it is (a value removed that it does not have): nothing to apply */
  | 'CONFIG_UNCHANGED';

export type EditResult =
  /** `backup`: the old file's copy ('' when none was asked for) */
  | { ok: true; config: SiteConfig; backup: string; text: string }
  | { ok: false; code: EditRefusal; message: string; errors: ConfigError[] };

function refuse(code: EditRefusal, message: string, errors: ConfigError[] = []): EditResult {
  return { ok: false, code, message, errors };
}

/** The first thing wrong with the changes' shape, or undefined. */
function pathProblem(changes: readonly ConfigChange[]): string | undefined {
  if (changes.length === 0) return 'no change was given';
  if (changes.length > MAX_CHANGES) return `at most ${MAX_CHANGES} changes at once, not ${changes.length}`;
  for (const c of changes) {
    const p = c.path;
    if (!Array.isArray(p) || p.length === 0 || p.length > MAX_DEPTH)
      return `a path is a list of 1 to ${MAX_DEPTH} keys and list positions`;
    if (!(EDITABLE_SECTIONS as readonly unknown[]).includes(p[0]))
      return `'${String(p[0]).slice(0, 40)}' cannot be changed here: the page changes ${EDITABLE_SECTIONS.join(', ')}`;
    for (const s of p.slice(1)) {
      const ok =
        typeof s === 'number' ? Number.isInteger(s) && s >= 0 && s < 1000 : typeof s === 'string' && KEY.test(s);
      if (!ok) return `'${String(s).slice(0, 40)}' is not a key or a list position`;
    }
  }
  return undefined;
}

/** The scalar's text as YAML writes it, when it fits on one line. */
function scalarText(value: unknown): string | undefined {
  const t = stringify(value, { lineWidth: 0 }).replace(/\n$/, '');
  return t.includes('\n') ? undefined : t;
}

/**
 * Changes that only replace existing scalars, made on the text itself: every other byte of the
 * file stays (the yaml package would re-space flow collections and re-indent comments).
 */
function inPlace(text: string, doc: Document, changes: readonly ConfigChange[]): string | undefined {
  const edits: { from: number; to: number; text: string }[] = [];
  for (const c of changes) {
    if (c.value === undefined || c.value === null || typeof c.value === 'object') return undefined;
    const node = doc.getIn(c.path, true);
    if (!isScalar(node) || !node.range) return undefined;
    const written = scalarText(c.value);
    if (written === undefined) return undefined;
    edits.push({ from: node.range[0], to: node.range[1], text: written });
  }
  edits.sort((a, b) => b.from - a.from);
  let out = text;
  for (const e of edits) out = out.slice(0, e.from) + e.text + out.slice(e.to);
  return out;
}

/** The file's text with the changes made, comments and layout kept; or why they cannot be placed. */
export function editedText(text: string, changes: readonly ConfigChange[]): { text: string } | { error: string } {
  const { doc } = parseYaml(text);
  if (doc.errors.length > 0 || !isMap(doc.contents)) return { error: 'site.yaml does not parse now' };
  const direct = inPlace(text, doc, changes);
  if (direct !== undefined) return { text: direct };
  for (const c of changes) {
    // a list position past the end is not filled with nulls: it is where an item is appended
    const parent = c.path.length > 1 ? doc.getIn(c.path.slice(0, -1), true) : doc.contents;
    const last = c.path[c.path.length - 1];
    if (typeof last === 'number' && !(isSeq(parent) && last <= parent.items.length))
      return { error: `${formatPath(c.path)} is past the end of its list or not in a list` };
    const node = doc.getIn(c.path, true);
    try {
      if (c.value === undefined || c.value === null) doc.deleteIn(c.path);
      // a scalar changed in place keeps its comment and quoting
      else if (isScalar(node) && typeof c.value !== 'object') node.value = c.value;
      else doc.setIn(c.path, doc.createNode(c.value));
    } catch {
      // the yaml package throws for a path through a plain value or a list named by a key
      return { error: `${formatPath(c.path)} runs through a value that is not a mapping or a list of that kind` };
    }
  }
  // as written: no folding of long values; flow collections spaced as most of the file's are
  const padded = (text.match(/:[ \t]+[[{] /g) ?? []).length;
  const tight = (text.match(/:[ \t]+[[{][^\s\]}]/g) ?? []).length;
  return { text: doc.toString({ lineWidth: 0, flowCollectionPadding: padded > tight }) };
}

function writeSynced(file: string, text: string, was: { mode: number; uid: number; gid: number }): void {
  const fd = openSync(file, 'wx', was.mode);
  try {
    // the old file's mode exactly, whatever the process's umask (the unit's is 0077)
    fchmodSync(fd, was.mode);
    // and its group (root's `sitegw setup` made a root:root file the service could not read);
    // its owner too where the process may give it (root), else the group alone (the service is
    // a member of the package's group)
    if (process.getuid?.() === 0) fchownSync(fd, was.uid, was.gid);
    else if (process.getgroups?.().includes(was.gid)) fchownSync(fd, -1, was.gid);
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `site.yaml.bak.20261201T234500Z`: sorts by age, and the package's purge removes `site.yaml.bak*`. */
function backupName(file: string, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${file}.bak.${stamp}`;
}

/** Removes all but the newest `keep` timestamped backups of `file`. */
function pruneBackups(file: string, keep: number): void {
  const prefix = `${basename(file)}.bak.`;
  const dir = dirname(file);
  const backups = readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && /^\d{8}T\d{6}Z(-\d+)?$/.test(n.slice(prefix.length)))
    .sort();
  for (const n of backups.slice(0, Math.max(0, backups.length - keep))) rmSync(join(dir, n), { force: true });
}

/**
 * Makes `changes` to the site.yaml at `file` if the result passes every check of check-config;
 * otherwise changes nothing. Not for two writers at once: the daemon's HTTP route serialises.
 */
export async function editSiteYaml(
  file: string,
  changes: readonly ConfigChange[],
  opts: { now?: () => Date; keep?: number; backup?: boolean } = {},
): Promise<EditResult> {
  const problem = pathProblem(changes);
  if (problem) return refuse('CONFIG_PATH_REFUSED', problem);
  const path = resolve(file);
  let text: string;
  let was: { mode: number; uid: number; gid: number };
  try {
    text = await readFile(path, 'utf8');
    const st = statSync(path);
    was = { mode: st.mode & 0o777, uid: st.uid, gid: st.gid };
  } catch (e) {
    return refuse('CONFIG_UNREADABLE', `cannot read ${path}: ${(e as Error).message}`);
  }
  const edited = editedText(text, changes);
  if ('error' in edited)
    return edited.error.includes('does not parse')
      ? refuse('CONFIG_UNREADABLE', `${path} does not parse now: run sitegw check-config ${path}`)
      : refuse('CONFIG_PATH_REFUSED', edited.error);
  if (edited.text === text) return refuse('CONFIG_UNCHANGED', 'the changes leave site.yaml as it is: nothing to apply');
  return writeChecked(path, edited.text, was, opts);
}

/**
 * Replaces the site.yaml at `file` by `text` (the first-run page's new site, src/setup/site-yaml.ts)
 * if it passes every check of check-config; the old file (the package's placeholder) is kept as a
 * backup like any edit's.
 */
export async function replaceSiteYaml(
  file: string,
  text: string,
  opts: { now?: () => Date; keep?: number; backup?: boolean } = {},
): Promise<EditResult> {
  const path = resolve(file);
  let was: { mode: number; uid: number; gid: number };
  try {
    const st = statSync(path);
    was = { mode: st.mode & 0o777, uid: st.uid, gid: st.gid };
  } catch (e) {
    return refuse('CONFIG_UNREADABLE', `cannot read ${path}: ${(e as Error).message}`);
  }
  return writeChecked(path, text, was, opts);
}

/** `text` written beside `path`, checked as check-config checks, then put in its place by a rename. */
async function writeChecked(
  path: string,
  text: string,
  was: { mode: number; uid: number; gid: number },
  opts: { now?: () => Date; keep?: number; backup?: boolean },
): Promise<EditResult> {
  // beside the file, so the rename below stays on one file system and relative paths read the same
  const tmp = join(dirname(path), `.${basename(path)}.edit-${process.pid}`);
  try {
    rmSync(tmp, { force: true });
    writeSynced(tmp, text, was);
  } catch (e) {
    return refuse(
      'CONFIG_NOT_WRITABLE',
      `cannot write beside ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): the folder must be writable by the user sitegw runs as (the Debian package makes /etc/sitegw writable by its group; where an administrator took that back, change the file with sitegw setup or an editor, docs/install.md "Setup in the browser")`,
    );
  }
  try {
    const checked = await loadConfig(tmp);
    if (!checked.ok) {
      const errors = checked.errors.map((e) => ({ ...e, message: e.message.replaceAll(tmp, path) }));
      const n = errors.length;
      return refuse(
        'CONFIG_REFUSED',
        `the change fails ${n} check${n === 1 ? '' : 's'} of sitegw check-config`,
        errors,
      );
    }
    let backup = '';
    if (opts.backup !== false) {
      const now = (opts.now ?? (() => new Date()))();
      backup = backupName(path, now);
      // two changes within one second keep both old files
      for (let i = 1; existsQuiet(backup); i++) backup = `${backupName(path, now)}-${i}`;
      copyFileSync(path, backup);
    }
    renameSync(tmp, path);
    syncFolder(dirname(path));
    pruneBackups(path, opts.keep ?? BACKUPS_KEPT);
    return { ok: true, config: checked.config, backup, text };
  } finally {
    rmSync(tmp, { force: true });
  }
}

function existsQuiet(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

/** The rename is durable once the folder's entry is on disk. */
function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
