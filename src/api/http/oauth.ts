/**
 * The token service's HTTP face: POST /oauth2/token (RFC 6749 §3.2, JSON answers with
 * Cache-Control: no-store, errors as {"error","error_description"}), GET and POST
 * /oauth2/authorize (the owner signs in, then consents; then 302 to the client), and the
 * id_token keys at /oauth2/jwks. These routes are public; everything else is guarded.
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { refusalText } from '../../auth/attempts.js';
import {
  AuthorizePageError,
  AuthorizeRedirectError,
  type AuthorizeRequest,
  namedTarget,
  REQUEST_PARAMS,
  RequestParams,
} from '../../auth/authorize.js';
import { consentPage, errorPage, SIGN_IN, signInPage, TICKET_FIELD } from '../../auth/consent-page.js';
import { ClientAuthError } from '../../auth/grants.js';
import { OAuthError } from '../../auth/oauth-error.js';
import { namedError } from './body.js';
import type { ApiDeps } from './deps.js';
import {
  AuthorizeForm,
  AuthorizeGetResponses,
  AuthorizePostResponses,
  AuthorizeQuery,
  JwksResponses,
  TokenErrorResponses,
  TokenForm,
  TokenQuery,
  TokenResponseSchema,
} from './oauth-schemas.js';

export const TOKEN_PATH = '/oauth2/token';
export const AUTHORIZE_PATH = '/oauth2/authorize';
export const JWKS_PATH = '/oauth2/jwks';

const FORM = 'application/x-www-form-urlencoded';
/** A token request or a consent form is a few hundred bytes. */
const FORM_LIMIT = 16 * 1024;
/**
 * Parameters the token endpoint takes from the query string as the spec's partner example sends them
 * (docs/api.md "Partner: client credentials"); nothing secret.
 */
const QUERY_OK = new Set(['grant_type', 'scope']);

const PUBLIC = { auth: 'public' } as const;

function pairsOfQuery(req: FastifyRequest): [string, string][] {
  const q = req.url.indexOf('?');
  return q < 0 ? [] : [...new URLSearchParams(req.url.slice(q + 1))];
}

/** What the form parser makes of a body; a JSON array sent as the body is something else (it used to pass for pairs and crash) */
class FormPairs {
  constructor(readonly pairs: [string, string][]) {}
}

function pairsOfBody(body: unknown): [string, string][] {
  if (body === undefined || body === null || body === '') return [];
  if (body instanceof FormPairs) return body.pairs;
  throw new OAuthError('invalid_request', `send the parameters as ${FORM}`);
}

/** The token request's parameters: the form body, plus grant_type/scope from the query; each name once. */
function tokenParams(req: FastifyRequest): Map<string, string> {
  const out = new Map<string, string>();
  const add = (k: string, v: string) => {
    if (out.has(k)) throw new OAuthError('invalid_request', `${k} is given more than once`);
    out.set(k, v);
  };
  for (const [k, v] of pairsOfBody(req.body)) add(k, v);
  for (const [k, v] of pairsOfQuery(req)) {
    if (!QUERY_OK.has(k)) throw new OAuthError('invalid_request', `${k} must be sent in the form body, not in the URL`);
    add(k, v);
  }
  return out;
}

function sendOAuthError(reply: FastifyReply, e: OAuthError): FastifyReply {
  reply.code(e.statusCode).header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
  if (e instanceof ClientAuthError && e.usedBasic)
    reply.header('WWW-Authenticate', 'Basic realm="sitegw", charset="UTF-8"');
  if (e.retryAfter !== undefined) reply.header('Retry-After', String(e.retryAfter));
  return reply.send(e.body());
}

/** Pages of the authorization endpoint must not be framed (RFC 9700 §4.16), cached or leak the URL onwards. */
function htmlHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('X-Frame-Options', 'DENY')
    .header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    )
    .header('Referrer-Policy', 'no-referrer');
}

export const oauthRoutes: FastifyPluginAsync<ApiDeps> = async (app, { site, auth }) => {
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => {
    done(null, new FormPairs([...new URLSearchParams(body as string)]));
  });

  // anything that escapes a handler (an oversized body, a bad content type) still answers in the
  // endpoint's own language: RFC 6749 JSON at the token endpoint, a page at the authorize endpoint
  app.setErrorHandler((thrown: FastifyError, req, reply) => {
    const err = namedError(thrown);
    const status =
      typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'token service request failed');
    const message = status === 500 ? 'internal error; the gateway log has the details' : err.message;
    if (req.routeOptions.url === AUTHORIZE_PATH)
      return htmlHeaders(reply.code(status)).send(errorPage('Something went wrong', message));
    return sendOAuthError(reply, new OAuthError(status === 500 ? 'server_error' : 'invalid_request', message, status));
  });

  app.post(
    TOKEN_PATH,
    {
      config: PUBLIC,
      schema: {
        tags: ['oauth2'],
        summary: 'Token endpoint (RFC 6749): client_credentials, authorization_code, refresh_token',
        description: `Form-encoded (${FORM}); the client authenticates with HTTP Basic. grant_type and scope may be given in the query instead, with an empty form, as the spec's partner call does.`,
        querystring: TokenQuery,
        body: { content: { [FORM]: { schema: TokenForm } } },
        response: { 200: TokenResponseSchema, ...TokenErrorResponses },
      },
      // the form parser hands the handler pairs, which it checks itself (tokenParams, grants.ts);
      // the schemas above document them
      validatorCompiler: () => () => true,
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (req, reply) => {
      try {
        const params = tokenParams(req);
        const tokens = await auth.token(params, req.headers.authorization, req.ip);
        return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(tokens);
      } catch (e) {
        if (e instanceof OAuthError) return sendOAuthError(reply, e);
        throw e;
      }
    },
  );

  const pageError = (reply: FastifyReply, e: unknown): FastifyReply => {
    if (e instanceof AuthorizePageError)
      return htmlHeaders(reply.code(400)).send(errorPage('This sign-in link does not work', e.message));
    if (e instanceof AuthorizeRedirectError)
      return reply.code(302).header('Cache-Control', 'no-store').header('Location', e.location).send();
    throw e;
  };

  /** The sign-in page: the same for every client id, registered or not (authorize.ts). */
  const signIn = (
    reply: FastifyReply,
    params: RequestParams,
    view: { status?: number; error?: string; username?: string } = {},
  ): FastifyReply => {
    try {
      namedTarget(params);
    } catch (e) {
      return pageError(reply, e);
    }
    return htmlHeaders(reply.code(view.status ?? 200)).send(
      signInPage({ params: params.toMap(), siteName: site.config.site.name, action: AUTHORIZE_PATH, ...view }),
    );
  };

  app.get(
    AUTHORIZE_PATH,
    {
      config: PUBLIC,
      schema: {
        tags: ['oauth2'],
        summary: 'Authorization endpoint: the site owner signs in, then consents',
        querystring: AuthorizeQuery,
        response: AuthorizeGetResponses,
      },
      // the request is checked by authorize.ts, whose errors are pages; the schema documents it
      validatorCompiler: () => () => true,
    },
    async (req, reply) => signIn(reply, new RequestParams(pairsOfQuery(req))),
  );

  app.post(
    AUTHORIZE_PATH,
    {
      config: PUBLIC,
      schema: {
        tags: ['oauth2'],
        summary: 'The sign-in and consent forms post here; answers the consent page, then 302 to the redirect_uri',
        body: { content: { [FORM]: { schema: AuthorizeForm } } },
        response: AuthorizePostResponses,
      },
      validatorCompiler: () => () => true,
    },
    async (req, reply) => {
      const pairs = pairsOfBody(req.body);
      const isRequestParam = ([k]: [string, string]) => (REQUEST_PARAMS as readonly string[]).includes(k);
      const params = new RequestParams(pairs.filter(isRequestParam));
      const fields = new RequestParams(pairs.filter((p) => !isRequestParam(p))).toMap();
      const decision = fields.get('decision');
      const username = (fields.get('username') ?? '').slice(0, 64);
      if (decision !== SIGN_IN && decision !== 'allow' && decision !== 'deny')
        return signIn(reply, params, { status: 400, error: 'Sign in, then choose Allow or Deny.', username });
      try {
        namedTarget(params);
      } catch (e) {
        return pageError(reply, e);
      }

      const ticket = fields.get(TICKET_FIELD);
      if (ticket !== undefined) {
        if (!auth.takeConsentTicket(ticket, params.toMap()))
          return signIn(reply, params, { status: 400, error: 'This page has expired. Sign in again.' });
      } else {
        const owner = await auth.ownerLogin(username, fields.get('password') ?? '', req.ip, 'consent page');
        switch (owner.kind) {
          case 'failed':
            return signIn(reply, params, { status: 401, error: 'Wrong user name or password.', username });
          case 'rate-limited':
            reply.header('Retry-After', String(owner.retryAfter));
            return signIn(reply, params, { status: 429, error: refusalText(owner), username });
          case 'no-owner':
            return htmlHeaders(reply.code(403)).send(
              errorPage(
                'No site owner yet',
                'The installer has not set the owner password on this gateway yet (sitegw owner set-password).',
              ),
            );
          case 'ok':
            break;
        }
      }

      // the owner is signed in: only now is the client looked at
      let areq: AuthorizeRequest;
      try {
        areq = auth.authorizeRequest(params);
      } catch (e) {
        return pageError(reply, e);
      }
      if (decision === SIGN_IN) {
        const view = {
          req: areq,
          params: params.toMap(),
          siteName: site.config.site.name,
          action: AUTHORIZE_PATH,
          ticket: auth.consentTicket(params.toMap()),
        };
        return htmlHeaders(reply.code(200)).send(consentPage(view));
      }
      return reply
        .code(302)
        .header('Cache-Control', 'no-store')
        .header('Location', auth.decide(areq, decision === 'allow'))
        .send();
    },
  );

  app.get(
    JWKS_PATH,
    {
      config: PUBLIC,
      schema: {
        tags: ['oauth2'],
        summary: 'Public keys of id_token signatures (JWK Set, RFC 7517)',
        response: JwksResponses,
      },
    },
    async () => auth.jwks,
  );
};
