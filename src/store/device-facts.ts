import type { Database } from 'better-sqlite3';

/** What a device told about itself that the site's topology is built from, kept across restarts. */
export interface DeviceFacts {
  pvModules: number | null;
}

export function saveDeviceFacts(db: Database, deviceId: string, f: DeviceFacts): void {
  db.prepare('INSERT OR REPLACE INTO device_facts (device, pv_modules) VALUES (?, ?)').run(deviceId, f.pvModules);
}

export function loadDeviceFacts(db: Database): Map<string, DeviceFacts> {
  const rows = db.prepare('SELECT device, pv_modules FROM device_facts').raw().all() as [string, number | null][];
  return new Map(rows.map(([device, pvModules]) => [device, { pvModules }]));
}
