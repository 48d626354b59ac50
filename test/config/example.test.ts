import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LineCounter, parseDocument } from 'yaml';
import { siteSchema } from '../../src/config/schema.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import type { PathSegment } from '../../src/yaml/errors.js';
import type { SchemaNode } from '../../src/yaml/schema.js';
import { offsetOf } from '../../src/yaml/source-map.js';

const file = fileURLToPath(new URL('../../examples/site.example.yaml', import.meta.url));

/** Every key path the schema allows, with list items as index 0..n-1 of the example's lists. */
function schemaKeys(
  schema: SchemaNode,
  prefix: PathSegment[],
  data: unknown,
  out: { path: PathSegment[]; node: SchemaNode }[],
): void {
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = [...prefix, key];
    out.push({ path, node: child });
    const value = (data as Record<string, unknown> | undefined)?.[key];
    if (child.properties) schemaKeys(child, path, value, out);
    // a `type`-picked mapping (a connection): the keys of the branch this example's value picks
    const branch = child.oneOf?.find((b) =>
      b.properties?.type?.enum?.includes((value as { type?: string } | undefined)?.type ?? ''),
    );
    if (branch) schemaKeys(branch, path, value, out);
    if (child.items && Array.isArray(value))
      value.forEach((item, i) => schemaKeys(child.items as SchemaNode, [...path, i], item, out));
  }
}

describe('examples/site.example.yaml', () => {
  const text = readFileSync(file, 'utf8');
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const raw: unknown = doc.toJS();

  // parseConfig: the text alone; its uplink.tls paths are placeholders loadConfig would read
  it('passes validation with the hybrid inverter, two batteries and two meters', async () => {
    const result = parseConfig(text, file, dirname(file));
    if (!result.ok) throw new Error(JSON.stringify(result.errors, null, 2));
    const roles = result.config.devices.map((d) => d.role);
    expect(roles.filter((r) => r === 'inverter')).toHaveLength(1);
    expect(roles.filter((r) => r === 'battery')).toHaveLength(2);
    expect(roles).toContain('grid-meter');
    expect(roles).toContain('consumption-meter');
  });

  it('shows every connection type', async () => {
    const result = parseConfig(text, file, dirname(file));
    if (!result.ok) throw new Error(JSON.stringify(result.errors, null, 2));
    const devices = siteSchema.properties?.devices?.items?.properties?.connection;
    const types = (devices?.oneOf ?? []).flatMap((b) => b.properties?.type?.enum ?? []);
    expect(types.length).toBeGreaterThan(1);
    expect(new Set(result.config.devices.map((d) => d.connection.type))).toEqual(new Set(types));
  });

  it('shows every option of the schema, in some device for the per-device ones', () => {
    const keys: { path: PathSegment[]; node: SchemaNode }[] = [];
    schemaKeys(siteSchema, [], raw, keys);
    const written = (path: PathSegment[]) => {
      let node: unknown = raw;
      for (const seg of path)
        node = node === null || typeof node !== 'object' ? undefined : (node as Record<string, unknown>)[seg];
      return node !== undefined;
    };
    const missing = new Set<string>();
    const seenAnywhere = new Set<string>();
    for (const { path } of keys) {
      const generic = path.map((s) => (typeof s === 'number' ? '[]' : s)).join('.');
      if (written(path)) seenAnywhere.add(generic);
      else missing.add(generic);
    }
    expect([...missing].filter((k) => !seenAnywhere.has(k))).toEqual([]);
  });

  it('states the default of every option that has one, in the comment above it', () => {
    const keys: { path: PathSegment[]; node: SchemaNode }[] = [];
    schemaKeys(siteSchema, [], raw, keys);
    const lines = text.split('\n');
    const unstated: string[] = [];
    const checked = new Set<string>();
    for (const { path, node } of keys) {
      if (node.default === undefined || typeof node.default === 'object') continue;
      const generic = path.map((s) => (typeof s === 'number' ? '[]' : s)).join('.');
      if (checked.has(generic)) continue;
      checked.add(generic);
      const offset = offsetOf(doc, path);
      if (offset === undefined) continue;
      let i = lineCounter.linePos(offset).line - 2;
      let comment = '';
      while (i >= 0 && lines[i]?.trim().startsWith('#')) comment = `${lines[i--]}\n${comment}`;
      if (!comment.includes(`default ${String(node.default)}`))
        unstated.push(`${generic} (default ${String(node.default)})`);
    }
    expect(checked.size).toBeGreaterThan(5);
    expect(unstated).toEqual([]);
  });
});
