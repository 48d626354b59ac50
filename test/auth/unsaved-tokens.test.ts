/**
 * Sign-in while the database takes no writes (issue 27, finding 7: a full disk answered
 * POST /oauth2/token with 500). The service runs on a read-only connection to a real SQLite
 * file (SQLITE_READONLY: a storage fault, as SQLITE_FULL is); the installer's changes go through
 * a second, writable one, as `sitegw clients` does in its own process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addClient, removeClient, rotateClientSecret } from '../../src/auth/clients.js';
import { OAuthError } from '../../src/auth/oauth-error.js';
import { sha256 } from '../../src/auth/secrets.js';
import { AuthService } from '../../src/auth/service.js';
import { silentLogger } from '../../src/core/log.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { type Database, openDatabase, openReadOnly } from '../../src/store/db.js';
import { isStorageFault } from '../../src/store/storage-faults.js';
import { findToken, insertCode } from '../../src/store/tokens.js';

const config = demoSiteConfig(
  { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
  { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 1 },
);

let dir: string;
let rw: Database;
let ro: Database;
let secret: string;
let faults: unknown[];
let auth: AuthService;
const basic = (id: string, s: string) => `Basic ${Buffer.from(`${id}:${s}`).toString('base64')}`;
const signIn = () => auth.token(new Map([['grant_type', 'client_credentials']]), basic('app', secret), '127.0.0.1');

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sitegw-unsaved-'));
  const file = join(dir, 'sitegw.db');
  rw = openDatabase(file);
  secret = (await addClient(rw, { id: 'app', name: 'App', scopes: ['device.read'], devices: ['inverter'] }, 1)).secret!;
  ro = openReadOnly(file);
  faults = [];
  auth = new AuthService({
    db: ro,
    config: config.auth,
    dataDir: dir,
    siteId: 'home',
    log: silentLogger(),
    storageFault: (err) => faults.push(err),
  });
  auth.start();
});
afterEach(() => {
  auth.stop();
  ro.close();
  rw.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tokens while the disk takes no writes', () => {
  it('a partner signs in, its token works, health hears of the failed write', async () => {
    const t = await signIn();
    expect(t.access_token).toMatch(/^sgw_at_/);
    expect(faults).toHaveLength(1);
    expect(isStorageFault(faults[0])).toBe(true);
    expect(auth.unsavedTokens).toBe(1);
    const check = auth.check(`Bearer ${t.access_token}`, { permission: 'device.read' });
    expect(check.ok).toBe(true);
    expect(findToken(rw, sha256(t.access_token), 'access')).toBeUndefined();
  });

  it('is refused once its client is removed or its secret rotated, as a stored token is', async () => {
    const a = await signIn();
    const b = await signIn();
    await rotateClientSecret(rw, 'app', 2);
    expect(auth.verify(`Bearer ${a.access_token}`).ok).toBe(false);
    removeClient(rw, 'app', 3);
    expect(auth.verify(`Bearer ${b.access_token}`).ok).toBe(false);
  });

  it('goes into the database once writes work, and is then a token like any other', async () => {
    const t = await signIn();
    const other = new AuthService({ db: rw, config: config.auth, dataDir: dir, siteId: 'home', log: silentLogger() });
    other.start();
    // the same unsaved store, written through a connection that can write: as after space came back
    (auth as unknown as { ctx: { db: Database } }).ctx.db = rw;
    auth.saveUnsavedTokens();
    expect(auth.unsavedTokens).toBe(0);
    expect(findToken(rw, sha256(t.access_token), 'access')).toMatchObject({ clientId: 'app', revokedAt: null });
    expect(other.verify(`Bearer ${t.access_token}`).ok).toBe(true);
    other.stop();
  });

  it('a grant that must be recorded (a code spent) answers 503 with the reason, not a 500', async () => {
    // an unknown code is refused before any write, as before
    const unknown = new Map([
      ['grant_type', 'authorization_code'],
      ['code', 'sgw_ac_unknown'],
    ]);
    await expect(auth.token(unknown, basic('app', secret), '127.0.0.1')).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    insertCode(rw, {
      hash: sha256('sgw_ac_x'),
      clientId: 'app',
      redirectUri: 'https://app.example/cb',
      redirectGiven: false,
      scopes: ['svc/device.read'],
      codeChallenge: null,
      nonce: null,
      family: 'f1',
      authTime: Date.now(),
      expiresAt: Date.now() + 60_000,
    });
    const codes = new Map([
      ['grant_type', 'authorization_code'],
      ['code', 'sgw_ac_x'],
    ]);
    const err = await auth.token(codes, basic('app', secret), '127.0.0.1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ error: 'temporarily_unavailable', statusCode: 503 });
    expect((err as OAuthError).description).toMatch(/data disk takes no writes/);
  });
});
