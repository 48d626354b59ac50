/**
 * The authorization endpoint (RFC 6749 §4.1.1–4.1.2): checking an authorization request, and
 * turning the owner's decision on the consent page into a redirect with a code or an error.
 * While the client or its redirect URI is in doubt nothing is redirected (§4.1.2.1, RFC 9700
 * §4.11): the owner sees an error page instead, so the endpoint is no open redirector.
 *
 * Nothing about the client is looked at before the owner's password checked out: until then
 * every request that names a client gets the same sign-in page, so a visitor cannot learn which
 * client ids exist, their names or their redirect URIs (issue 14, finding 4).
 */
import { randomUUID } from 'node:crypto';
import { type ClientRow, findClient } from '../store/clients.js';
import { insertCode } from '../store/tokens.js';
import { type AuthContext, CODE_PREFIX } from './context.js';
import type { OAuthErrorCode } from './oauth-error.js';
import { CHALLENGE } from './pkce.js';
import { notAllowed, parseScopeParam, ScopeError } from './scopes.js';
import { randomSecret, sha256 } from './secrets.js';

export interface AuthorizeRequest {
  client: ClientRow;
  redirectUri: string;
  redirectGiven: boolean;
  state: string | undefined;
  scopes: string[];
  codeChallenge: string | null;
  nonce: string | null;
}

/** A request that cannot be trusted with a redirect: shown to the owner as a page. */
export class AuthorizePageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthorizePageError';
  }
}

/** A request error the client is told about at its (verified) redirect URI. */
export class AuthorizeRedirectError extends Error {
  constructor(
    readonly location: string,
    readonly error: OAuthErrorCode,
  ) {
    super(error);
    this.name = 'AuthorizeRedirectError';
  }
}

/** The parameters a consent form carries back, so the POST is checked exactly like the GET. */
export const REQUEST_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'scope',
  'code_challenge',
  'code_challenge_method',
  'nonce',
] as const;

const MAX_STATE = 1000;
const MAX_NONCE = 200;

export function redirectTo(uri: string, params: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
  return u.toString();
}

/** Parameters as given; a name that appears twice is remembered as such (RFC 6749 §3.1). */
export class RequestParams {
  private readonly values = new Map<string, string>();
  private readonly repeated = new Set<string>();

  constructor(pairs: Iterable<[string, string]>) {
    for (const [k, v] of pairs) {
      if (this.values.has(k)) this.repeated.add(k);
      else this.values.set(k, v);
    }
  }

  /** undefined when absent; throws the name when it was repeated */
  get(name: string): string | undefined {
    if (this.repeated.has(name)) throw new RepeatedParam(name);
    const v = this.values.get(name);
    return v === '' ? undefined : v;
  }

  firstRepeated(): string | undefined {
    return this.repeated.values().next().value;
  }

  toMap(): Map<string, string> {
    return new Map(this.values);
  }
}

class RepeatedParam extends Error {
  constructor(readonly param: string) {
    super(`${param} is given more than once`);
  }
}

/**
 * What can be said of a request before the owner signs in: only its own shape, nothing that
 * depends on the registered clients. Throws AuthorizePageError.
 */
export function namedTarget(p: RequestParams): { clientId: string; given: string | undefined } {
  let clientId: string | undefined;
  let given: string | undefined;
  try {
    clientId = p.get('client_id');
    given = p.get('redirect_uri');
  } catch (e) {
    if (e instanceof RepeatedParam) throw new AuthorizePageError(e.message);
    throw e;
  }
  if (!clientId) throw new AuthorizePageError('the request names no client (client_id is missing)');
  return { clientId, given };
}

/** client_id and redirect_uri: errors here are shown, never redirected. */
function trustedTarget(
  ctx: AuthContext,
  p: RequestParams,
): { client: ClientRow; redirectUri: string; redirectGiven: boolean } {
  const { clientId, given } = namedTarget(p);
  const client = findClient(ctx.db, clientId);
  if (!client) throw new AuthorizePageError(`no app '${clientId.slice(0, 64)}' is registered on this gateway`);
  if (client.redirectUris.length === 0)
    throw new AuthorizePageError(`the app '${client.name}' is not registered for sign-in (it has no redirect URI)`);
  if (given !== undefined) {
    // exact string comparison (RFC 9700 §2.1): no prefix, no pattern
    if (!client.redirectUris.includes(given))
      throw new AuthorizePageError(`the return address of this request is not one registered for '${client.name}'`);
    return { client, redirectUri: given, redirectGiven: true };
  }
  if (client.redirectUris.length > 1)
    throw new AuthorizePageError(
      `'${client.name}' has several return addresses, and the request names none (redirect_uri)`,
    );
  return { client, redirectUri: client.redirectUris[0]!, redirectGiven: false };
}

/** Checks an authorization request; throws AuthorizePageError or AuthorizeRedirectError. */
export function parseAuthorizeRequest(ctx: AuthContext, p: RequestParams): AuthorizeRequest {
  const { client, redirectUri, redirectGiven } = trustedTarget(ctx, p);
  let state: string | undefined;
  const fail = (error: OAuthErrorCode, description: string): never => {
    throw new AuthorizeRedirectError(redirectTo(redirectUri, { error, error_description: description, state }), error);
  };
  try {
    state = p.get('state');
    if (state !== undefined && state.length > MAX_STATE) {
      state = undefined;
      fail('invalid_request', `state is longer than ${MAX_STATE} characters`);
    }
    const repeated = p.firstRepeated();
    if (repeated) fail('invalid_request', `${repeated} is given more than once`);
    const responseType = p.get('response_type');
    if (!responseType) fail('invalid_request', 'response_type is required; use code');
    if (responseType !== 'code') fail('unsupported_response_type', 'only response_type=code is supported');

    let scopes = client.scopes;
    const scopeText = p.get('scope');
    if (scopeText !== undefined) {
      try {
        scopes = parseScopeParam(scopeText);
      } catch (e) {
        if (e instanceof ScopeError) fail('invalid_scope', e.message);
        throw e;
      }
      const extra = notAllowed(scopes, client.scopes);
      if (extra.length > 0) fail('invalid_scope', `scope ${extra.join(' ')} is not allowed for this client`);
    }

    const challenge = p.get('code_challenge') ?? null;
    const method = p.get('code_challenge_method');
    if (method !== undefined && method !== 'S256') fail('invalid_request', 'code_challenge_method must be S256');
    if (method !== undefined && challenge === null)
      fail('invalid_request', 'code_challenge_method given without code_challenge');
    if (challenge !== null && method === undefined)
      fail('invalid_request', 'code_challenge_method is required; use S256');
    if (challenge !== null && !CHALLENGE.test(challenge))
      fail('invalid_request', 'code_challenge must be BASE64URL(SHA-256(code_verifier)), 43 characters');
    if (challenge === null && client.secretHash === null)
      fail('invalid_request', 'PKCE is required for this client: send code_challenge and code_challenge_method=S256');

    const nonce = p.get('nonce') ?? null;
    if (nonce !== null && nonce.length > MAX_NONCE)
      fail('invalid_request', `nonce is longer than ${MAX_NONCE} characters`);
    return { client, redirectUri, redirectGiven, state, scopes, codeChallenge: challenge, nonce };
  } catch (e) {
    if (e instanceof RepeatedParam) fail('invalid_request', e.message);
    throw e;
  }
}

/** The signed-in owner's answer to a checked request: where the browser goes next. */
export function decide(ctx: AuthContext, req: AuthorizeRequest, allow: boolean): string {
  if (!allow)
    return redirectTo(req.redirectUri, {
      error: 'access_denied',
      error_description: 'the owner declined',
      state: req.state,
    });
  const now = ctx.now();
  const code = randomSecret(CODE_PREFIX);
  insertCode(ctx.db, {
    hash: sha256(code),
    clientId: req.client.id,
    redirectUri: req.redirectUri,
    redirectGiven: req.redirectGiven,
    scopes: req.scopes,
    codeChallenge: req.codeChallenge,
    nonce: req.nonce,
    family: randomUUID(),
    authTime: now,
    expiresAt: now + ctx.config.codeSeconds * 1000,
  });
  ctx.log.info({ clientId: req.client.id, scopes: req.scopes }, 'owner granted access');
  return redirectTo(req.redirectUri, { code, state: req.state });
}
