/**
 * An error of the token or authorization endpoint in RFC 6749 terms (§4.1.2.1, §5.2): the error
 * code a client library understands and a description a developer can act on.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** HTTP status at the token endpoint */
    readonly statusCode = error === 'invalid_client' ? 401 : error === 'temporarily_unavailable' ? 429 : 400,
    /** seconds, for a rate-limited attempt */
    readonly retryAfter?: number,
  ) {
    super(`${error}: ${description}`);
    this.name = 'OAuthError';
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
