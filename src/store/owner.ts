import type { Database } from 'better-sqlite3';

/** The site owner: the one person who logs in on the consent page. */
export interface OwnerRow {
  username: string;
  passwordHash: string;
}

export function getOwner(db: Database): OwnerRow | undefined {
  return db.prepare<[], OwnerRow>('SELECT username, password_hash AS passwordHash FROM auth_owner WHERE id = 1').get();
}

export function putOwner(db: Database, owner: OwnerRow, now: number): void {
  db.prepare(
    `INSERT INTO auth_owner (id, username, password_hash, updated_at) VALUES (1, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET username = excluded.username, password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
  ).run(owner.username, owner.passwordHash, now);
}
