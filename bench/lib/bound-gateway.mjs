/**
 * A copy of the built gateway (`dist/`) in which one part of a telemetry answer costs nothing after
 * its first time: what the endpoint's share of the bare route would be if that part were free, an
 * upper bound on any change to it (bench/README.md "A day not asked before", tenth session).
 * - `read`: a PT15M query's rows (src/telemetry/query.ts `quarterRows`) kept per question, so a
 *   question asked again reads nothing: the bound of any faster read or stored layout.
 * - `text`: the whole answer's text (`telemetryJson`) kept per question: the bound of any form of a
 *   day stored ready to send; what is left is the route's own work and the answer's Buffer.
 * - `deflated`: as `text`, but kept deflated and inflated at each question after the first (node's
 *   zlib, level 9): a model of a day's answer stored compressed, less its read from SQLite.
 * Each kept result is held for the whole run (a bench-only copy, never the product).
 * The copy is `dist-bound-<kind>/` beside `dist/`, so the packages resolve as they do from `dist/`.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** one question's key in the built telemetryJson: what makes its answer differ */
const QUESTION = '`${q.streamId}/${q.start}/${q.end}/${q.resolution}/${q.socScale}/${[...q.include].join()}`';

/** what each kind keeps: the built function's first line, and what replaces it */
const PATCHES = {
  read: {
    anchor: 'function quarterRows(db, q, r) {',
    with: `const boundRows = new Map();
function quarterRows(db, q, r) {
    const k = \`\${r.key}/\${q.start}/\${q.end}/\${r.plan.columns.join()}\`;
    let rows = boundRows.get(k);
    if (rows === undefined) boundRows.set(k, (rows = quarterRowsRead(db, q, r)));
    return rows;
}
function quarterRowsRead(db, q, r) {`,
  },
  text: {
    anchor: 'export function telemetryJson(db, q) {',
    with: `const boundText = new Map();
export function telemetryJson(db, q) {
    const k = ${QUESTION};
    let text = boundText.get(k);
    if (text === undefined) boundText.set(k, (text = telemetryJsonMade(db, q)));
    return text;
}
function telemetryJsonMade(db, q) {`,
  },
  deflated: {
    anchor: 'export function telemetryJson(db, q) {',
    with: `import { deflateRawSync as boundDeflate, inflateRawSync as boundInflate } from 'node:zlib';
const boundDeflated = new Map();
export function telemetryJson(db, q) {
    const k = ${QUESTION};
    const kept = boundDeflated.get(k);
    if (kept !== undefined) return boundInflate(kept).toString();
    const text = telemetryJsonMade(db, q);
    boundDeflated.set(k, boundDeflate(Buffer.from(text), { level: 9 }));
    return text;
}
function telemetryJsonMade(db, q) {`,
  },
};

/** Makes the copy for `kind` afresh and returns its directory's name under the repository (removeBound takes it away). */
export function boundGateway(kind) {
  const patch = PATCHES[kind];
  if (!patch) throw new Error(`BENCH_BOUND=${kind}: one of ${Object.keys(PATCHES).join(', ')}`);
  const dist = join(ROOT, 'dist');
  if (!existsSync(join(dist, 'telemetry', 'query.js'))) throw new Error('BENCH_BOUND: run `npm run build` first');
  const name = `dist-bound-${kind}`;
  const copy = join(ROOT, name);
  rmSync(copy, { recursive: true, force: true });
  cpSync(dist, copy, { recursive: true });
  const file = join(copy, 'telemetry', 'query.js');
  const js = readFileSync(file, 'utf8');
  // the built code changed shape: say so rather than measure the unchanged gateway
  if (js.split(patch.anchor).length !== 2) throw new Error(`BENCH_BOUND=${kind}: "${patch.anchor}" not found once in ${file}`);
  writeFileSync(file, js.replace(patch.anchor, patch.with));
  return name;
}

/** Removes a copy boundGateway made. */
export function removeBound(name) {
  rmSync(join(ROOT, name), { recursive: true, force: true });
}
