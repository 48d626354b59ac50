import { changeStamp, type Database } from '../store/db.js';
import type { Principal } from './principal.js';

/** The check's answer itself, handed out again on a hit (no copy per request): read, never changed. */
export interface Verified {
  readonly ok: true;
  principal: Principal;
  /** ms epoch, auth clock */
  expiresAt: number;
}

/**
 * Access tokens that checked out, by their value, for as long as nothing in the database changed.
 * A partner polling the API sends the same token on every request; finding it again (SHA-256,
 * the token row, its client, the client's devices) was most of the guard's cost per request
 * (bench/README.md#footprint). Any write, by this process or by `sitegw clients` in another, moves
 * the change stamp and empties the cache, so a revoked token or a removed client or device is
 * refused on its next request, as before. Expiry is checked by the caller on every hit.
 */
export class VerifiedTokens {
  private readonly byToken = new Map<string, Verified>();
  private stamp: readonly [number, number] = [-1, -1];

  /** Room for this many tokens: a site has a handful of partners, each with a live token or two. */
  constructor(private readonly room = 64) {}

  /**
   * The entry for `token` if nothing changed since it was stored. Read the stamp before the
   * database: whatever is stored after this call is then dropped by the next write's stamp.
   */
  get(db: Database, token: string): Verified | undefined {
    const now = changeStamp(db);
    if (now[0] !== this.stamp[0] || now[1] !== this.stamp[1]) {
      this.byToken.clear();
      this.stamp = now;
      return undefined;
    }
    return this.byToken.get(token);
  }

  set(token: string, v: Verified): void {
    if (this.byToken.size >= this.room) this.byToken.delete(this.byToken.keys().next().value!);
    this.byToken.set(token, v);
  }
}
