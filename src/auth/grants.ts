/**
 * POST /oauth2/token (RFC 6749 §4.1.3, §4.4, §6): client_credentials for partners,
 * authorization_code and refresh_token for apps acting for the site owner. Codes are single-use;
 * refresh tokens rotate, and presenting a spent one revokes its whole family (RFC 9700 §4.14.2).
 */
import { randomUUID } from 'node:crypto';
import { type ClientRow, findClient } from '../store/clients.js';
import { isStorageFault } from '../store/storage-faults.js';
import { findToken, insertToken, markRotated, revokeFamily, takeCode } from '../store/tokens.js';
import { guarded, type Hashing } from './attempts.js';
import { ACCESS_PREFIX, type AuthContext, REFRESH_PREFIX } from './context.js';
import { OAuthError } from './oauth-error.js';
import { verifierMatches } from './pkce.js';
import { type Attempt, clientIdentity, Refused } from './rate-limit.js';
import { formatScopes, notAllowed, OPENID, parseScopeParam, ScopeError } from './scopes.js';
import { randomSecret, sha256, verifySecret } from './secrets.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
  id_token?: string;
}

/** Form parameters of one request; each name at most once (RFC 6749 §3.2). */
export type FormParams = ReadonlyMap<string, string>;

/** invalid_client after HTTP Basic gets a Basic challenge back (RFC 6749 §5.2). */
export class ClientAuthError extends OAuthError {
  constructor(
    description: string,
    readonly usedBasic: boolean,
  ) {
    super('invalid_client', description);
  }
}

const GRANTS = ['client_credentials', 'authorization_code', 'refresh_token'] as const;
type Grant = (typeof GRANTS)[number];

interface BasicCredentials {
  id: string;
  secret: string;
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined with ':'. */
export function parseBasic(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (!m) throw new ClientAuthError('the Authorization header is not HTTP Basic credentials', true);
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new ClientAuthError('HTTP Basic credentials need client_id:client_secret', true);
  const unform = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      throw new ClientAuthError('HTTP Basic credentials are not form-urlencoded', true);
    }
  };
  return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
}

function required(params: FormParams, name: string): string {
  const v = params.get(name);
  if (v === undefined || v === '') throw new OAuthError('invalid_request', `${name} is required`);
  return v;
}

/** The client a request names, and its secret when it sent one; nothing is checked yet. */
function claimedClient(
  params: FormParams,
  authorization: string | undefined,
): { id: string; basic: BasicCredentials | undefined } {
  if (params.has('client_secret'))
    throw new OAuthError('invalid_request', 'send the client secret with HTTP Basic authentication, not in the form');
  const basic = parseBasic(authorization);
  const formId = params.get('client_id');
  if (basic && formId !== undefined && formId !== basic.id)
    throw new OAuthError('invalid_request', 'client_id in the form differs from the HTTP Basic user');
  const id = basic?.id ?? formId;
  if (!id) throw new ClientAuthError('no client credentials: send client_id and client_secret with HTTP Basic', false);
  return { id, basic };
}

/** Who is asking, proven by secret (confidential client) or named by client_id (public client). */
async function authenticateClient(
  ctx: AuthContext,
  claim: { id: string; basic: BasicCredentials | undefined },
  attempt: Attempt,
  hash: Hashing,
): Promise<ClientRow> {
  const { id, basic } = claim;
  const client = findClient(ctx.db, id);
  if (basic) {
    // the hash check runs for unknown and public clients too, so timing does not tell them apart
    const ok = await hash(() => verifySecret(basic.secret, client?.secretHash));
    if (ok && client) return client;
  } else if (client && client.secretHash === null) {
    return client;
  }
  attempt.fail();
  throw new ClientAuthError(
    basic ? 'unknown client or wrong secret' : 'this client must authenticate with HTTP Basic',
    basic !== undefined,
  );
}

function requestedScopes(params: FormParams, fallback: readonly string[], allowed: readonly string[]): string[] {
  const text = params.get('scope');
  if (text === undefined) return [...fallback];
  let scopes: string[];
  try {
    scopes = parseScopeParam(text);
  } catch (e) {
    if (e instanceof ScopeError) throw new OAuthError('invalid_scope', e.message);
    throw e;
  }
  const extra = notAllowed(scopes, allowed);
  if (extra.length > 0)
    throw new OAuthError('invalid_scope', `scope ${extra.join(' ')} is beyond what was granted to this client`);
  return scopes;
}

interface Issue {
  client: ClientRow;
  customer: boolean;
  scopes: string[];
  family: string;
  /** customer flow: a refresh token with these scopes, and an id_token */
  refresh?: { scopes: string[]; authTime: number; nonce: string | null };
}

function issue(ctx: AuthContext, what: Issue): TokenResponse {
  const now = ctx.now();
  const { accessTokenSeconds, refreshTokenDays } = ctx.config;
  const access = randomSecret(ACCESS_PREFIX);
  const base = { clientId: what.client.id, customer: what.customer, family: what.family, createdAt: now };
  const accessRow = {
    ...base,
    hash: sha256(access),
    kind: 'access' as const,
    scopes: what.scopes,
    authTime: what.refresh?.authTime ?? null,
    expiresAt: now + accessTokenSeconds * 1000,
  };
  try {
    insertToken(ctx.db, accessRow);
  } catch (err) {
    // a partner's sign-in survives a full disk: the token waits in memory (unsaved-tokens.ts)
    if (what.refresh || !isStorageFault(err)) throw err;
    ctx.storageFault?.(err);
    if (!ctx.unsaved.keep(accessRow, what.client.secretHash, now)) throw err;
    ctx.log.warn({ clientId: what.client.id }, 'token kept in memory: the database takes no writes now');
  }
  const out: TokenResponse = {
    access_token: access,
    token_type: 'Bearer',
    expires_in: accessTokenSeconds,
    scope: formatScopes(what.scopes),
  };
  if (what.refresh) {
    const refresh = randomSecret(REFRESH_PREFIX);
    insertToken(ctx.db, {
      ...base,
      hash: sha256(refresh),
      kind: 'refresh',
      scopes: what.refresh.scopes,
      authTime: what.refresh.authTime,
      expiresAt: now + refreshTokenDays * 86_400_000,
    });
    out.refresh_token = refresh;
    const iat = Math.floor(now / 1000);
    out.id_token = ctx.signer.sign({
      iss: ctx.issuer,
      sub: 'owner',
      aud: what.client.id,
      iat,
      exp: iat + accessTokenSeconds,
      auth_time: Math.floor(what.refresh.authTime / 1000),
      ...(what.refresh.nonce ? { nonce: what.refresh.nonce } : {}),
      site_id: ctx.siteId,
    });
  }
  return out;
}

/** A failed grant counts against the client and the address like a wrong secret does. */
function grantFailure(attempt: Attempt, description: string): OAuthError {
  attempt.fail();
  return new OAuthError('invalid_grant', description);
}

function clientCredentials(ctx: AuthContext, client: ClientRow, params: FormParams): TokenResponse {
  if (client.secretHash === null)
    throw new OAuthError(
      'unauthorized_client',
      'a public client cannot use client_credentials; use the authorization-code flow',
    );
  const defaults = client.scopes.filter((s) => s !== OPENID);
  const scopes = requestedScopes(params, defaults, client.scopes);
  return issue(ctx, { client, customer: false, scopes, family: randomUUID() });
}

function authorizationCode(ctx: AuthContext, client: ClientRow, params: FormParams, attempt: Attempt): TokenResponse {
  const code = required(params, 'code');
  const now = ctx.now();
  const row = takeCode(ctx.db, sha256(code), now);
  if (!row || row.clientId !== client.id) throw grantFailure(attempt, 'unknown authorization code');
  if (row.usedAt !== null) {
    // RFC 6749 §4.1.2: a replayed code revokes what it was exchanged for
    const revoked = revokeFamily(ctx.db, row.family, now);
    ctx.log.warn(
      { clientId: client.id, revokedTokens: revoked },
      'authorization code presented twice; its tokens are revoked',
    );
    throw grantFailure(attempt, 'authorization code was already used');
  }
  if (row.expiresAt <= now) throw grantFailure(attempt, 'authorization code expired; start the authorization again');
  const redirectUri = params.get('redirect_uri');
  if ((row.redirectGiven || redirectUri !== undefined) && redirectUri !== row.redirectUri) {
    throw grantFailure(attempt, 'redirect_uri differs from the one of the authorization request');
  }
  const verifier = params.get('code_verifier');
  if (row.codeChallenge !== null) {
    if (verifier === undefined)
      throw grantFailure(attempt, 'code_verifier is required: the authorization request carried a code_challenge');
    if (!verifierMatches(verifier, row.codeChallenge))
      throw grantFailure(attempt, 'code_verifier does not match the code_challenge');
  } else if (verifier !== undefined) {
    // RFC 9700 §2.1.1: a verifier without a challenge is a PKCE downgrade attempt
    throw grantFailure(attempt, 'code_verifier given but the authorization request had no code_challenge');
  }
  const scopes = row.scopes.filter((s) => client.scopes.includes(s));
  return issue(ctx, {
    client,
    customer: true,
    scopes,
    family: row.family,
    refresh: { scopes, authTime: row.authTime, nonce: row.nonce },
  });
}

function refreshToken(ctx: AuthContext, client: ClientRow, params: FormParams, attempt: Attempt): TokenResponse {
  const token = required(params, 'refresh_token');
  const now = ctx.now();
  const hash = sha256(token);
  const row = findToken(ctx.db, hash, 'refresh');
  if (!row || row.clientId !== client.id) throw grantFailure(attempt, 'unknown refresh token');
  if (row.revokedAt !== null) throw grantFailure(attempt, 'refresh token was revoked');
  const reuse = () => {
    const revoked = revokeFamily(ctx.db, row.family, now);
    ctx.log.warn(
      { clientId: client.id, revokedTokens: revoked },
      'a spent refresh token was presented again; its whole family is revoked',
    );
    return grantFailure(
      attempt,
      'refresh token was already used; every token of this grant is revoked, ask the owner to consent again',
    );
  };
  if (row.rotatedAt !== null) throw reuse();
  if (row.expiresAt <= now) throw grantFailure(attempt, 'refresh token expired; ask the owner to consent again');
  // RFC 6749 §6: a narrower scope may be asked for, never a wider one
  const scopes = requestedScopes(params, row.scopes, row.scopes);
  if (!markRotated(ctx.db, hash, now)) throw reuse();
  return issue(ctx, {
    client,
    customer: row.customer,
    scopes,
    family: row.family,
    refresh: { scopes: row.scopes, authTime: row.authTime ?? now, nonce: null },
  });
}

export async function tokenRequest(
  ctx: AuthContext,
  params: FormParams,
  authorization: string | undefined,
  address: string,
): Promise<TokenResponse> {
  const grant = params.get('grant_type');
  if (!grant) throw new OAuthError('invalid_request', `grant_type is required: one of ${GRANTS.join(', ')}`);
  if (!(GRANTS as readonly string[]).includes(grant))
    throw new OAuthError(
      'unsupported_grant_type',
      `grant_type '${grant.slice(0, 40)}' is not supported; use one of ${GRANTS.join(', ')}`,
    );
  const claim = claimedClient(params, authorization);
  const r = await guarded(ctx, { identity: clientIdentity(claim.id), address }, async (attempt, hash) => {
    const client = await authenticateClient(ctx, claim, attempt, hash);
    const tokens = storageGuarded(ctx, () => grantTokens(ctx, grant as Grant, client, params, attempt));
    attempt.succeed();
    return tokens;
  });
  if (r instanceof Refused) {
    const why = r.reason === 'busy' ? 'the gateway is busy checking other client secrets' : 'too many failed attempts';
    throw new OAuthError('temporarily_unavailable', `${why}; try again in ${r.retryAfter} s`, 429, r.retryAfter);
  }
  return r;
}

function grantTokens(
  ctx: AuthContext,
  grant: Grant,
  client: ClientRow,
  params: FormParams,
  attempt: Attempt,
): TokenResponse {
  switch (grant) {
    case 'client_credentials':
      return clientCredentials(ctx, client, params);
    case 'authorization_code':
      return authorizationCode(ctx, client, params, attempt);
    case 'refresh_token':
      return refreshToken(ctx, client, params, attempt);
  }
}

/** A grant the full or failing disk cannot record: 503 with the reason, never a 500 (docs/design.md "Field faults: what the numbers survive"). */
function storageGuarded<T>(ctx: AuthContext, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!isStorageFault(err)) throw err;
    ctx.storageFault?.(err);
    throw new OAuthError(
      'temporarily_unavailable',
      "the gateway's data disk takes no writes now (full or failing), and this grant must be recorded; try again later",
      503,
      60,
    );
  }
}
