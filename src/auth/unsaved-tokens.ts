/**
 * Access tokens issued while the database could not store them (a full or failing data disk:
 * docs/design.md "Field faults: what the numbers survive", disk row). A partner's sign-in (client_credentials) keeps
 * working: the token lives here until a write works again, then goes into the database like any
 * other. It is as safe as a stored one:
 * - it carries its client's secret hash from the moment of issue, and is refused once the client
 *   is removed or its secret changed (the two ways `sitegw clients` revokes a partner's tokens,
 *   both of which only become possible again once the disk takes writes);
 * - it lives at most its own lifetime, and is lost at a restart (the partner signs in again);
 * - only access tokens of the client-credentials grant: the customer flow spends a code or a
 *   refresh token, and a spent one must be on disk, or it could be spent twice.
 */
import type { Database } from 'better-sqlite3';
import { findClient } from '../store/clients.js';
import { writeTx } from '../store/db.js';
import { insertToken, type TokenRow } from '../store/tokens.js';

/** A site has a handful of partners; beyond this the token endpoint answers 503 rather than grow. */
const ROOM = 256;

interface Unsaved {
  row: Omit<TokenRow, 'rotatedAt' | 'revokedAt'>;
  secretHash: string | null;
}

export class UnsavedTokens {
  private readonly byHash = new Map<string, Unsaved>();

  get size(): number {
    return this.byHash.size;
  }

  /** false when there is no room (the caller refuses the sign-in) */
  keep(row: Unsaved['row'], secretHash: string | null, now: number): boolean {
    this.dropExpired(now);
    if (this.byHash.size >= ROOM) return false;
    this.byHash.set(row.hash, { row, secretHash });
    return true;
  }

  /** The token if it is here, still live and its client unchanged since it was issued. */
  find(db: Database, hash: string, now: number): Unsaved['row'] | undefined {
    const t = this.byHash.get(hash);
    if (!t) return undefined;
    if (t.row.expiresAt <= now || !this.clientUnchanged(db, t)) {
      this.byHash.delete(hash);
      return undefined;
    }
    return t.row;
  }

  /** Writes every live one into the database, in one transaction; throws (and keeps them) when that fails. */
  save(db: Database, now: number): number {
    this.dropExpired(now);
    const live = [...this.byHash.values()].filter((t) => this.clientUnchanged(db, t));
    writeTx(db, () => {
      for (const t of live) insertToken(db, t.row);
    });
    this.byHash.clear();
    return live.length;
  }

  private clientUnchanged(db: Database, t: Unsaved): boolean {
    const c = findClient(db, t.row.clientId);
    return c !== undefined && c.secretHash === t.secretHash;
  }

  private dropExpired(now: number): void {
    for (const [h, t] of this.byHash) if (t.row.expiresAt <= now) this.byHash.delete(h);
  }
}
