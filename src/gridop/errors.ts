/** Named failures of the grid operator's client: logged with their code, shown on health, never a crash. */
export type GridOpErrorCode =
  /** the server could not be reached (DNS, refused, timeout) or TLS failed */
  | 'GRIDOP_UNREACHABLE'
  /** an HTTP status other than the one the request expects */
  | 'GRIDOP_HTTP_STATUS'
  /** a body that is not well-formed XML or does not validate against the schemas */
  | 'GRIDOP_INVALID_XML'
  /** a valid body that lacks what the client needs (no EndDeviceListLink, no FSA link, …) */
  | 'GRIDOP_MISSING_LINK'
  /** the server lists no EndDevice of this LFDI and refused to register one */
  | 'GRIDOP_NOT_REGISTERED'
  /** xmllint (Debian libxml2-utils) is not installed, so bodies cannot be validated */
  | 'GRIDOP_NO_XMLLINT';

export class GridOpError extends Error {
  constructor(
    readonly code: GridOpErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'GridOpError';
  }
}
