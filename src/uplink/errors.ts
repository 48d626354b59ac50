/**
 * Connection failures in words an installer can act on. MQTT refusals come as CONNACK return
 * codes (MQTT 3.1.1 §3.2.2.3) or reason codes (MQTT 5 §3.2.2.2); network and TLS failures as
 * Node's error codes.
 */
export type UplinkErrorCode =
  | 'AUTH_REFUSED'
  | 'NOT_AUTHORIZED'
  | 'CLIENT_ID_REJECTED'
  | 'PROTOCOL_VERSION'
  | 'BROKER_UNAVAILABLE'
  | 'TLS_FAILURE'
  | 'DNS_FAILURE'
  | 'CONNECTION_REFUSED'
  | 'UNREACHABLE'
  | 'TIMEOUT'
  | 'CONNECTION_LOST'
  | 'PUBLISH_REFUSED'
  | 'OTHER';

export interface UplinkError {
  code: UplinkErrorCode;
  /** one sentence for the installer: what happened and what to check */
  message: string;
  /** daemon clock, ms */
  at: number;
}

type Described = Omit<UplinkError, 'at'>;

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|ERR_OSSL_|HOSTNAME_MISMATCH)/;

/** The certificate files the connection was made with (uplink.tls), to name in the advice. */
export interface TlsFiles {
  ca?: string;
  cert?: string;
}

/** `host` is the broker's host:port as configured, without credentials. */
export function describeError(err: unknown, host: string, tls: TlsFiles = {}): Described {
  const e = err as { code?: unknown; message?: unknown };
  const code = e.code;
  const text = typeof e.message === 'string' ? e.message : String(err);
  if (typeof code === 'number') return refusal(code, host, text);
  if (typeof code === 'string') {
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL') {
      return {
        code: 'DNS_FAILURE',
        message: `the broker's name ${hostname(host)} cannot be looked up (DNS): check the spelling in uplink.url and that the gateway's network has a working DNS server`,
      };
    }
    if (code === 'ECONNREFUSED')
      return {
        code: 'CONNECTION_REFUSED',
        message: `nothing accepts connections at ${host}: check the port in uplink.url and that the broker is running`,
      };
    if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ENETDOWN') {
      return {
        code: 'UNREACHABLE',
        message: `${host} cannot be reached (${code}): check the gateway's internet connection (router, 4G stick) and firewalls`,
      };
    }
    if (code === 'ECONNRESET' || code === 'EPIPE')
      return {
        code: 'CONNECTION_LOST',
        message: `the connection to ${host} was cut (${code}); the gateway reconnects by itself`,
      };
    if (TLS_CODES.test(code) || /certificate|ssl|tls/i.test(text)) {
      return { code: 'TLS_FAILURE', message: `the secure connection to ${host} failed: ${tlsAdvice(code, text, tls)}` };
    }
  }
  if (/certificate|ssl|tls/i.test(text))
    return { code: 'TLS_FAILURE', message: `the secure connection to ${host} failed: ${text}` };
  return { code: 'OTHER', message: `${host}: ${text}` };
}

function refusal(rc: number, host: string, text: string): Described {
  switch (rc) {
    case 4:
    case 134:
    case 140:
      return {
        code: 'AUTH_REFUSED',
        message: `the broker ${host} refused the user name or password: check uplink.username and uplink.password with the broker operator`,
      };
    case 5:
    case 135:
      // mosquitto answers a wrong password with "not authorized" too
      return {
        code: 'AUTH_REFUSED',
        message: `the broker ${host} refused the login (not authorized): check uplink.username and uplink.password with the broker operator, and that it allows client id and user`,
      };
    case 138:
      return {
        code: 'NOT_AUTHORIZED',
        message: `the broker ${host} has banned this gateway: ask the broker operator why`,
      };
    case 2:
    case 133:
      return {
        code: 'CLIENT_ID_REJECTED',
        message: `the broker ${host} rejected the client id: set uplink.clientId to one the broker accepts`,
      };
    case 1:
    case 132:
      return {
        code: 'PROTOCOL_VERSION',
        message: `the broker ${host} does not speak this MQTT version: set uplink.protocolVersion to 4 (MQTT 3.1.1)`,
      };
    case 3:
    case 136:
    case 137:
    case 139:
      return {
        code: 'BROKER_UNAVAILABLE',
        message: `the broker ${host} is up but not taking connections now (${text}); the gateway keeps retrying`,
      };
    default:
      return { code: 'OTHER', message: `the broker ${host} refused the connection: ${text} (code ${rc})` };
  }
}

/** Alerts a broker sends when it refuses the client certificate it was given (RFC 8446 §6.2). */
const CLIENT_CERT_REFUSED =
  /^ERR_SSL_(TLSV1_ALERT_UNKNOWN_CA|SSLV3_ALERT_BAD_CERTIFICATE|SSLV3_ALERT_CERTIFICATE_UNKNOWN|SSLV3_ALERT_CERTIFICATE_EXPIRED|SSLV3_ALERT_CERTIFICATE_REVOKED|SSLV3_ALERT_UNSUPPORTED_CERTIFICATE|TLSV1_ALERT_ACCESS_DENIED)$/;

function tlsAdvice(code: string, text: string, tls: TlsFiles): string {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH')
    return `the broker's certificate is not for this host name (${text}); use the name the certificate was issued for in uplink.url`;
  if (code === 'CERT_HAS_EXPIRED')
    return "the broker's certificate has expired; the broker operator must renew it (or the gateway's clock is wrong)";
  if (code === 'CERT_NOT_YET_VALID') return "the broker's certificate is not valid yet; check the gateway's clock";
  if (
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN' ||
    code === 'CERT_UNTRUSTED' ||
    code.startsWith('UNABLE_TO_')
  ) {
    if (tls.ca)
      return `the broker's certificate is not signed by the CA in uplink.tls.ca (${tls.ca}, ${code}); get the broker's CA certificate from its operator, or the connection does not reach the real broker`;
    return `the broker's certificate is not signed by a trusted CA (${code}); give the broker's CA certificate as uplink.tls.ca`;
  }
  // TLS 1.3 says so; TLS 1.2 brokers end the handshake with a plain handshake_failure instead
  if (
    code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' ||
    (!tls.cert && code === 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE')
  ) {
    return `the broker wants a client certificate (${code}); give the certificate and key the broker operator issued for this gateway as uplink.tls.cert and uplink.tls.key`;
  }
  if (tls.cert && CLIENT_CERT_REFUSED.test(code)) {
    return `the broker refused the client certificate in uplink.tls.cert (${tls.cert}, ${code}): it is not signed by a CA the broker trusts, has expired or was revoked, or is not registered or activated at the broker; ask the broker operator`;
  }
  if (code.startsWith('ERR_OSSL_')) {
    return `a file of uplink.tls cannot be used (${text.trim()}, ${code}); give PEM files (text starting with -----BEGIN) and check them with 'sitegw check-config'`;
  }
  return `${text} (${code}); check uplink.url's scheme and port (mqtts:// is usually 8883) and uplink.tls`;
}

function hostname(hostPort: string): string {
  return hostPort.replace(/:\d+$/, '');
}

/** The broker URL for logs and health: scheme, host, port and path, never credentials. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
