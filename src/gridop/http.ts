/**
 * HTTPS to the grid operator's IEEE 2030.5 server: the device certificate as the client
 * certificate, the distributor's CA as the only trust when given, and the cipher suite IEEE 2030.5
 * requires offered first (TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8, §6.11). Node's OpenSSL (3.0 on Node
 * 20, 3.5 on 22 and 24) has it for TLS 1.2 but leaves it out of its default list, so it is named;
 * the default suites follow for servers that pick a GCM suite instead (test/gridop/client-e2e.test.ts
 * has a server that accepts only CCM-8 agreeing with this client).
 *
 * OpenSSL 3.2 and later place the CCM-8 suites at security level 0 (their tag is 64 bits), so on
 * Node 22 and 24 the suite is offered only with `@SECLEVEL=0` ("no ciphers available" otherwise).
 * That level would also let a weak server key through, so the server's key is held here to what
 * IEEE 2030.5 issues (an EC key of 256 bits) or, for a server on a default suite, RSA of 2048 bits.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { checkServerIdentity, DEFAULT_CIPHERS, type PeerCertificate } from 'node:tls';
import { GridOpError } from './errors.js';

export const SEP_CONTENT_TYPE = 'application/sep+xml';
export const CCM8_SUITE = 'ECDHE-ECDSA-AES128-CCM8';
export const CLIENT_CIPHERS = `${CCM8_SUITE}:${DEFAULT_CIPHERS}:@SECLEVEL=0`;

/** The host check, then the key strength security level 0 no longer checks (see above). */
export function checkServer(host: string, cert: PeerCertificate): Error | undefined {
  const wrongHost = checkServerIdentity(host, cert);
  if (wrongHost) return wrongHost;
  const ec = Boolean(cert.asn1Curve || cert.nistCurve);
  const least = ec ? 256 : 2048;
  const bits = cert.bits ?? 0;
  if (bits < least) return new Error(`the server's ${ec ? 'EC' : 'RSA'} key has ${bits} bits, fewer than ${least}`);
  return undefined;
}
/** a body larger than this is refused: a page of controls is a few kB */
export const MAX_BODY_BYTES = 1 << 20;

export interface SepHttpOptions {
  /** the discovery URL; every href is resolved against it */
  base: string;
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  timeoutMs?: number;
}

export interface SepResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export class SepHttp {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  readonly base: URL;

  constructor(opts: SepHttpOptions) {
    this.base = new URL(opts.base);
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.agent = new Agent({
      cert: opts.cert,
      key: opts.key,
      ...(opts.ca ? { ca: opts.ca } : {}),
      ciphers: CLIENT_CIPHERS,
      checkServerIdentity: checkServer,
      minVersion: 'TLSv1.2',
      keepAlive: true,
      maxSockets: 2,
    });
  }

  /** An href of the server as a URL (hrefs are usually paths). */
  url(href: string): URL {
    return new URL(href, this.base);
  }

  request(method: 'GET' | 'POST' | 'PUT', href: string, body?: string): Promise<SepResponse> {
    const url = this.url(href);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            Accept: SEP_CONTENT_TYPE,
            'User-Agent': 'sitegw',
            ...(body !== undefined
              ? { 'Content-Type': SEP_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body) }
              : {}),
          },
          timeout: this.timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY_BYTES) {
              req.destroy(
                new GridOpError('GRIDOP_INVALID_XML', `${method} ${url.pathname}: body over ${MAX_BODY_BYTES} bytes`),
              );
              return;
            }
            chunks.push(c);
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', (e) => reject(unreachable(method, url, e)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', (e) => reject(e instanceof GridOpError ? e : unreachable(method, url, e)));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function unreachable(method: string, url: URL, e: Error & { code?: string }): GridOpError {
  return new GridOpError('GRIDOP_UNREACHABLE', `${method} ${url.href}: ${e.code ? `${e.code} ` : ''}${e.message}`);
}
