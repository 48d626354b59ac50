import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';
import { perConnection } from './per-connection.js';

/**
 * Authorization codes and tokens, keyed by the SHA-256 of their value so a copy of the database
 * hands out nothing usable. A `family` ties together everything issued from one grant (one
 * consent, or one client-credentials request): a replayed code or refresh token revokes it whole.
 */
export interface CodeRow {
  hash: string;
  clientId: string;
  redirectUri: string;
  /** the authorization request named redirect_uri, so the token request must repeat it */
  redirectGiven: boolean;
  scopes: string[];
  codeChallenge: string | null;
  nonce: string | null;
  family: string;
  authTime: number;
  expiresAt: number;
  usedAt: number | null;
}

export type TokenKind = 'access' | 'refresh';

export interface TokenRow {
  hash: string;
  kind: TokenKind;
  clientId: string;
  /** issued on the site owner's consent (authorization code), not to a partner by its own credentials */
  customer: boolean;
  scopes: string[];
  family: string;
  authTime: number | null;
  createdAt: number;
  expiresAt: number;
  /** a refresh token exchanged for its successor */
  rotatedAt: number | null;
  revokedAt: number | null;
}

const split = (s: string): string[] => (s === '' ? [] : s.split(' '));

interface RawCode {
  hash: string;
  client_id: string;
  redirect_uri: string;
  redirect_given: number;
  scopes: string;
  code_challenge: string | null;
  nonce: string | null;
  family: string;
  auth_time: number;
  expires_at: number;
  used_at: number | null;
}

export function insertCode(db: Database, c: Omit<CodeRow, 'usedAt'>): void {
  db.prepare(
    `INSERT INTO auth_codes (hash, client_id, redirect_uri, redirect_given, scopes, code_challenge, nonce, family, auth_time, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    c.hash,
    c.clientId,
    c.redirectUri,
    c.redirectGiven ? 1 : 0,
    c.scopes.join(' '),
    c.codeChallenge,
    c.nonce,
    c.family,
    c.authTime,
    c.expiresAt,
  );
}

/**
 * Looks the code up and marks it used in one step, so two concurrent exchanges cannot both see
 * it unused. Returns the row as it was before this call (usedAt null on the first use).
 */
export function takeCode(db: Database, hash: string, now: number): CodeRow | undefined {
  return writeTx(db, () => {
    const r = db.prepare<[string], RawCode>('SELECT * FROM auth_codes WHERE hash = ?').get(hash);
    if (!r) return undefined;
    if (r.used_at === null) db.prepare('UPDATE auth_codes SET used_at = ? WHERE hash = ?').run(now, hash);
    return {
      hash: r.hash,
      clientId: r.client_id,
      redirectUri: r.redirect_uri,
      redirectGiven: r.redirect_given === 1,
      scopes: split(r.scopes),
      codeChallenge: r.code_challenge,
      nonce: r.nonce,
      family: r.family,
      authTime: r.auth_time,
      expiresAt: r.expires_at,
      usedAt: r.used_at,
    };
  });
}

interface RawToken {
  hash: string;
  kind: TokenKind;
  client_id: string;
  customer: number;
  scopes: string;
  family: string;
  auth_time: number | null;
  created_at: number;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

function toToken(r: RawToken): TokenRow {
  return {
    hash: r.hash,
    kind: r.kind,
    clientId: r.client_id,
    customer: r.customer === 1,
    scopes: split(r.scopes),
    family: r.family,
    authTime: r.auth_time,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    rotatedAt: r.rotated_at,
    revokedAt: r.revoked_at,
  };
}

export function insertToken(db: Database, t: Omit<TokenRow, 'rotatedAt' | 'revokedAt'>): void {
  db.prepare(
    `INSERT INTO auth_tokens (hash, kind, client_id, customer, scopes, family, auth_time, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    t.hash,
    t.kind,
    t.clientId,
    t.customer ? 1 : 0,
    t.scopes.join(' '),
    t.family,
    t.authTime,
    t.createdAt,
    t.expiresAt,
  );
}

// Every guarded request looks its bearer token up: preparing the statement each time cost more
// than running it (bench/telemetry-http.ts), so it is prepared once per connection.
const findStmt = perConnection((db) =>
  db.prepare<[string, TokenKind], RawToken>('SELECT * FROM auth_tokens WHERE hash = ? AND kind = ?'),
);

export function findToken(db: Database, hash: string, kind: TokenKind): TokenRow | undefined {
  const r = findStmt(db).get(hash, kind);
  return r ? toToken(r) : undefined;
}

/** Marks a refresh token as exchanged; false when someone else exchanged it first. */
export function markRotated(db: Database, hash: string, now: number): boolean {
  return (
    db
      .prepare('UPDATE auth_tokens SET rotated_at = ? WHERE hash = ? AND rotated_at IS NULL AND revoked_at IS NULL')
      .run(now, hash).changes === 1
  );
}

/** Revokes every token of a grant; returns how many were still live. */
export function revokeFamily(db: Database, family: string, now: number): number {
  return db.prepare('UPDATE auth_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL').run(now, family)
    .changes;
}

export function revokeClientTokens(db: Database, clientId: string, now: number): number {
  return writeTx(db, () => {
    db.prepare('UPDATE auth_codes SET used_at = ? WHERE client_id = ? AND used_at IS NULL').run(now, clientId);
    return db
      .prepare('UPDATE auth_tokens SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL')
      .run(now, clientId).changes;
  });
}

/** Customer (owner-consented) tokens of every client: a new owner password ends them all. */
export function revokeCustomerTokens(db: Database, now: number): number {
  return db.prepare('UPDATE auth_tokens SET revoked_at = ? WHERE customer = 1 AND revoked_at IS NULL').run(now).changes;
}

/** Drops codes and tokens that expired before `before`; kept a while so an expired token is told apart from an unknown one. */
export function pruneExpired(db: Database, before: number): number {
  return writeTx(db, () => {
    const codes = db.prepare('DELETE FROM auth_codes WHERE expires_at < ?').run(before).changes;
    return codes + db.prepare('DELETE FROM auth_tokens WHERE expires_at < ?').run(before).changes;
  });
}
