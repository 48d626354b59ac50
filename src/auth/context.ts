import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { AuthConfig } from '../config/types.js';
import type { HashGate } from './hash-gate.js';
import type { IdTokenSigner } from './id-token.js';
import type { FailureLimiter } from './rate-limit.js';
import type { UnsavedTokens } from './unsaved-tokens.js';
import type { VerifiedTokens } from './verified-tokens.js';

/** What the grant, authorization and bearer functions share; AuthService builds it on start(). */
export interface AuthContext {
  db: Database;
  config: AuthConfig;
  /** real time, ms: token lifetimes are real seconds even when the demo's site clock runs fast */
  now: () => number;
  log: Logger;
  limiter: FailureLimiter;
  /** every secret check of a request runs through it (attempts.ts) */
  hashGate: HashGate;
  /** bearer tokens that checked out, while the database is unchanged */
  verified: VerifiedTokens;
  /** access tokens issued while the disk took no writes (unsaved-tokens.ts) */
  unsaved: UnsavedTokens;
  /** told of a write the storage refused (health shows it within a poll) */
  storageFault?: (err: unknown) => void;
  signer: IdTokenSigner;
  /** `iss` of id_tokens */
  issuer: string;
  siteId: string;
  /** the devices behind a device a partner was assigned (an inverter's battery blocks) */
  devicesBehind: (deviceId: string) => readonly string[];
}

export type { Principal } from './principal.js';

export const ACCESS_PREFIX = 'sgw_at_';
export const REFRESH_PREFIX = 'sgw_rt_';
export const CODE_PREFIX = 'sgw_ac_';
