/**
 * Owner sessions for the installer's status page. After the owner's password is checked once
 * (AuthService.ownerLogin: the consent page's check and failure limits), the browser holds a
 * random session id in a cookie; the server keeps only its SHA-256. Why a session and not HTTP
 * Basic: Basic would re-run the slow password hash on every poll of the page (seconds of CPU a
 * minute on a Pi) and cannot log out.
 *
 * The cookie is HttpOnly, SameSite=Strict (a page of another site cannot make the browser send
 * it, which is the CSRF defence for the read-only page), Secure under HTTPS, Path=/. Sessions
 * live in memory: a restart logs the owner out. A new owner password ends every session.
 */
import type { Database } from 'better-sqlite3';
import type { FastifyRequest } from 'fastify';
import { randomSecret, sha256 } from '../../auth/secrets.js';
import { getOwner } from '../../store/owner.js';

export const SESSION_COOKIE = 'sitegw_session';
const LIFETIME_MS = 12 * 3_600_000;
/** a handful of browsers per installer; the oldest session goes first */
const MAX_SESSIONS = 16;

export interface Session {
  expiresAt: number;
  /** the owner's password hash when the session began: a new password ends the session */
  ownerStamp: string;
}

/** Sessions by the SHA-256 of their id; `sitegw run` keeps one across its restarts (setup.ts). */
export type SessionStore = Map<string, Session>;

export interface SessionOptions {
  db: Database;
  /** where sessions live; default a new one (a restart then signs the owner out) */
  store?: SessionStore;
  https: boolean;
  now?: () => number;
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export class OwnerSessions {
  private readonly sessions: SessionStore;

  constructor(private readonly opts: SessionOptions) {
    this.sessions = opts.store ?? new Map();
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private stamp(): string | undefined {
    return getOwner(this.opts.db)?.passwordHash;
  }

  /** Starts a session (call after the password was checked); returns the Set-Cookie value. */
  create(): string {
    const stamp = this.stamp();
    if (stamp === undefined) throw new Error('no site owner is set');
    const id = randomSecret('sgw_ss_');
    this.sessions.set(sha256(id), { expiresAt: this.now() + LIFETIME_MS, ownerStamp: stamp });
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return this.cookie(id, Math.floor(LIFETIME_MS / 1000));
  }

  check(req: FastifyRequest): boolean {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (!id || id.length > 200) return false;
    const key = sha256(id);
    const s = this.sessions.get(key);
    if (!s) return false;
    if (s.expiresAt <= this.now() || s.ownerStamp !== this.stamp()) {
      this.sessions.delete(key);
      return false;
    }
    return true;
  }

  /** Ends the request's session; returns the Set-Cookie value that clears the cookie. */
  destroy(req: FastifyRequest): string {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (id) this.sessions.delete(sha256(id));
    return this.cookie('', 0);
  }

  private cookie(value: string, maxAge: number): string {
    return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${this.opts.https ? '; Secure' : ''}`;
  }
}
