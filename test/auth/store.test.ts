/** Clients, owner, codes, tokens and publishTo on a real SQLite file. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addClient, ClientError, removeClient, rotateClientSecret } from '../../src/auth/clients.js';
import { setOwnerPassword, verifyOwner } from '../../src/auth/owner.js';
import { verifySecret } from '../../src/auth/secrets.js';
import { findClient } from '../../src/store/clients.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { publishAudit, publishToOf, replacePublishTo } from '../../src/store/publish-to.js';
import { findToken, insertCode, insertToken, pruneExpired, revokeFamily, takeCode } from '../../src/store/tokens.js';

let dir: string;
let db: Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sitegw-store-'));
  db = openDatabase(join(dir, 'sitegw.db'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const token = (hash: string, over: Partial<Parameters<typeof insertToken>[1]> = {}) =>
  insertToken(db, {
    hash,
    kind: 'access',
    clientId: 'app',
    customer: false,
    scopes: ['svc/device.read'],
    family: 'f1',
    authTime: null,
    createdAt: 0,
    expiresAt: 1000,
    ...over,
  });

describe('registering clients', () => {
  const known = new Set(['inverter', 'grid-meter']);

  it('keeps only a hash of the secret: the secret is nowhere in the database files', async () => {
    const { client, secret } = await addClient(
      db,
      { id: 'ev-charger', name: 'EV charger', scopes: ['device.read', 'svc/device.write'], devices: ['inverter'] },
      1,
      known,
    );
    expect(secret).toMatch(/^sgw_cs_[\w-]{43}$/);
    expect(client).toMatchObject({
      id: 'ev-charger',
      name: 'EV charger',
      scopes: ['svc/device.read', 'svc/device.write'],
      devices: ['inverter'],
      redirectUris: [],
    });
    expect(await verifySecret(secret!, client.secretHash)).toBe(true);
    db.pragma('wal_checkpoint(TRUNCATE)');
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f)).includes(Buffer.from(secret!))).toBe(false);
  });

  it('refuses what would break later, saying what is wrong', async () => {
    const cases: [Parameters<typeof addClient>[1], RegExp][] = [
      [{ id: 'has space' }, /client id 'has space'/],
      [{ id: 'a:b' }, /client id/],
      [{ id: 'ok', devices: ['boiler'] }, /unknown device 'boiler'; devices of this site: inverter, grid-meter/],
      [{ id: 'ok', scopes: ['svc/device.admin'] }, /unknown scope/],
      [{ id: 'ok', redirectUris: ['/relative'] }, /not an absolute URL/],
      [{ id: 'ok', redirectUris: ['https://app.example/cb#frag'] }, /fragment/],
      [{ id: 'ok', redirectUris: ['https://user:pw@app.example/cb'] }, /credentials/],
      [{ id: 'ok', redirectUris: ['javascript:alert(1)'] }, /app scheme/],
      [{ id: 'ok', public: true }, /public client needs at least one redirect URI/],
    ];
    for (const [spec, message] of cases) await expect(addClient(db, spec, 1, known)).rejects.toThrow(message);
    expect(findClient(db, 'ok')).toBeUndefined();
  });

  it('never hands out an id twice, not even after removal', async () => {
    await addClient(db, { id: 'app' }, 1);
    await expect(addClient(db, { id: 'app' }, 2)).rejects.toThrow(ClientError);
    removeClient(db, 'app', 3);
    await expect(addClient(db, { id: 'app' }, 4)).rejects.toThrow(/taken/);
    expect(() => removeClient(db, 'app', 5)).toThrow(/no client 'app'/);
  });

  it('rotating a secret ends the old one and everything issued with it', async () => {
    const { secret } = await addClient(db, { id: 'app' }, 1);
    token('h1');
    const fresh = await rotateClientSecret(db, 'app', 2);
    expect(fresh).not.toBe(secret);
    const row = findClient(db, 'app')!;
    expect(await verifySecret(secret!, row.secretHash)).toBe(false);
    expect(await verifySecret(fresh, row.secretHash)).toBe(true);
    expect(findToken(db, 'h1', 'access')!.revokedAt).toBe(2);
  });

  it('removing a client revokes its tokens and takes it off every publishTo list, audited as the installer', async () => {
    await addClient(db, { id: 'app' }, 1);
    await addClient(db, { id: 'keep' }, 1);
    token('h1');
    replacePublishTo(
      db,
      'inverter',
      [
        { clientId: 'keep', data: ['telemetry-realtime'] },
        { clientId: 'app', data: ['telemetry-realtime'] },
      ],
      'owner-app',
      2,
    );
    const r = removeClient(db, 'app', 3);
    expect(r.revokedTokens).toBe(1);
    expect(publishToOf(db, 'inverter')).toEqual([{ clientId: 'keep', data: ['telemetry-realtime'] }]);
    expect(publishAudit(db, 'inverter').map((a) => a.byClient)).toEqual(['owner-app', 'installer']);
    expect(findClient(db, 'app')).toBeUndefined();
  });
});

describe('codes and tokens', () => {
  it('a code is taken once: the second take sees it used', () => {
    insertCode(db, {
      hash: 'c',
      clientId: 'app',
      redirectUri: 'https://a/cb',
      redirectGiven: true,
      scopes: ['svc/device.read'],
      codeChallenge: null,
      nonce: null,
      family: 'f',
      authTime: 1,
      expiresAt: 100,
    });
    expect(takeCode(db, 'c', 5)!.usedAt).toBeNull();
    expect(takeCode(db, 'c', 6)!.usedAt).toBe(5);
    expect(takeCode(db, 'unknown', 6)).toBeUndefined();
  });

  it('revoking a family touches only that family; pruning drops what expired before the cut', () => {
    token('a1', { family: 'f1' });
    token('r1', { family: 'f1', kind: 'refresh', expiresAt: 5000 });
    token('a2', { family: 'f2' });
    expect(revokeFamily(db, 'f1', 7)).toBe(2);
    expect(findToken(db, 'r1', 'refresh')!.revokedAt).toBe(7);
    expect(findToken(db, 'a2', 'access')!.revokedAt).toBeNull();
    expect(findToken(db, 'a1', 'refresh')).toBeUndefined(); // kinds do not mix
    expect(pruneExpired(db, 2000)).toBe(2);
    expect(findToken(db, 'r1', 'refresh')).toBeDefined();
  });
});

describe('the owner', () => {
  it('needs a password of 8 characters or more; a new password revokes customer tokens only', async () => {
    await expect(setOwnerPassword(db, 'owner', 'short', 1)).rejects.toThrow(/at least 8/);
    await expect(setOwnerPassword(db, 'bad name', 'long enough', 1)).rejects.toThrow(/user name/);
    await setOwnerPassword(db, 'owner', 'first password', 1);
    token('customer', { customer: true });
    token('partner', { customer: false, family: 'f2' });
    expect((await setOwnerPassword(db, 'owner', 'second password', 2)).revokedTokens).toBe(1);
    expect(await verifyOwner(db, 'owner', 'first password')).toBe(false);
    expect(await verifyOwner(db, 'owner', 'second password')).toBe(true);
    expect(await verifyOwner(db, 'Owner', 'second password')).toBe(false);
    expect(findToken(db, 'partner', 'access')!.revokedAt).toBeNull();
  });
});
