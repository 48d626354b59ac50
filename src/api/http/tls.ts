/**
 * Whether the API speaks HTTPS, and with which certificate. Off loopback a token must never
 * cross the LAN in clear text, so HTTPS is the default there: with the installer's certificate
 * when site.yaml names one, otherwise with a self-signed one created on first start in
 * dataDir/tls and pinned by clients through its SHA-256 fingerprint. Plain HTTP off loopback
 * needs `http.insecure: true` and is warned about at every start.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { SiteConfig } from '../../config/types.js';
import { createSelfSigned } from './self-signed.js';

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export interface TlsSetup {
  /** options for fastify's `https`; absent = plain HTTP */
  https?: { cert: string; key: string };
  /** SHA-256 fingerprint of the certificate, colon-separated hex as browsers and openssl show it */
  fingerprint?: string;
  certFile?: string;
  selfSigned?: boolean;
}

export class TlsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlsError';
  }
}

export const selfSignedPaths = (dataDir: string) => ({
  cert: join(dataDir, 'tls', 'cert.pem'),
  key: join(dataDir, 'tls', 'key.pem'),
});

/** Names a LAN client may reach the box by: its host name, mDNS name and current addresses. */
function localNames(bindHost: string): string[] {
  const names = new Set<string>([hostname(), `${hostname()}.local`, 'localhost', '127.0.0.1', '::1']);
  if (bindHost !== '0.0.0.0' && bindHost !== '::') names.add(bindHost);
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (!a.internal && isIP(a.address) && !a.address.includes('%')) names.add(a.address);
  }
  return [...names].filter((n) => isIP(n) !== 0 || /^[A-Za-z0-9.-]{1,253}$/.test(n));
}

function read(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new TlsError(
      `cannot read the TLS ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** Loads a PEM pair and checks that it is a certificate with its own key. */
export function loadPair(certFile: string, keyFile: string): { cert: string; key: string; fingerprint: string } {
  const cert = read(certFile, 'certificate');
  const key = read(keyFile, 'key');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new TlsError(`${certFile} is not a PEM certificate: ${(e as Error).message}`);
  }
  let ok: boolean;
  try {
    ok = x509.checkPrivateKey(createPrivateKey(key));
  } catch (e) {
    throw new TlsError(`${keyFile} is not a PEM private key: ${(e as Error).message}`);
  }
  if (!ok) throw new TlsError(`${keyFile} is not the key of the certificate ${certFile}`);
  return { cert, key, fingerprint: x509.fingerprint256 };
}

/** The certificate files in use: the configured pair, or the self-signed pair in dataDir. */
export function certificatePaths(config: SiteConfig): { cert: string; key: string; selfSigned: boolean } {
  const { cert, key } = config.http.tls;
  if (cert && key) return { cert, key, selfSigned: false };
  return { ...selfSignedPaths(config.dataDir), selfSigned: true };
}

export function wantsTls(config: SiteConfig): boolean {
  const { host, tls, insecure } = config.http;
  return tls.mode === 'always' || (!isLoopback(host) && !insecure);
}

export function resolveTls(config: SiteConfig, log: Logger): TlsSetup {
  if (!wantsTls(config)) {
    if (!isLoopback(config.http.host)) {
      log.warn(
        { host: config.http.host },
        'http.insecure is set: the API serves plain HTTP on a LAN address, so access tokens and site data cross the network unencrypted',
      );
    }
    return {};
  }
  const paths = certificatePaths(config);
  if (paths.selfSigned && !existsSync(paths.cert)) {
    const names = [`sitegw-${config.site.id}`, ...localNames(config.http.host)];
    const pair = createSelfSigned(names);
    mkdirSync(join(config.dataDir, 'tls'), { recursive: true, mode: 0o700 });
    writeFileSync(paths.key, pair.keyPem, { mode: 0o600 });
    writeFileSync(paths.cert, pair.certPem, { mode: 0o644 });
    log.info({ certFile: paths.cert, names }, 'created a self-signed TLS certificate');
  }
  const pair = loadPair(paths.cert, paths.key);
  log.info({ certFile: paths.cert, fingerprint: pair.fingerprint, selfSigned: paths.selfSigned }, 'serving HTTPS');
  return {
    https: { cert: pair.cert, key: pair.key },
    fingerprint: pair.fingerprint,
    certFile: paths.cert,
    selfSigned: paths.selfSigned,
  };
}
