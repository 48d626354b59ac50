/**
 * The grid operator's programs and controls as last read, kept in a file beside the database
 * (written durably, src/store/durable-file.ts), so a gateway restarted while the server cannot be
 * reached still runs the controls it had to their end and then the operator's default, instead of
 * starting with no operator limit at all (docs/grid-operator.md "When the server cannot be
 * reached"). The file is checked against its schema when read; a file that fails, or one written
 * for another server or certificate, is left unused and said so.
 */
import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { writeDurably } from '../store/durable-file.js';

const Values = {
  exportW: Type.Optional(Type.Number()),
  importW: Type.Optional(Type.Number()),
  generationW: Type.Optional(Type.Number()),
  loadW: Type.Optional(Type.Number()),
  connect: Type.Optional(Type.Boolean()),
  energize: Type.Optional(Type.Boolean()),
  unsupported: Type.Array(Type.String()),
};
const Base = Type.Object(Values, { additionalProperties: false });
const Control = Type.Object({
  href: Type.Optional(Type.String()),
  mRID: Type.String(),
  description: Type.Optional(Type.String()),
  creationTime: Type.Integer(),
  currentStatus: Type.Integer(),
  statusTime: Type.Integer(),
  start: Type.Integer(),
  duration: Type.Integer(),
  randomizeStart: Type.Optional(Type.Integer()),
  randomizeDuration: Type.Optional(Type.Integer()),
  replyTo: Type.Optional(Type.String()),
  responseRequired: Type.Integer(),
  base: Base,
});
const Program = Type.Object({
  mRID: Type.String(),
  primacy: Type.Integer(),
  controls: Type.Array(Control),
  defaultControl: Type.Optional(Type.Object({ href: Type.Optional(Type.String()), mRID: Type.String(), base: Base })),
});
const Randomization = Type.Object({ start: Type.Integer(), end: Type.Integer(), cancel: Type.Integer() });
const Phase = Type.Union([
  Type.Literal('received'),
  Type.Literal('started'),
  Type.Literal('completed'),
  Type.Literal('cancelled'),
  Type.Literal('superseded'),
  Type.Literal('refused'),
]);

export const SavedState = Type.Object({
  version: Type.Literal(1),
  /** wall ms when written */
  savedAt: Type.Integer(),
  discoveryUrl: Type.String(),
  lfdi: Type.String(),
  offsetSeconds: Type.Union([Type.Number(), Type.Null()]),
  programs: Type.Array(Program),
  randomization: Type.Array(Type.Tuple([Type.String(), Randomization])),
  phases: Type.Array(Type.Tuple([Type.String(), Phase])),
});
export type SavedState = Static<typeof SavedState>;

export type Loaded = { ok: true; state: SavedState } | { ok: false; reason: string };

/** Reads the file; `expect` is the server and certificate it must have been written for. */
export function loadSaved(file: string, expect: { discoveryUrl: string; lfdi: string }): Loaded {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'no saved state' : `unreadable: ${(e as Error).message}` };
  }
  if (!Value.Check(SavedState, data)) {
    const first = Value.Errors(SavedState, data).First();
    return { ok: false, reason: `not a saved state: ${first?.path || '/'} ${first?.message ?? ''}`.trim() };
  }
  if (data.discoveryUrl !== expect.discoveryUrl || data.lfdi !== expect.lfdi) {
    return { ok: false, reason: 'written for another server or certificate' };
  }
  return { ok: true, state: data };
}

export function saveState(file: string, state: SavedState): void {
  writeDurably(file, `${JSON.stringify(state)}\n`);
}
