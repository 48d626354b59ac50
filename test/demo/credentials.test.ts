import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addClient, findClient } from '../../src/auth/clients.js';
import { verifySecret } from '../../src/auth/secrets.js';
import { credentialsFile, DEMO_CLIENT, ensureDemoCredentials } from '../../src/demo/credentials.js';
import type { Daemon } from '../../src/main.js';
import { migrate, openDatabase } from '../../src/store/db.js';
import { getOwner } from '../../src/store/owner.js';

/**
 * The demo's own client and owner are hashed at the demo's strength (their plaintext is in
 * demo-credentials.json), and nothing else is: a partner added to a demo site gets the full one.
 */
describe('demo credentials', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('are hashed at the demo strength, verify, are kept across a restart, and leave other clients at full strength', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-demo-cred-'));
    dirs.push(dataDir);
    const db = openDatabase(join(dataDir, 'sitegw.db'));
    migrate(db);
    // what ensureDemoCredentials reads of a daemon: its database, data directory, devices and TLS
    const daemon = {
      ctx: { db, config: { dataDir }, site: { devices: new Map([['inv1', {}]]) }, tls: {} },
      url: 'http://127.0.0.1:1',
    } as unknown as Daemon;
    const first = await ensureDemoCredentials(daemon);
    const client = findClient(db, DEMO_CLIENT)!;
    expect(client.secretHash).toMatch(/^scrypt\$4096\$/);
    expect(await verifySecret(first.client.secret, client.secretHash)).toBe(true);
    expect(getOwner(db)!.passwordHash).toMatch(/^scrypt\$4096\$/);
    expect(JSON.parse(readFileSync(credentialsFile(dataDir), 'utf8')).client.secret).toBe(first.client.secret);

    const again = await ensureDemoCredentials(daemon);
    expect(again.client.secret).toBe(first.client.secret);
    expect(again.owner.password).toBe(first.owner.password);

    const other = await addClient(db, { id: 'installer-app', scopes: ['svc/device.read'] }, Date.now());
    expect(findClient(db, 'installer-app')!.secretHash).toMatch(/^scrypt\$32768\$/);
    expect(await verifySecret(other.secret!, findClient(db, 'installer-app')!.secretHash)).toBe(true);
    db.close();
  });
});
