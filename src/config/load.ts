/**
 * site.yaml → SiteConfig, or the list of mistakes with their lines. Nothing here throws for a bad
 * file: the daemon and `sitegw check-config` print the errors and exit instead of crashing.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { isMap, isSeq, isScalar, LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import { formatPath, type ConfigError, type PathSegment } from './errors.js';
import { translate, type Finding } from './messages.js';
import { weakValidator } from './weak-validator.js';
import { siteSchema } from './schema.js';
import { canonicalZone, semanticFindings } from './semantic.js';
import { nodeAtOffset, offsetOf, positionOf } from './source-map.js';
import type { SiteConfig } from './types.js';
import { tlsFileErrors } from './tls-files.js';

export type { ConfigError } from './errors.js';

export type ConfigResult =
  | { ok: true; config: SiteConfig }
  /** `unreadable` is set when the file itself could not be read (missing, no permission, a folder) */
  | { ok: false; errors: ConfigError[]; unreadable?: boolean };

const siteValidator = weakValidator(() => {
  // discriminator: a connection's `type` picks the branch, so defaults apply and errors name that branch's keys
  const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: true, discriminator: true });
  // `hint` carries the advice for installers next to each rule; it does not validate anything
  ajv.addKeyword({ keyword: 'hint', schemaType: 'string' });
  return ajv.compile(siteSchema);
});

/** YAML parser codes → what an installer should look at. */
const SYNTAX_ADVICE: Record<string, { message: string; hint: string }> = {
  TAB_AS_INDENT: {
    message: 'a tab is used for indentation',
    hint: 'indent with spaces only (two per level); set the editor to insert spaces for tabs',
  },
  BAD_INDENT: {
    message: 'this line does not line up with the keys of its block',
    hint: 'keys of one block start in the same column; nested keys go two spaces further in',
  },
  MULTILINE_IMPLICIT_KEY: {
    message: "this line is not a 'key: value' pair, or the line after it is indented wrongly",
    hint: "write 'key: value' with a space after the colon, and start the keys of one block in the same column",
  },
  BLOCK_AS_IMPLICIT_KEY: {
    message: 'a key with a value on this line is followed by a line indented deeper',
    hint: 'start the keys of one block in the same column; a key that holds nested keys has nothing after its colon',
  },
  MULTIPLE_DOCS: {
    message: "the file holds more than one YAML document ('---')",
    hint: "keep one document: remove the second '---' and what belongs to another file",
  },
};

/** Parser codes whose errors do not follow from an earlier one, so each is worth reporting. */
const INDEPENDENT = new Set(['DUPLICATE_KEY', 'TAB_AS_INDENT']);
const UNCLOSED = {
  message: 'a quote or bracket opened here is not closed',
  hint: 'close every quote, [ and { on the line where it opens',
};

/** Keys a broken line produced ('Home timezone') are not paths an installer wrote; cut them off. */
function plausible(segments: PathSegment[]): PathSegment[] {
  const bad = segments.findIndex((s) => typeof s === 'string' && !/^[A-Za-z0-9_-]+$/.test(s));
  return bad < 0 ? segments : segments.slice(0, bad);
}

function syntaxErrors(doc: Document, lineCounter: LineCounter): ConfigError[] {
  const errors: ConfigError[] = [];
  const seenLines = new Set<number>();
  (doc.errors as YAMLError[]).forEach((e, i) => {
    // after the first real slip the parser is out of step and later complaints are mostly echoes
    if (i > 0 && !INDEPENDENT.has(e.code)) return;
    let offset = e.pos[0];
    let segments = plausible(nodeAtOffset(doc, offset).segments);
    let advice = SYNTAX_ADVICE[e.code] ?? {
      message: `YAML syntax error: ${e.message.split('\n')[0]}`,
      hint: "check the indentation and that each line is 'key: value' or '- item'",
    };
    const unclosed = e.code === 'MISSING_CHAR' || (e.code === 'BAD_INDENT' && /flow|end with/i.test(e.message));
    if (unclosed) {
      // the parser notices at the end of the value; the installer needs where it was opened
      const { opener } = nodeAtOffset(doc, Math.max(0, offset - 1));
      if (opener) {
        offset = opener.start;
        segments = plausible(opener.segments);
      }
      advice = UNCLOSED;
    }
    const { line, col } = lineCounter.linePos(offset);
    if (seenLines.has(line)) return;
    seenLines.add(line);
    if (e.code === 'DUPLICATE_KEY') {
      const key = segments[segments.length - 1];
      const first = offsetOf(doc, segments);
      const firstLine = first === undefined ? undefined : lineCounter.linePos(first).line;
      advice = {
        message: `key '${String(key ?? '')}' appears twice in the same block`,
        hint: firstLine !== undefined && firstLine !== line ? `keep one of the two; the other is on line ${firstLine}` : 'keep one of the two',
      };
    }
    errors.push({ path: formatPath(segments), line, column: col, ...advice });
  });
  return errors;
}

function shapeError(doc: Document, lineCounter: LineCounter, sourceName: string): ConfigError | undefined {
  const contents = doc.contents;
  const expected = 'site.yaml starts with top-level keys such as site: and devices: (see examples/site.example.yaml)';
  if (contents === null || (isScalar(contents) && (contents.value === null || contents.value === ''))) {
    return { path: '', line: 1, column: 1, message: `${sourceName} is empty (no settings, only blanks or comments)`, hint: expected };
  }
  if (isMap(contents)) return undefined;
  const at = contents.range ? lineCounter.linePos(contents.range[0]) : { line: 1, col: 1 };
  const found = isSeq(contents) ? "a list ('- ...')" : isScalar(contents) ? `the value '${String(contents.value)}'` : 'something else';
  return { path: '', line: at.line, column: at.col, message: `the top level must be a mapping of keys, found ${found}`, hint: expected };
}

function place(f: Finding, doc: Document, lineCounter: LineCounter): ConfigError {
  const pos = positionOf(doc, lineCounter, f.anchor);
  const error: ConfigError = { path: formatPath(f.segments), message: f.message };
  if (pos) {
    error.line = pos.line;
    error.column = pos.column;
  }
  if (f.hint) error.hint = f.hint;
  return error;
}

function byPosition(a: ConfigError, b: ConfigError): number {
  return (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0);
}

/** Values the rest of the daemon should not have to work out again. */
function finish(data: SiteConfig, baseDir: string): SiteConfig {
  data.dataDir = resolve(baseDir, data.dataDir);
  if (data.http.tls.cert) data.http.tls.cert = resolve(baseDir, data.http.tls.cert);
  if (data.http.tls.key) data.http.tls.key = resolve(baseDir, data.http.tls.key);
  data.site.timezone = canonicalZone(data.site.timezone);
  if (data.uplink) {
    const u = data.uplink;
    u.clientId = u.clientId.replaceAll('{siteId}', data.site.id);
    u.topicPrefix = u.topicPrefix.replaceAll('{siteId}', data.site.id);
    for (const k of ['ca', 'cert', 'key'] as const) if (u.tls[k]) u.tls[k] = resolve(baseDir, u.tls[k]);
  }
  if (data.homeassistant) {
    const h = data.homeassistant;
    h.clientId = h.clientId.replaceAll('{siteId}', data.site.id);
    h.stateTopicPrefix = h.stateTopicPrefix.replaceAll('{siteId}', data.site.id);
    for (const k of ['ca', 'cert', 'key'] as const) if (h.tls[k]) h.tls[k] = resolve(baseDir, h.tls[k]);
  }
  const firstInverter = data.devices.find((d) => d.role === 'inverter');
  for (const d of data.devices) {
    if (d.role === 'battery' && d.inverter === undefined && firstInverter) d.inverter = firstInverter.id;
  }
  return data;
}

/**
 * Validates site.yaml text. `sourceName` names the file in messages that are about the whole file;
 * `baseDir` is where a relative dataDir is taken from (the config file's folder; default: cwd).
 */
export function parseConfig(text: string, sourceName = 'site.yaml', baseDir: string = process.cwd()): ConfigResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) return { ok: false, errors: syntaxErrors(doc, lineCounter) };
  const shape = shapeError(doc, lineCounter, sourceName);
  if (shape) return { ok: false, errors: [shape] };

  let data: unknown;
  try {
    // the alias cap stops a "billion laughs" file from exhausting the Pi's memory
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, errors: [{ path: '', line: 1, column: 1, message: `cannot read the file: ${(e as Error).message}`, hint: 'write plain values instead of many nested YAML aliases (*name)' }] };
  }

  const validate = siteValidator();
  const valid = validate(data);
  const findings = [...((validate.errors ?? []) as ErrorObject[]).map((e) => translate(e, data)), ...semanticFindings(data)];
  const errors: ConfigError[] = [];
  const seen = new Set<string>();
  for (const f of findings) {
    const error = place(f, doc, lineCounter);
    // one wrong value can break several keywords (type and enum); the first says what matters
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    errors.push(error);
  }
  if (!valid || errors.length > 0) return { ok: false, errors: errors.sort(byPosition) };
  return { ok: true, config: finish(data as SiteConfig, baseDir) };
}

function readFailure(file: string, e: unknown): ConfigError {
  const code = (e as NodeJS.ErrnoException).code;
  const where = resolve(file);
  const message =
    code === 'ENOENT'
      ? `file not found (looked at ${where})`
      : code === 'EACCES' || code === 'EPERM'
        ? `no permission to read the file (${where})`
        : code === 'EISDIR'
          ? `is a folder, not a file (${where})`
          : `cannot read the file (${where}): ${(e as Error).message}`;
  const hint =
    code === 'ENOENT'
      ? 'check the path; examples/site.example.yaml is a starting point'
      : code === 'EACCES' || code === 'EPERM'
        ? 'make the file readable by the user sitegw runs as (chmod 644 or chown)'
        : code === 'EISDIR'
          ? 'give the path of the site.yaml file inside it'
          : undefined;
  return hint ? { path: '', message, hint } : { path: '', message };
}

/** Reads and validates a site.yaml file; a relative dataDir is taken from the file's folder. */
export async function loadConfig(file: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    return { ok: false, errors: [readFailure(file, e)], unreadable: true };
  }
  const result = parseConfig(text, file, dirname(resolve(file)));
  // the certificate files are read here, for `run` and `check-config` alike: parseConfig looks at the text alone
  if (!result.ok) return result;
  const { http, uplink, homeassistant } = result.config;
  const errors = [
    ...tlsFileErrors('http', http.tls, text),
    ...(uplink ? tlsFileErrors('uplink', uplink.tls, text) : []),
    ...(homeassistant ? tlsFileErrors('homeassistant', homeassistant.tls, text) : []),
  ];
  return errors.length > 0 ? { ok: false, errors } : result;
}
