/**
 * site.yaml's format version and the migrations between versions. A file without `version:` is
 * version 1, the format before the key existed. Migrations are pure functions on the parsed data,
 * run before validation, so an old file is checked (and its mistakes placed on its lines) as the
 * current format. docs/configuration.md "Versions and migrations" says when to add one.
 */
import type { Finding } from '../yaml/messages.js';
import { isRec, type Rec } from '../yaml/parse.js';

/** Takes a file's data one version up; returns new data, never edits its input. */
export interface Migration {
  /** what changed, for the release notes and the docs */
  change: string;
  migrate: (data: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

/** MIGRATIONS[i] takes version i + 1 to i + 2; empty while version 1 is the only format. */
export const MIGRATIONS: readonly Migration[] = [];

/** The format this gateway writes and reads natively: one past the last migration. */
export const CONFIG_VERSION = MIGRATIONS.length + 1;

const readable = (current: number) => (current === 1 ? 'version 1' : `versions 1 to ${current}`);

export type Migrated = { ok: true; data: unknown } | { ok: false; finding: Finding };

/**
 * The data in the current format. A version newer than the gateway knows is refused: its keys
 * may mean something this release would read wrongly. A `version` that is no whole number ≥ 1 is
 * left for the schema to name.
 */
export function migrate(data: unknown, migrations: readonly Migration[] = MIGRATIONS): Migrated {
  if (!isRec(data)) return { ok: true, data };
  const current = migrations.length + 1;
  const written = data.version ?? 1;
  if (typeof written !== 'number' || !Number.isInteger(written) || written < 1) return { ok: true, data };
  if (written > current) {
    const at = ['version'];
    return {
      ok: false,
      finding: {
        segments: at,
        anchor: at,
        message: `version ${written} is newer than this sitegw reads (${readable(current)})`,
        hint: `update sitegw to a release that reads version ${written}, or write the file in version ${current}`,
      },
    };
  }
  // a file already in the current format is taken as written (no version: stays absent)
  if (written === current) return { ok: true, data };
  let out: Rec = data;
  for (const m of migrations.slice(written - 1)) out = m.migrate(out);
  return { ok: true, data: { ...out, version: current } };
}
