import type { Database, Statement } from 'better-sqlite3';
import { writeTx } from './db.js';
import { perConnection } from './per-connection.js';

/** A registered OAuth client as stored; `secretHash` is null for a public client (PKCE only). */
export interface ClientRow {
  id: string;
  name: string;
  secretHash: string | null;
  /** canonical wire scopes, e.g. ['svc/device.read'] */
  scopes: string[];
  redirectUris: string[];
  createdAt: number;
  /** devices the installer assigned to the client as a partner */
  devices: string[];
}

interface RawClient {
  id: string;
  name: string;
  secret_hash: string | null;
  scopes: string;
  redirect_uris: string;
  created_at: number;
}

function toRow(db: Database, r: RawClient): ClientRow {
  return {
    id: r.id,
    name: r.name,
    secretHash: r.secret_hash,
    scopes: r.scopes === '' ? [] : r.scopes.split(' '),
    redirectUris: JSON.parse(r.redirect_uris) as string[],
    createdAt: r.created_at,
    devices: clientDevices(db, r.id),
  };
}

/**
 * The statements every guarded request runs (is the token's client still there, which devices
 * it sees), prepared once per connection: preparing cost more than running them.
 */
interface Stmts {
  active: Statement<[string], number>;
  devices: Statement<[string], string>;
}
const stmts = perConnection(
  (db): Stmts => ({
    active: db.prepare<[string], number>('SELECT 1 FROM auth_clients WHERE id = ? AND removed_at IS NULL').pluck(),
    devices: db
      .prepare<[string], string>('SELECT device_id FROM auth_client_devices WHERE client_id = ? ORDER BY device_id')
      .pluck(),
  }),
);

/** An active (not removed) client, or undefined. */
export function findClient(db: Database, id: string): ClientRow | undefined {
  const r = db.prepare<[string], RawClient>('SELECT * FROM auth_clients WHERE id = ? AND removed_at IS NULL').get(id);
  return r ? toRow(db, r) : undefined;
}

/** True while the client exists and was not removed: findClient without reading its row. */
export function clientActive(db: Database, id: string): boolean {
  return stmts(db).active.get(id) !== undefined;
}

/** True when the id was ever used, removed or not: ids are never reused. */
export function clientIdTaken(db: Database, id: string): boolean {
  return db.prepare<[string], number>('SELECT 1 FROM auth_clients WHERE id = ?').pluck().get(id) !== undefined;
}

export function listClients(db: Database): ClientRow[] {
  return db
    .prepare<[], RawClient>('SELECT * FROM auth_clients WHERE removed_at IS NULL ORDER BY id')
    .all()
    .map((r) => toRow(db, r));
}

export function insertClient(db: Database, c: Omit<ClientRow, 'createdAt'>, now: number): void {
  writeTx(db, () => {
    db.prepare(
      'INSERT INTO auth_clients (id, name, secret_hash, scopes, redirect_uris, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(c.id, c.name, c.secretHash, c.scopes.join(' '), JSON.stringify(c.redirectUris), now);
    setClientDevices(db, c.id, c.devices);
  });
}

export function setClientSecretHash(db: Database, id: string, secretHash: string): boolean {
  return (
    db.prepare('UPDATE auth_clients SET secret_hash = ? WHERE id = ? AND removed_at IS NULL').run(secretHash, id)
      .changes === 1
  );
}

export function setClientDevices(db: Database, id: string, devices: readonly string[]): void {
  writeTx(db, () => {
    db.prepare('DELETE FROM auth_client_devices WHERE client_id = ?').run(id);
    const add = db.prepare('INSERT OR IGNORE INTO auth_client_devices (client_id, device_id) VALUES (?, ?)');
    for (const d of devices) add.run(id, d);
  });
}

export function clientDevices(db: Database, id: string): string[] {
  return stmts(db).devices.all(id);
}

/** Marks the client removed and drops its device assignments; returns false when there was no such active client. */
export function markClientRemoved(db: Database, id: string, now: number): boolean {
  return writeTx(db, () => {
    const changed =
      db.prepare('UPDATE auth_clients SET removed_at = ? WHERE id = ? AND removed_at IS NULL').run(now, id).changes ===
      1;
    if (changed) db.prepare('DELETE FROM auth_client_devices WHERE client_id = ?').run(id);
    return changed;
  });
}
