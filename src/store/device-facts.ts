import type { Database } from 'better-sqlite3';

/** What a device told about itself that the site's topology is built from, kept across restarts. */
export interface DeviceFacts {
  pvModules: number | null;
  /** the live channels it reported, by stream id (docs/design.md "Live channels") */
  live: Record<string, string[]> | null;
}

export function saveDeviceFacts(db: Database, deviceId: string, f: DeviceFacts): void {
  db.prepare('INSERT OR REPLACE INTO device_facts (device, pv_modules, live) VALUES (?, ?, ?)').run(
    deviceId,
    f.pvModules,
    f.live ? JSON.stringify(f.live) : null,
  );
}

/** A `live` column that does not parse as a map of string lists (a hand-edited file) reads as nothing learned. */
function parseLive(text: string | null): Record<string, string[]> | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    const out: Record<string, string[]> = {};
    for (const [k, ids] of Object.entries(v))
      if (Array.isArray(ids)) out[k] = ids.filter((x): x is string => typeof x === 'string');
    return out;
  } catch {
    return null;
  }
}

export function loadDeviceFacts(db: Database): Map<string, DeviceFacts> {
  const rows = db.prepare('SELECT device, pv_modules, live FROM device_facts').raw().all() as [
    string,
    number | null,
    string | null,
  ][];
  return new Map(rows.map(([device, pvModules, live]) => [device, { pvModules, live: parseLive(live) }]));
}
