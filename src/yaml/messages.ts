/**
 * Turns ajv's validation errors into installer language: what is wrong (with the value that was
 * found) and what would be right (taken from the schema's `hint`, or a "did you mean" when the
 * value looks like a typo of an allowed one).
 */
import type { ErrorObject } from 'ajv';
import type { PathSegment } from './errors.js';
import { ID_HINT, ID_PATTERN, type SchemaNode } from './schema.js';
import { closest } from './suggest.js';

export interface Finding {
  /** where the mistake is, as written in the file */
  segments: PathSegment[];
  /** the written node to point at; differs from `segments` when a key is missing */
  anchor: PathSegment[];
  message: string;
  hint?: string;
}

/** A value as it would read in the file, short enough for one line of output. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (typeof value === 'string') {
    if (value === '') return 'an empty text';
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return `'${shown}'`;
  }
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
  object: 'a mapping of keys',
  array: 'a list',
};

/** JSON pointer → path segments, reading list indices as numbers only where the data is a list. */
export function segmentsOf(pointer: string, data: unknown): PathSegment[] {
  if (pointer === '') return [];
  const out: PathSegment[] = [];
  let node: unknown = data;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      const index = Number(key);
      out.push(index);
      node = node[index];
    } else {
      out.push(key);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return out;
}

/** The text choices of an enum: a number (a profile's `sign: -1`) is no spelling to suggest. */
function words(values: readonly (string | number)[]): string[] {
  return values.filter((v): v is string => typeof v === 'string');
}

function schemaOf(err: ErrorObject): SchemaNode {
  return (err.parentSchema ?? {}) as SchemaNode;
}

/** A valid id an installer probably meant, e.g. 'Inverter 1' → 'inverter-1'. */
function idFrom(value: string): string {
  const slug = value
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return slug === '' ? 'inverter-1' : slug;
}

function typeFinding(err: ErrorObject, segments: PathSegment[]): Finding {
  const schema = schemaOf(err);
  const expected = String((err.params as { type?: unknown }).type ?? schema.type);
  const data: unknown = err.data;
  const want = TYPE_WORDS[expected] ?? expected;
  const finding: Finding = {
    segments,
    anchor: segments,
    message: `must be ${want}, got ${describeValue(data)}`,
    hint: schema.hint,
  };
  if (schema.enum && data !== null && data !== undefined) {
    // the choice is what matters, not that YAML read 5 as a number
    finding.message = `must be one of: ${schema.enum.join(', ')}, got ${describeValue(data)}`;
  } else if (data === null || data === undefined) {
    if (expected === 'object') {
      finding.message = 'is empty';
      finding.hint =
        schema.default !== undefined
          ? 'indent its keys under it, or remove the line to use the defaults'
          : `indent its keys under it — ${schema.hint ?? ''}`.replace(/ — $/, '');
    } else {
      finding.message = `has no value (must be ${want})`;
    }
  } else if ((expected === 'integer' || expected === 'number') && typeof data === 'string') {
    const trimmed = data.trim();
    if (trimmed !== '' && Number.isFinite(Number(trimmed))) finding.hint = `write ${trimmed} without quotes`;
  } else if (expected === 'string' && (typeof data === 'number' || typeof data === 'boolean')) {
    // YAML reads 123, 1e3, yes and 0x10 as non-text; quoting keeps them as written
    finding.hint = `put the value in quotes, e.g. '${String(data)}'`;
  } else if (expected === 'integer' && typeof data === 'number') {
    finding.hint = schema.hint ?? `use a whole number such as ${Math.round(data)}`;
  }
  return finding;
}

function unknownKeyFinding(err: ErrorObject, segments: PathSegment[]): Finding {
  const key = String((err.params as { additionalProperty?: unknown }).additionalProperty);
  const schema = schemaOf(err);
  const allowed = Object.keys(schema.properties ?? {});
  const at = [...segments, key];
  const keysOf = (node: SchemaNode) =>
    [node, ...(node.oneOf ?? [])].some((n) => n.properties !== undefined && key in n.properties);
  const home = Object.entries(schema.properties ?? {}).find(([, child]) => keysOf(child));
  if (home) {
    return {
      segments: at,
      anchor: at,
      message: `unknown key '${key}' here`,
      hint: `'${key}' belongs under '${home[0]}:'`,
    };
  }
  const suggestion = closest(key, allowed);
  return {
    segments: at,
    anchor: at,
    message: suggestion ? `unknown key '${key}' — did you mean '${suggestion}'?` : `unknown key '${key}'`,
    hint: `allowed keys here: ${allowed.join(', ')}`,
  };
}

function requiredFinding(err: ErrorObject, segments: PathSegment[]): Finding {
  const key = String((err.params as { missingProperty?: unknown }).missingProperty);
  const child = schemaOf(err).properties?.[key];
  return {
    segments: [...segments, key],
    anchor: segments,
    message: `required key '${key}' is missing`,
    hint: child?.hint ? `add it: ${child.hint}` : `add '${key}:'`,
  };
}

/** A mapping whose kind key (a connection's `type`) is missing or names no known kind. */
function discriminatorFinding(err: ErrorObject, segments: PathSegment[]): Finding {
  const schema = schemaOf(err);
  const key = String((err.params as { tag?: unknown }).tag ?? schema.discriminator?.propertyName ?? 'type');
  const kinds = (schema.oneOf ?? []).flatMap((b) => b.properties?.[key]?.enum ?? []);
  const value: unknown = (err.data as Record<string, unknown> | undefined)?.[key];
  const at = [...segments, key];
  if (value === undefined) {
    return {
      segments: at,
      anchor: segments,
      message: `required key '${key}' is missing`,
      hint: `add it: one of ${kinds.join(', ')}`,
    };
  }
  const suggestion = typeof value === 'string' ? closest(value, words(kinds)) : undefined;
  return {
    segments: at,
    anchor: at,
    message: `must be one of: ${kinds.join(', ')}, got ${describeValue(value)}`,
    hint: suggestion ? `did you mean '${suggestion}'?` : schema.hint,
  };
}

/** One ajv error → one installer-facing finding. */
export function translate(err: ErrorObject, root: unknown): Finding {
  const segments = segmentsOf(err.instancePath, root);
  const schema = schemaOf(err);
  const data: unknown = err.data;
  const got = describeValue(data);
  const base = { segments, anchor: segments, hint: schema.hint };
  switch (err.keyword) {
    case 'type':
      return typeFinding(err, segments);
    case 'additionalProperties':
      return unknownKeyFinding(err, segments);
    case 'required':
      return requiredFinding(err, segments);
    case 'enum': {
      const values = schema.enum ?? [];
      const suggestion = typeof data === 'string' ? closest(data, words(values)) : undefined;
      return {
        ...base,
        message: `must be one of: ${values.join(', ')}, got ${got}`,
        hint: suggestion ? `did you mean '${suggestion}'?` : schema.hint,
      };
    }
    case 'minimum':
      return { ...base, message: `must be at least ${schema.minimum}, got ${got}` };
    case 'maximum':
      return { ...base, message: `must be at most ${schema.maximum}, got ${got}` };
    case 'minLength':
      return { ...base, message: 'must not be empty' };
    case 'maxLength':
      return {
        ...base,
        message: `is too long: at most ${schema.maxLength} characters, got ${typeof data === 'string' ? data.length : got}`,
      };
    case 'pattern':
      if (schema.pattern === ID_PATTERN) {
        const isId = schema.hint === ID_HINT && typeof data === 'string';
        return {
          ...base,
          message: `may only hold lowercase letters, digits, '-' and '_', got ${got}`,
          hint: isId ? `ids appear in URLs and stream ids; write e.g. '${idFrom(data)}'` : schema.hint,
        };
      }
      return { ...base, message: `is not in the expected form, got ${got}` };
    case 'discriminator':
      return discriminatorFinding(err, segments);
    case 'minItems':
      return {
        ...base,
        message:
          Array.isArray(data) && data.length === 0 ? 'is an empty list' : `needs at least ${schema.minItems} entries`,
      };
    default:
      return { ...base, message: err.message ?? `is not valid, got ${got}` };
  }
}
