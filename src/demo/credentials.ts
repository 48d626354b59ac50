/**
 * The demo's own client and owner, so a newcomer can call the API at once: registered on first
 * start, kept across restarts on the same data directory, and written to
 * `<dataDir>/demo-credentials.json` (mode 0600) for scripts and tests. Their hashes are of the
 * demo's strength (auth/secrets.ts): the plaintext is in that file anyway.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTHORIZE_PATH, TOKEN_PATH } from '../api/http/oauth.js';
import { addClient, assignDevices, findClient, rotateClientSecret } from '../auth/clients.js';
import { setOwnerPassword, verifyOwner } from '../auth/owner.js';
import { PERMISSIONS, wireScope } from '../auth/scopes.js';
import { verifySecret } from '../auth/secrets.js';
import type { Daemon } from '../main.js';

export const DEMO_CLIENT = 'demo-partner';
export const DEMO_OWNER = 'owner';
/** Nothing listens there: after consent the browser shows the code in its address bar. */
export const DEMO_REDIRECT = 'http://localhost/callback';

export interface DemoCredentials {
  apiUrl: string;
  tokenUrl: string;
  authorizeUrl: string;
  client: { id: string; secret: string; scopes: string[]; redirectUri: string };
  owner: { username: string; password: string };
  /** present when the API speaks HTTPS: pass certFile to curl --cacert */
  tls?: { fingerprint: string; certFile: string };
}

export const credentialsFile = (dataDir: string): string => join(dataDir, 'demo-credentials.json');

function previous(file: string): Partial<DemoCredentials> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoCredentials>;
  } catch {
    return {};
  }
}

export async function ensureDemoCredentials(daemon: Daemon): Promise<DemoCredentials> {
  const { db, config, site, tls } = daemon.ctx;
  const file = credentialsFile(config.dataDir);
  const prev = previous(file);
  const now = Date.now();
  const devices = [...site.devices.keys()];
  const scopes = PERMISSIONS.map(wireScope);

  let secret: string;
  const existing = findClient(db, DEMO_CLIENT);
  if (!existing) {
    secret = (
      await addClient(
        db,
        { id: DEMO_CLIENT, name: 'Demo partner app', scopes, redirectUris: [DEMO_REDIRECT], devices },
        now,
        undefined,
        'demo',
      )
    ).secret!;
  } else {
    const kept = prev.client?.secret;
    secret =
      kept && (await verifySecret(kept, existing.secretHash))
        ? kept
        : await rotateClientSecret(db, DEMO_CLIENT, now, 'demo');
    assignDevices(db, DEMO_CLIENT, devices);
  }

  let password = prev.owner?.username === DEMO_OWNER ? prev.owner.password : undefined;
  if (!password || !(await verifyOwner(db, DEMO_OWNER, password))) {
    password = randomBytes(12).toString('base64url');
    await setOwnerPassword(db, DEMO_OWNER, password, now, 'demo');
  }

  const creds: DemoCredentials = {
    apiUrl: daemon.url,
    tokenUrl: `${daemon.url}${TOKEN_PATH}`,
    authorizeUrl: `${daemon.url}${AUTHORIZE_PATH}`,
    client: { id: DEMO_CLIENT, secret, scopes, redirectUri: DEMO_REDIRECT },
    owner: { username: DEMO_OWNER, password },
    ...(tls.fingerprint && tls.certFile ? { tls: { fingerprint: tls.fingerprint, certFile: tls.certFile } } : {}),
  };
  writeFileSync(file, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  return creds;
}

/** The banner lines that show how to get a token and call the API with it. */
export function accessHelp(c: DemoCredentials, file: string, requests: string[]): string {
  const ca = c.tls ? ` --cacert '${c.tls.certFile}'` : '';
  const pkceNote = `${c.authorizeUrl}?response_type=code&client_id=${c.client.id}&state=demo&scope=svc/device.read%20svc/device.write`;
  return `Access (also in ${file}):
  partner client:        ${c.client.id}  secret ${c.client.secret}
  site owner:            ${c.owner.username}  password ${c.owner.password}${c.tls ? `\n  TLS fingerprint:       ${c.tls.fingerprint} (self-signed: curl --cacert ${c.tls.certFile})` : ''}

Get a token (valid an hour) and call the API:
  TOKEN=$(curl -s${ca} -u '${c.client.id}:${c.client.secret}' -d grant_type=client_credentials '${c.tokenUrl}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
${requests.map((r) => `  curl${ca} -H "Authorization: Bearer $TOKEN" '${r}'`).join('\n')}

The customer (owner) flow in a browser: open
  ${pkceNote}
log in as the owner, allow, and read the code from the address bar of the redirect to ${c.client.redirectUri}.
`;
}
