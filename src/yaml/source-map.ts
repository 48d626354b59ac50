/**
 * Maps a path inside the parsed data back to where it is written in site.yaml, and an offset in
 * the text back to a path. Errors point at the key of a mapping entry (that is where an installer's
 * eye lands) and at the start of a list item; a path that does not exist in the text (a filled-in
 * default, a missing key) is placed at its nearest written ancestor.
 */
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, type LineCounter, type Node } from 'yaml';
import type { PathSegment } from './errors.js';

export interface SourcePosition {
  line: number;
  column: number;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  if (typeof key === 'string' || typeof key === 'number') return String(key);
  return undefined;
}

function resolve(doc: Document, node: unknown): unknown {
  // an alias resolves to the anchored node; its own position is the alias, which is still useful
  return isAlias(node) ? (node.resolve(doc) ?? node) : node;
}

function startOf(node: unknown): number | undefined {
  if (node !== null && typeof node === 'object' && 'range' in node) {
    const range = (node as Node).range;
    if (range) return range[0];
  }
  return undefined;
}

/** Offset in the text of the deepest written node along `segments`. */
export function offsetOf(doc: Document, segments: readonly PathSegment[]): number | undefined {
  let node: unknown = doc.contents;
  let best = startOf(node);
  for (const seg of segments) {
    node = resolve(doc, node);
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(seg));
      if (!pair) break;
      best = startOf(pair.key) ?? startOf(pair.value) ?? best;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item: unknown = node.items[seg];
      if (item === undefined) break;
      best = startOf(item) ?? best;
      node = item;
    } else {
      break;
    }
  }
  return best;
}

export function positionOf(
  doc: Document,
  lineCounter: LineCounter,
  segments: readonly PathSegment[],
): SourcePosition | undefined {
  const offset = offsetOf(doc, segments);
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

function contains(node: unknown, offset: number): boolean {
  if (node === null || typeof node !== 'object' || !('range' in node)) return false;
  const range = (node as Node).range;
  return !!range && offset >= range[0] && offset < range[2];
}

export interface NodeAt {
  /** path of the innermost entry at the offset */
  segments: PathSegment[];
  /**
   * the innermost quoted text or [ ] / { } collection around the offset: an unclosed delimiter
   * runs on from there, so that is where the mistake was typed
   */
  opener?: { segments: PathSegment[]; start: number };
}

function isDelimited(node: unknown): boolean {
  if (isScalar(node)) return node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
  return (isMap(node) || isSeq(node)) && node.flow === true;
}

/**
 * The innermost entry written at `offset`, best effort: YAML syntax errors come with an offset
 * only, and a path and a start next to the line make the report read like the other errors.
 */
export function nodeAtOffset(doc: Document, offset: number): NodeAt {
  const segments: PathSegment[] = [];
  let node: unknown = doc.contents;
  const found: NodeAt = { segments };
  const settle = (n: unknown): NodeAt => {
    const start = startOf(n);
    if (start !== undefined && contains(n, offset) && isDelimited(n)) found.opener = { segments: [...segments], start };
    return found;
  };
  for (;;) {
    settle(node);
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && (contains(p.key, offset) || contains(p.value, offset)));
      const key = pair ? keyText(pair.key) : undefined;
      if (!pair || key === undefined) return found;
      segments.push(key);
      settle(pair.key);
      if (contains(pair.key, offset)) return found;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => contains(item, offset));
      if (index < 0) return found;
      segments.push(index);
      node = node.items[index];
    } else {
      return found;
    }
  }
}
