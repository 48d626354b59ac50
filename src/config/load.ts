/**
 * site.yaml → SiteConfig, or the list of mistakes with their lines. Nothing here throws for a bad
 * file: the daemon and `sitegw check-config` print the errors and exit instead of crashing.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type Document, isMap, isScalar, isSeq, type LineCounter } from 'yaml';
import { linkOf } from '../core/connection.js';
import type { ConfigError } from '../yaml/errors.js';
import { dataOf, parseYaml, place, placeFirstPerPath, syntaxErrors } from '../yaml/parse.js';
import { schemaFindings, yamlValidator } from '../yaml/validator.js';
import { siteSchema } from './schema.js';
import { canonicalZone, type DeviceChecks, semanticFindings } from './semantic.js';
import { tlsFileErrors } from './tls-files.js';
import type { SiteConfig } from './types.js';
import { migrate } from './version.js';

export type { ConfigError } from '../yaml/errors.js';
export type { DeviceChecks } from './semantic.js';

export type ConfigResult =
  | { ok: true; config: SiteConfig }
  /** `unreadable` is set when the file itself could not be read (missing, no permission, a folder) */
  | { ok: false; errors: ConfigError[]; unreadable?: boolean };

// discriminator: a connection's `type` picks the branch, so defaults apply and errors name that branch's keys
const siteValidator = yamlValidator(siteSchema, { useDefaults: true, discriminator: true });

function shapeError(doc: Document, lineCounter: LineCounter, sourceName: string): ConfigError | undefined {
  const contents = doc.contents;
  const expected = 'site.yaml starts with top-level keys such as site: and devices: (see examples/site.example.yaml)';
  if (contents === null || (isScalar(contents) && (contents.value === null || contents.value === ''))) {
    return {
      path: '',
      line: 1,
      column: 1,
      message: `${sourceName} is empty (no settings, only blanks or comments)`,
      hint: expected,
    };
  }
  if (isMap(contents)) return undefined;
  const at = contents.range ? lineCounter.linePos(contents.range[0]) : { line: 1, col: 1 };
  const found = isSeq(contents)
    ? "a list ('- ...')"
    : isScalar(contents)
      ? `the value '${String(contents.value)}'`
      : 'something else';
  return {
    path: '',
    line: at.line,
    column: at.col,
    message: `the top level must be a mapping of keys, found ${found}`,
    hint: expected,
  };
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
  if (data.gridOperator) {
    const g = data.gridOperator;
    for (const k of ['certificate', 'key', 'ca'] as const) if (g[k]) g[k] = resolve(baseDir, g[k]);
  }
  // A battery belongs to the inverter it is read through (a storage inverter's own battery, the
  // StorEdge block on the SolarEdge inverter's unit), else to an inverter on the same wire, else
  // to the first inverter; `inverter:` in site.yaml says otherwise (docs/configuration.md).
  const inverters = data.devices.filter((d) => d.role === 'inverter');
  for (const d of data.devices) {
    if (d.role !== 'battery' || d.inverter !== undefined || inverters.length === 0) continue;
    const link = linkOf(d.connection);
    const onLink = inverters.filter((i) => linkOf(i.connection) === link);
    d.inverter = (onLink.find((i) => i.connection.unitId === d.connection.unitId) ?? onLink[0] ?? inverters[0])!.id;
  }
  return data;
}

/**
 * Validates site.yaml text. `sourceName` names the file in messages that are about the whole file;
 * `baseDir` is where a relative dataDir is taken from (the config file's folder). `checks` are the
 * device rules config cannot know; parseConfig and loadConfig in src/profiles/site-config.ts give them.
 */
export function parseSiteYaml(text: string, sourceName: string, baseDir: string, checks: DeviceChecks): ConfigResult {
  const parsed = parseYaml(text);
  const { doc, lineCounter } = parsed;
  if (doc.errors.length > 0) return { ok: false, errors: syntaxErrors(parsed) };
  const shape = shapeError(doc, lineCounter, sourceName);
  if (shape) return { ok: false, errors: [shape] };

  const read = dataOf(doc, 'write plain values instead of many nested YAML aliases (*name)');
  if ('error' in read) return { ok: false, errors: [read.error] };
  const migrated = migrate(read.data);
  if (!migrated.ok) return { ok: false, errors: [place(migrated.finding, parsed)] };
  const { data } = migrated;

  const validate = siteValidator();
  const valid = validate(data);
  const findings = [...schemaFindings(validate, data), ...semanticFindings(data, checks)];
  const errors = placeFirstPerPath(findings, parsed);
  if (!valid || errors.length > 0) return { ok: false, errors: errors.sort(byPosition) };
  return { ok: true, config: finish(data, baseDir) };
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
export async function loadSiteYaml(file: string, checks: DeviceChecks): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    return { ok: false, errors: [readFailure(file, e)], unreadable: true };
  }
  const result = parseSiteYaml(text, file, dirname(resolve(file)), checks);
  // the certificate files are read here, for `run` and `check-config` alike: parseSiteYaml looks at the text alone
  if (!result.ok) return result;
  const { http, uplink, homeassistant, gridOperator: g } = result.config;
  const errors = [
    ...tlsFileErrors('http', http.tls, text),
    ...(uplink ? tlsFileErrors('uplink', uplink.tls, text) : []),
    ...(homeassistant ? tlsFileErrors('homeassistant', homeassistant.tls, text) : []),
    ...(g
      ? tlsFileErrors('gridOperator', { cert: g.certificate, key: g.key, ca: g.ca }, text, (k) => [
          'gridOperator',
          k === 'cert' ? 'certificate' : k,
        ])
      : []),
  ];
  return errors.length > 0 ? { ok: false, errors } : result;
}
