/**
 * The verified-token cache (src/auth/verified-tokens.ts) on one connection, as the daemon runs
 * it: a hit hands out the kept check itself, and neither a write by this process nor the clock
 * passing the token's expiry lets a kept check through on the next request. (A write by another
 * process: test/e2e/token-cache.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addClient } from '../../src/auth/clients.js';
import { AuthService } from '../../src/auth/service.js';
import { silentLogger } from '../../src/core/log.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { revokeClientTokens } from '../../src/store/tokens.js';

const config = demoSiteConfig(
  { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
  { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 1 },
);
const basic = (id: string, s: string) => `Basic ${Buffer.from(`${id}:${s}`).toString('base64')}`;

let dir: string;
let db: Database;
let now: number;
let auth: AuthService;
let bearer: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sitegw-verified-'));
  db = openDatabase(join(dir, 'sitegw.db'));
  now = Date.UTC(2026, 0, 1);
  const secret = (await addClient(db, { id: 'app', name: 'App', scopes: ['device.read'], devices: ['inverter'] }, now))
    .secret!;
  auth = new AuthService({
    db,
    config: config.auth,
    dataDir: dir,
    siteId: 'home',
    log: silentLogger(),
    now: () => now,
  });
  auth.start();
  const t = await auth.token(new Map([['grant_type', 'client_credentials']]), basic('app', secret), '127.0.0.1');
  bearer = `Bearer ${t.access_token}`;
});
afterEach(() => {
  auth.stop();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('verified bearer tokens', () => {
  it('a hit is the kept check itself, while nothing was written', () => {
    const first = auth.verify(bearer);
    expect(first.ok).toBe(true);
    expect(auth.verify(bearer)).toBe(first);
  });

  it('a token revoked by this process is refused on the next request after a hit', () => {
    expect(auth.verify(bearer).ok).toBe(true);
    expect(auth.verify(bearer).ok).toBe(true);
    expect(revokeClientTokens(db, 'app', now)).toBeGreaterThan(0);
    const r = auth.verify(bearer);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.description).toBe('the access token was revoked');
  });

  it('a kept token past its expiry is refused, nothing written meanwhile', () => {
    const first = auth.verify(bearer);
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    now = first.expiresAt - 1;
    expect(auth.verify(bearer)).toBe(first);
    now = first.expiresAt;
    const r = auth.verify(bearer);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.description).toBe('the access token expired; request a new one');
  });
});
