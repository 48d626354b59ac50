import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';

/** One entry of a device's `publishTo` list (docs/api.md "Device publish list"). */
export interface PublishEntry {
  clientId: string;
  data: string[];
}

export interface PublishAudit {
  ts: number;
  deviceId: string;
  /** the client that made the change with the owner's token */
  byClient: string;
  before: PublishEntry[];
  after: PublishEntry[];
}

interface Raw {
  device_id: string;
  client_id: string;
  data: string;
}

/** Every device's list, in the order the owner gave it. */
export function allPublishTo(db: Database): Map<string, PublishEntry[]> {
  const out = new Map<string, PublishEntry[]>();
  for (const r of db
    .prepare<[], Raw>('SELECT device_id, client_id, data FROM publish_to ORDER BY device_id, position')
    .all()) {
    let list = out.get(r.device_id);
    if (!list) out.set(r.device_id, (list = []));
    list.push({ clientId: r.client_id, data: JSON.parse(r.data) as string[] });
  }
  return out;
}

export function publishToOf(db: Database, deviceId: string): PublishEntry[] {
  return db
    .prepare<[string], Raw>('SELECT device_id, client_id, data FROM publish_to WHERE device_id = ? ORDER BY position')
    .all(deviceId)
    .map((r) => ({ clientId: r.client_id, data: JSON.parse(r.data) as string[] }));
}

/** Devices whose list names `clientId` with `stream` in its data. */
export function devicesPublishedTo(db: Database, clientId: string, stream: string): string[] {
  return db
    .prepare<[string, string], string>(
      `SELECT device_id FROM publish_to WHERE client_id = ? AND EXISTS (SELECT 1 FROM json_each(publish_to.data) WHERE value = ?) ORDER BY device_id`,
    )
    .pluck()
    .all(clientId, stream);
}

/** Replaces a device's whole list and records the change in the audit table, in one transaction. */
export function replacePublishTo(
  db: Database,
  deviceId: string,
  entries: readonly PublishEntry[],
  byClient: string,
  now: number,
): PublishAudit {
  return writeTx(db, () => {
    const before = publishToOf(db, deviceId);
    db.prepare('DELETE FROM publish_to WHERE device_id = ?').run(deviceId);
    const add = db.prepare('INSERT INTO publish_to (device_id, position, client_id, data) VALUES (?, ?, ?, ?)');
    entries.forEach((e, i) => add.run(deviceId, i, e.clientId, JSON.stringify(e.data)));
    const after = entries.map((e) => ({ clientId: e.clientId, data: [...e.data] }));
    db.prepare('INSERT INTO publish_to_audit (ts, device_id, by_client, before, after) VALUES (?, ?, ?, ?, ?)').run(
      now,
      deviceId,
      byClient,
      JSON.stringify(before),
      JSON.stringify(after),
    );
    return { ts: now, deviceId, byClient, before, after };
  });
}

/** Drops a removed client from every list, audited as a change by the installer (`byClient`). */
export function removeClientFromPublishTo(
  db: Database,
  clientId: string,
  byClient: string,
  now: number,
): PublishAudit[] {
  return writeTx(db, () => {
    const changes: PublishAudit[] = [];
    for (const [deviceId, list] of allPublishTo(db)) {
      if (!list.some((e) => e.clientId === clientId)) continue;
      changes.push(
        replacePublishTo(
          db,
          deviceId,
          list.filter((e) => e.clientId !== clientId),
          byClient,
          now,
        ),
      );
    }
    return changes;
  });
}

export function publishAudit(db: Database, deviceId?: string): PublishAudit[] {
  const rows = db
    .prepare<
      [string | null, string | null],
      { ts: number; device_id: string; by_client: string; before: string; after: string }
    >(
      'SELECT ts, device_id, by_client, before, after FROM publish_to_audit WHERE (? IS NULL OR device_id = ?) ORDER BY id',
    )
    .all(deviceId ?? null, deviceId ?? null);
  return rows.map((r) => ({
    ts: r.ts,
    deviceId: r.device_id,
    byClient: r.by_client,
    before: JSON.parse(r.before) as PublishEntry[],
    after: JSON.parse(r.after) as PublishEntry[],
  }));
}
