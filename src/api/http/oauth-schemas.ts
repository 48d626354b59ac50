/**
 * The OpenAPI description of POST /oauth2/token (RFC 6749 §4.1.3, §4.4.2, §6; §5.1 and §5.2 for
 * the answers). The handler reads the form itself (oauth.ts), so these schemas only document.
 */
const str = (description: string) => ({ type: 'string', description }) as const;

const GRANT_TYPE = {
  type: 'string',
  enum: ['client_credentials', 'authorization_code', 'refresh_token'],
  description: 'required, in the form or in the query string (not both)',
} as const;
const SCOPE = str(
  'space-separated scopes (svc/device.read, svc/device.write, …); in the form or in the query string (not both)',
);

/**
 * The parameters the token endpoint also takes from the query, as the spec's partner call sends
 * them (grant_type in the query, an empty form: docs/api.md "Partner: client credentials").
 */
export const TokenQuery = { type: 'object', properties: { grant_type: GRANT_TYPE, scope: SCOPE } } as const;

/** grant_type is not required here: the spec's partner call sends it in the query with an empty form. */
export const TokenForm = {
  type: 'object',
  properties: {
    grant_type: GRANT_TYPE,
    scope: SCOPE,
    client_id: str('optional: the client authenticates with HTTP Basic; when given it must equal the Basic user'),
    code: str('authorization_code: the code from the redirect'),
    redirect_uri: str('authorization_code: the redirect_uri of the authorization request, when it carried one'),
    code_verifier: str(
      'authorization_code: the PKCE verifier (RFC 7636), when the authorization request carried a code_challenge',
    ),
    refresh_token: str('refresh_token: the refresh token'),
  },
  additionalProperties: false,
} as const;

export const TokenResponseSchema = {
  description: 'Token response (RFC 6749 §5.1)',
  type: 'object',
  properties: {
    access_token: str('sent as a Bearer token'),
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', description: 'lifetime of the access token, seconds' },
    scope: str('the granted scopes, space-separated'),
    refresh_token: str('authorization_code and refresh_token grants only'),
    id_token: str(
      'authorization_code and refresh_token grants (the customer flow), whether or not openid was asked for; never client_credentials',
    ),
  },
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
  additionalProperties: false,
} as const;

const OAuthErrorBody = (description: string) =>
  ({
    description,
    type: 'object',
    properties: {
      error: {
        type: 'string',
        enum: [
          'invalid_request',
          'invalid_client',
          'invalid_grant',
          'unauthorized_client',
          'unsupported_grant_type',
          'invalid_scope',
          'temporarily_unavailable',
          'server_error',
        ],
      },
      error_description: { type: 'string' },
    },
    required: ['error', 'error_description'],
    additionalProperties: false,
  }) as const;

export const TokenErrorResponses = {
  400: OAuthErrorBody(
    'Error response (RFC 6749 §5.2): invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type or invalid_scope',
  ),
  401: OAuthErrorBody(
    'invalid_client: client authentication failed (WWW-Authenticate: Basic when HTTP Basic was used)',
  ),
  413: OAuthErrorBody('invalid_request: the form is larger than 16 kB'),
  415: OAuthErrorBody('invalid_request: the body is not application/x-www-form-urlencoded'),
  429: OAuthErrorBody('temporarily_unavailable: too many failed attempts; Retry-After says when to try again'),
  503: OAuthErrorBody(
    "temporarily_unavailable: the gateway's data disk takes no writes now and this grant must be recorded (a code or refresh token spent); Retry-After says when to try again",
  ),
} as const;

const page = (description: string) =>
  ({ description, content: { 'text/html; charset=utf-8': { schema: { type: 'string' } } } }) as const;
const redirect = {
  description: 'To the redirect_uri with code and state, or error and state (RFC 6749 §4.1.2)',
  headers: { Location: { type: 'string', description: 'the redirect_uri with its parameters' } },
} as const;

/** GET /oauth2/authorize: the sign-in page, or an error page for a request that names no usable client or redirect. */
export const AuthorizeGetResponses = {
  200: page('The sign-in page'),
  400: page('An error page: the request names no registered client or redirect_uri, so nothing is redirected'),
} as const;

/** POST /oauth2/authorize: the sign-in and consent forms. */
export const AuthorizePostResponses = {
  200: page('The consent page, after a successful sign-in'),
  302: redirect,
  400: page('The sign-in page again (expired page, no decision) or an error page'),
  401: page('The sign-in page again: wrong user name or password'),
  403: page('No site owner has been set on this gateway yet'),
  429: page('The sign-in page again: too many failed attempts; Retry-After says when to try again'),
} as const;

export const JwksResponses = {
  200: {
    description: 'JWK Set (RFC 7517) of the id_token signing keys',
    type: 'object',
    properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true } } },
    required: ['keys'],
  },
} as const;

const REQUEST_FIELDS = {
  response_type: { type: 'string', enum: ['code'] },
  client_id: str('the registered client'),
  redirect_uri: str('one of the client’s registered redirect URIs (exact match); may be left out when it has only one'),
  state: str('returned unchanged with the code'),
  scope: str('space-separated scopes'),
  code_challenge: str('PKCE (RFC 7636); required for public clients'),
  code_challenge_method: { type: 'string', enum: ['S256'] },
  nonce: str('OpenID Connect: echoed in the id_token'),
} as const;

/** The authorization request (RFC 6749 §4.1.1), in the query of GET /oauth2/authorize. */
export const AuthorizeQuery = { type: 'object', properties: REQUEST_FIELDS, required: ['client_id'] } as const;

/** The sign-in and consent forms: the authorization request again as hidden fields, plus the owner's input. */
export const AuthorizeForm = {
  type: 'object',
  properties: {
    ...REQUEST_FIELDS,
    username: str('the site owner'),
    password: str('the site owner’s password (sign-in form)'),
    decision: { type: 'string', enum: ['sign-in', 'allow', 'deny'] },
    consent_ticket: str('from the consent page: the owner signed in for this request'),
  },
  required: ['client_id', 'decision'],
} as const;
