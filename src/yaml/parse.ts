/**
 * A YAML file's text → its document with a source map, or the syntax mistakes told the way an
 * installer can act on them; and a validator's findings placed on the lines they are about.
 * site.yaml and the device profiles both read through here.
 */
import { type Document, LineCounter, parseDocument, type YAMLError } from 'yaml';
import { type ConfigError, formatPath, type PathSegment } from './errors.js';
import type { Finding } from './messages.js';
import { nodeAtOffset, offsetOf, positionOf } from './source-map.js';

export interface ParsedYaml {
  doc: Document;
  lineCounter: LineCounter;
}

export function parseYaml(text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  return { doc, lineCounter };
}

/** The advice for a parser complaint that has none of its own. */
const PLAIN_SYNTAX = (e: YAMLError) => ({
  message: `YAML syntax error: ${e.message.split('\n')[0]}`,
  hint: "check the indentation and that each line is 'key: value' or '- item'",
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

/** Every independent syntax mistake, each with the path it broke and advice for its kind. */
export function syntaxErrors({ doc, lineCounter }: ParsedYaml): ConfigError[] {
  const errors: ConfigError[] = [];
  const seenLines = new Set<number>();
  (doc.errors as YAMLError[]).forEach((e, i) => {
    // after the first real slip the parser is out of step and later complaints are mostly echoes
    if (i > 0 && !INDEPENDENT.has(e.code)) return;
    let offset = e.pos[0];
    let segments = plausible(nodeAtOffset(doc, offset).segments);
    let advice = SYNTAX_ADVICE[e.code] ?? PLAIN_SYNTAX(e);
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
        hint:
          firstLine !== undefined && firstLine !== line
            ? `keep one of the two; the other is on line ${firstLine}`
            : 'keep one of the two',
      };
    }
    errors.push({ path: formatPath(segments), line, column: col, ...advice });
  });
  return errors;
}

/** The first syntax mistake alone, as the parser words it (a profile's author reads a vendor document, not advice). */
export function firstSyntaxError({ doc, lineCounter }: ParsedYaml): ConfigError | undefined {
  const e = doc.errors[0] as YAMLError | undefined;
  if (!e) return undefined;
  const { line, col } = lineCounter.linePos(e.pos[0]);
  return { path: '', line, column: col, ...PLAIN_SYNTAX(e) };
}

/** The document's data, with a cap on aliases; `hint` is what the refusal advises. */
export function dataOf(doc: Document, hint: string): { data: unknown } | { error: ConfigError } {
  try {
    // the alias cap stops a "billion laughs" file from exhausting the Pi's memory
    return { data: doc.toJS({ maxAliasCount: 100 }) };
  } catch (e) {
    return { error: { path: '', line: 1, column: 1, message: `cannot read the file: ${(e as Error).message}`, hint } };
  }
}

/** A finding on the line of the node it is anchored to. */
export function place(f: Finding, { doc, lineCounter }: ParsedYaml): ConfigError {
  const pos = positionOf(doc, lineCounter, f.anchor);
  return {
    path: formatPath(f.segments),
    message: f.message,
    ...(pos ? { line: pos.line, column: pos.column } : {}),
    ...(f.hint ? { hint: f.hint } : {}),
  };
}

/** Findings placed, keeping the first per path: one wrong value can break several keywords (type and enum). */
export function placeFirstPerPath(findings: readonly Finding[], parsed: ParsedYaml): ConfigError[] {
  const seen = new Set<string>();
  const errors: ConfigError[] = [];
  for (const f of findings) {
    const error = place(f, parsed);
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    errors.push(error);
  }
  return errors;
}

/** A YAML mapping as parsed data; the rules that read raw data (before or beside the schema) check with it. */
export type Rec = Record<string, unknown>;
export const isRec = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);
