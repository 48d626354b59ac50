/**
 * Throw-away certificates as an IEEE 2030.5 PKI issues them, made with the openssl command line
 * (CI installs it, .ci/run): a SERCA (the root), a server certificate it signs for localhost and
 * 127.0.0.1, and device certificates as the standard has them: EC P-256, an empty subject and a
 * notAfter of 99991231235959Z ("no well-defined expiration", RFC 5280 §4.1.2.5, which IEEE 2030.5
 * §6.11 requires of device certificates), made from a CSR as an installer makes it
 * (docs/grid-operator.md). `openssl ca` is used because `x509 -req` cannot set that end date on
 * OpenSSL 3.0.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KeyPair, opensslIn } from './pki.js';

export { HAVE_OPENSSL } from './pki.js';

export interface CsipPki {
  dir: string;
  /** the SERCA: signs the server and the devices */
  serca: string;
  server: KeyPair;
  /** a device certificate: empty subject, no expiry */
  device: KeyPair;
  /** a second device of the same CA (another LFDI) */
  other: KeyPair;
  /** a device certificate signed by a CA nobody trusts */
  rogue: KeyPair;
  /** a device certificate with an RSA key */
  rsa: KeyPair;
  remove(): void;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

const CA_CNF = `[ca]
default_ca = d
[d]
database = db/index.txt
serial = db/serial
new_certs_dir = db
default_md = sha256
policy = p
unique_subject = no
copy_extensions = none
x509_extensions = ext
[p]
[ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyAgreement
extendedKeyUsage = clientAuth
`;

export function makeCsipPki(): CsipPki {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-csip-pki-'));
  const { ssl, p, ca, leaf } = opensslIn(dir);
  mkdirSync(p('db'));
  writeFileSync(p('db/index.txt'), '');
  writeFileSync(p('db/serial'), '01\n');
  writeFileSync(p('ca.cnf'), CA_CNF);
  const device = (name: string, caName: string, key: string[] = EC): KeyPair => {
    ssl('req', '-new', ...key, '-subj', '/', '-keyout', `${name}.key`, '-out', `${name}.csr`);
    ssl(
      'ca',
      '-batch',
      '-config',
      'ca.cnf',
      '-cert',
      `${caName}.pem`,
      '-keyfile',
      `${caName}.key`,
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.pem`,
      '-startdate',
      '20240101000000Z',
      '-enddate',
      '99991231235959Z',
      '-subj',
      '/',
      '-notext',
    );
    return { cert: p(`${name}.pem`), key: p(`${name}.key`) };
  };
  const serca = ca('serca', 'sitegw test SERCA');
  const server = leaf('server', 'localhost', 'serca', 'server');
  ca('rogue-ca', 'someone else');
  return {
    dir,
    serca,
    server,
    device: device('device', 'serca'),
    other: device('other', 'serca'),
    rogue: device('rogue', 'rogue-ca'),
    rsa: device('rsa', 'serca', ['-newkey', 'rsa:2048', '-nodes']),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
