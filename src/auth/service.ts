/**
 * The token service as a feature of the daemon: start() loads (or creates) the id_token key and
 * starts pruning spent codes and tokens; everything else is the functions of this folder over
 * the context it builds. Token lifetimes run on real time, not the demo's accelerated site clock.
 */
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { AuthConfig } from '../config/types.js';
import type { Feature } from '../core/feature.js';
import { clientDevices, findClient } from '../store/clients.js';
import { loadKnownAddresses, saveKnownAddress } from '../store/known-addresses.js';
import { devicesPublishedTo } from '../store/publish-to.js';
import { pruneExpired } from '../store/tokens.js';
import { checkOwner, type OwnerCheck } from './attempts.js';
import { type AuthorizeRequest, decide, parseAuthorizeRequest, type RequestParams } from './authorize.js';
import { authorizeBearer, type BearerCheck, type Requirement, verifyBearer } from './bearer.js';
import { ConsentTickets } from './consent-ticket.js';
import type { AuthContext } from './context.js';
import { type FormParams, type TokenResponse, tokenRequest } from './grants.js';
import { HashGate, PI_HASHING } from './hash-gate.js';
import { IdTokenSigner, type PublicJwk } from './id-token.js';
import { partnerDevices } from './principal.js';
import { FailureLimiter } from './rate-limit.js';
import { UnsavedTokens } from './unsaved-tokens.js';
import { VerifiedTokens } from './verified-tokens.js';

export type { Principal } from './context.js';

export type OwnerLogin = OwnerCheck;

export interface AuthServiceOptions {
  db: Database;
  config: AuthConfig;
  dataDir: string;
  siteId: string;
  log: Logger;
  /** ms epoch; tests move it to expire codes and tokens */
  now?: () => number;
  /** told of a write the storage refused (health) */
  storageFault?: (err: unknown) => void;
  /** the devices behind a device (an inverter's battery blocks): a partner assigned it sees them too */
  devicesBehind?: (deviceId: string) => readonly string[];
}

/** Expired codes and tokens are kept this long so an expired token is told apart from an unknown one. */
const KEEP_EXPIRED_MS = 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/** The stream a customer grants through publishTo (docs/api.md "Device publish list"). */
export const REALTIME_STREAM = 'telemetry-realtime';

export class AuthService implements Feature {
  readonly name = 'auth';
  private ctx: AuthContext | null = null;
  private tickets: ConsentTickets | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: AuthServiceOptions) {}

  start(): void {
    const { db, config, dataDir, siteId, log } = this.opts;
    const now = this.opts.now ?? Date.now;
    this.ctx = {
      db,
      config,
      now,
      log,
      limiter: new FailureLimiter({
        maxFailures: config.maxFailedAttempts,
        windowMs: config.failureWindowSeconds * 1000,
        now,
        known: {
          load: (since) => loadKnownAddresses(db, since),
          save: (who, at, keep, since) => {
            // a sign-in that succeeded stays one when the disk refuses the note of it
            try {
              saveKnownAddress(db, { ...who, at }, keep, since);
            } catch (err) {
              log.warn({ err }, 'could not save a known sign-in address; it is kept in memory');
            }
          },
        },
      }),
      hashGate: new HashGate(PI_HASHING),
      verified: new VerifiedTokens(),
      unsaved: new UnsavedTokens(),
      storageFault: this.opts.storageFault,
      signer: IdTokenSigner.loadOrCreate(join(dataDir, 'auth', 'id-token-es256.pem')),
      issuer: `urn:sitegw:${siteId}`,
      siteId,
      devicesBehind: this.opts.devicesBehind ?? (() => []),
    };
    this.tickets = new ConsentTickets(now);
    this.prune();
    this.pruneTimer = setInterval(() => this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  stop(): void {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = null;
  }

  private get c(): AuthContext {
    if (!this.ctx) throw new Error('AuthService used before start()');
    return this.ctx;
  }

  private prune(): void {
    try {
      pruneExpired(this.c.db, this.c.now() - KEEP_EXPIRED_MS);
    } catch (err) {
      this.c.log.error({ err }, 'pruning expired tokens failed; retried in an hour');
    }
  }

  /** Tokens waiting in memory for the disk (unsaved-tokens.ts). */
  get unsavedTokens(): number {
    return this.ctx?.unsaved.size ?? 0;
  }

  /** Writes the tokens that waited in memory; throws (and keeps them) while the disk still refuses. */
  saveUnsavedTokens(): void {
    const n = this.c.unsaved.save(this.c.db, this.c.now());
    if (n > 0) this.c.log.info({ tokens: n }, 'tokens kept in memory are now in the database');
  }

  get jwks(): { keys: PublicJwk[] } {
    return { keys: [this.c.signer.jwk] };
  }

  get issuer(): string {
    return this.c.issuer;
  }

  token(params: FormParams, authorization: string | undefined, address: string): Promise<TokenResponse> {
    return tokenRequest(this.c, params, authorization, address);
  }

  authorizeRequest(params: RequestParams): AuthorizeRequest {
    return parseAuthorizeRequest(this.c, params);
  }

  /** The signed-in owner's answer: the redirect to the client, with a code or access_denied. */
  decide(req: AuthorizeRequest, allow: boolean): string {
    return decide(this.c, req, allow);
  }

  /**
   * The owner's user name and password, on the consent page or the installer's status page
   * (src/api/http/status.ts): one check, one set of failure limits and the hashing gate (attempts.ts).
   */
  ownerLogin(
    username: string,
    password: string,
    address: string,
    where: 'status page' | 'consent page' = 'status page',
  ): Promise<OwnerLogin> {
    return checkOwner(this.c, username, password, address, where);
  }

  /** The consent page's proof that the owner signed in for this request (consent-ticket.ts). */
  consentTicket(request: ReadonlyMap<string, string>): string {
    return this.t.issue(request);
  }

  takeConsentTicket(ticket: string, request: ReadonlyMap<string, string>): boolean {
    return this.t.take(ticket, request);
  }

  private get t(): ConsentTickets {
    if (!this.tickets) throw new Error('AuthService used before start()');
    return this.tickets;
  }

  /** Secret checks waiting and started so far (the attack tests watch the queue fill). */
  get hashing(): { waiting: number; started: number } {
    return { waiting: this.c.hashGate.waiting, started: this.c.hashGate.started };
  }

  /** Who the bearer token belongs to, without a scope check. */
  verify(authorization: string | undefined): BearerCheck {
    return verifyBearer(this.c, authorization);
  }

  /** The bearer token and the scope (and customer) requirement together: for the WebSocket upgrade. */
  check(authorization: string | undefined, need: Requirement): BearerCheck {
    return authorizeBearer(this.c, authorization, need);
  }

  clientExists(clientId: string): boolean {
    return findClient(this.c.db, clientId) !== undefined;
  }

  /** Devices a partner client sees: those the installer assigned, with the devices behind them. */
  partnerDevices(clientId: string): ReadonlySet<string> {
    return partnerDevices(clientDevices(this.c.db, clientId), this.c.devicesBehind);
  }

  /** Devices whose owner named the client with telemetry-realtime in publishTo. */
  customerDevices(clientId: string): ReadonlySet<string> {
    if (!this.clientExists(clientId)) return new Set();
    return new Set(devicesPublishedTo(this.c.db, clientId, REALTIME_STREAM));
  }

  now(): number {
    return this.c.now();
  }
}
