/**
 * Throw-away certificates for the uplink TLS tests, made with the openssl command line (CI
 * installs it, .ci/run): a test CA, a broker certificate it signs for localhost and 127.0.0.1, a
 * client certificate for mutual TLS, and a second, unrelated ("rogue") CA with a broker and a
 * client certificate of its own for the refusal cases. EC P-256 keys: quick to make.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const HAVE_OPENSSL = !spawnSync('openssl', ['version']).error;

export interface KeyPair {
  cert: string;
  key: string;
}

export interface Pki {
  dir: string;
  /** the CA the gateway is told to trust */
  ca: string;
  /** broker certificate signed by `ca`, for DNS:localhost and IP:127.0.0.1 */
  server: KeyPair;
  /** client certificate signed by `ca` (CN sitegw-demo-site) */
  client: KeyPair;
  /** a CA nobody configured, and certificates it signed with the same names */
  rogueCa: string;
  rogueServer: KeyPair;
  rogueClient: KeyPair;
  remove(): void;
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** openssl run in `dir`: self-signed CAs and the server and client certificates they sign, by file name. */
export function opensslIn(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const p = (f: string) => join(dir, f);
  writeFileSync(p('server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  writeFileSync(p('client.ext'), 'extendedKeyUsage=clientAuth\n');

  const ca = (name: string, cn: string) => {
    ssl(
      'req',
      '-x509',
      ...KEY,
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
    );
    return p(`${name}.pem`);
  };
  const leaf = (name: string, cn: string, caName: string, ext: 'server' | 'client'): KeyPair => {
    ssl('req', ...KEY, '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${caName}.pem`,
      '-CAkey',
      `${caName}.key`,
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${ext}.ext`,
      '-out',
      `${name}.pem`,
    );
    return { cert: p(`${name}.pem`), key: p(`${name}.key`) };
  };
  return { ssl, p, ca, leaf };
}

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-pki-'));
  const { ca, leaf } = opensslIn(dir);
  const pki: Pki = {
    dir,
    ca: ca('ca', 'sitegw test CA'),
    server: leaf('server', 'localhost', 'ca', 'server'),
    client: leaf('client', 'sitegw-demo-site', 'ca', 'client'),
    rogueCa: ca('rogue-ca', 'someone else CA'),
    rogueServer: leaf('rogue-server', 'localhost', 'rogue-ca', 'server'),
    rogueClient: leaf('rogue-client', 'sitegw-demo-site', 'rogue-ca', 'client'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  return pki;
}
