/** `sitegw tls fingerprint`: the API's HTTPS certificate, for a client to pin. */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { certificatePaths, selfSignedPaths, wantsTls } from '../api/http/tls.js';
import { target, WHERE_OPTIONS, WHERE_USAGE } from './data-dir.js';
import { EXIT, type Output, printError, printUsage, stdio } from './output.js';

export async function tlsCommand(argv: string[], io: Output = stdio): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: WHERE_OPTIONS });
  if (sub !== 'fingerprint' || positionals.length > 0) {
    printUsage(io, [`sitegw tls fingerprint ${WHERE_USAGE}`]);
    return EXIT.USAGE;
  }
  const t = await target('tls fingerprint', values, io);
  if (typeof t === 'number') return t;
  const file = t.config ? certificatePaths(t.config).cert : selfSignedPaths(t.dataDir).cert;
  if (t.config && !wantsTls(t.config)) {
    io.err('note: with this site.yaml the API serves plain HTTP (loopback, or http.insecure)\n');
  }
  if (!existsSync(file)) {
    printError(io, 'tls fingerprint', `no certificate at ${file} yet: sitegw creates it on its first start with HTTPS`);
    return EXIT.FAILURE;
  }
  const cert = new X509Certificate(readFileSync(file));
  io.out(
    `SHA-256 fingerprint: ${cert.fingerprint256}\ncertificate:         ${file}\n` +
      `names:               ${cert.subjectAltName ?? cert.subject}\nvalid until:         ${cert.validTo}\n`,
  );
  return EXIT.OK;
}
