/**
 * The TLS files site.yaml names (http.tls and uplink.tls) are read when it is loaded, so a wrong
 * path, a file the sitegw user may not read, a DER file, an encrypted key or a key that is not
 * the certificate's is named with its line by `sitegw check-config` and by `sitegw run` alike
 * (both load the file through loadConfig), instead of showing up later as a failed start or a
 * failed connection attempt. Validity dates are not checked here: a Pi without a clock battery
 * may load its config before NTP has set the date.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { type ConfigError, formatPath } from '../yaml/errors.js';
import { positionOf } from '../yaml/source-map.js';

type TlsKey = 'ca' | 'cert' | 'key';
type Problem = { key: TlsKey; message: string; hint: string };

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const PEM_HINT =
  'give the file in PEM form (text starting with -----BEGIN); a DER file converts with openssl x509 -inform der -in FILE.der -out FILE.pem';

/**
 * `tls` is the loaded section's files (paths absolute); `text` is site.yaml, for the lines. `at`
 * says where each file's key is in site.yaml: `section.tls.<key>` unless the section names its
 * files itself (`gridOperator.certificate`).
 */
export function tlsFileErrors(
  section: 'http' | 'uplink' | 'homeassistant' | 'gridOperator',
  tls: Partial<Record<TlsKey, string>>,
  text: string,
  at: (key: TlsKey) => string[] = (key) => [section, 'tls', key],
): ConfigError[] {
  const problems: Problem[] = [];
  const read = (key: TlsKey): Buffer | null => {
    const file = tls[key];
    if (file === undefined) return null;
    try {
      return readFileSync(file);
    } catch (e) {
      problems.push({ key, ...unreadable(file, e as NodeJS.ErrnoException) });
      return null;
    }
  };

  const caPem = read('ca');
  if (caPem) certificates('ca', tls.ca!, caPem, problems);
  const certPem = read('cert');
  const cert = certPem ? certificates('cert', tls.cert!, certPem, problems)[0] : undefined;
  const keyPem = read('key');
  const key = keyPem ? privateKey(tls.key!, keyPem, problems) : undefined;
  if (cert && key && !cert.checkPrivateKey(key)) {
    problems.push({
      key: 'key',
      message: `the key in ${tls.key} does not belong to the certificate in ${formatPath(at('cert'))} (${tls.cert})`,
      hint: 'give the key file that was made together with this certificate',
    });
  }
  if (problems.length === 0) return [];

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  return problems.map((p) => {
    const segments = at(p.key);
    const pos = positionOf(doc, lineCounter, segments);
    return {
      path: formatPath(segments),
      ...(pos ? { line: pos.line, column: pos.column } : {}),
      message: p.message,
      hint: p.hint,
    };
  });
}

function unreadable(file: string, e: NodeJS.ErrnoException): Omit<Problem, 'key'> {
  switch (e.code) {
    case 'ENOENT':
      return {
        message: `file not found (looked at ${file})`,
        hint: 'check the path; a relative path is taken from the folder of site.yaml',
      };
    case 'EACCES':
    case 'EPERM':
      return {
        message: `no permission to read ${file}`,
        hint: 'make the file readable by the user sitegw runs as (chown sitegw, or chmod 640 with its group)',
      };
    case 'EISDIR':
      return { message: `${file} is a folder, not a file`, hint: 'give the path of the PEM file inside it' };
    default:
      return { message: `cannot read ${file} (${e.code ?? e.message})`, hint: 'check the path and the file' };
  }
}

/** Every PEM certificate in the file, parsed; a problem when there is none or one is broken. */
function certificates(key: 'ca' | 'cert', file: string, pem: Buffer, problems: Problem[]): X509Certificate[] {
  const blocks = pem.toString('latin1').match(CERT_BLOCK) ?? [];
  if (blocks.length === 0) {
    problems.push({ key, message: `${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, hint: PEM_HINT });
    return [];
  }
  try {
    return blocks.map((b) => new X509Certificate(b));
  } catch (e) {
    problems.push({
      key,
      message: `a certificate in ${file} cannot be read (${(e as Error).message})`,
      hint: 'get the file again from whoever issued it; it may be cut short or edited',
    });
    return [];
  }
}

function privateKey(file: string, pem: Buffer, problems: Problem[]): KeyObject | undefined {
  const text = pem.toString('latin1');
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text)) {
    problems.push({
      key: 'key',
      message: `the key in ${file} is protected by a passphrase, which the gateway cannot type in`,
      hint: 'store it unencrypted and readable only by the sitegw user: openssl pkey -in FILE -out FILE.plain',
    });
    return undefined;
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    problems.push({
      key: 'key',
      message: `${file} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`,
      hint: PEM_HINT.replace('openssl x509', 'openssl pkey'),
    });
    return undefined;
  }
  try {
    return createPrivateKey(pem);
  } catch (e) {
    problems.push({
      key: 'key',
      message: `the private key in ${file} cannot be read (${(e as Error).message})`,
      hint: 'get the file again from whoever issued it; it may be cut short or edited',
    });
    return undefined;
  }
}
