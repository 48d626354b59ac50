/**
 * mqtts:// to mosquitto with a CA of the test's own (openssl): with uplink.tls.ca and a client
 * certificate the gateway connects; without the CA the health says TLS failure in words.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOSQUITTO, mosquittoBroker, noteMosquittoSkipped, type TestBroker } from '../support/mqtt-brokers.js';
import { demoSite, waitFor } from '../support/demo.js';
import { uplinkTo } from '../support/uplink.js';

noteMosquittoSkipped('test/e2e/uplink-tls.test.ts');
const OPENSSL = !spawnSync('openssl', ['version']).error;

function makePki(dir: string): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=sitegw test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
  for (const [name, cn] of [['server', 'localhost'], ['client', 'sitegw-demo-site']] as const) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', `${name}.pem`, ...(name === 'server' ? ['-extfile', ext(dir)] : []));
  }
}

function ext(dir: string): string {
  const f = join(dir, 'san.ext');
  execFileSync('sh', ['-c', `printf 'subjectAltName=DNS:localhost\\n' > ${f}`]);
  return f;
}

describe.skipIf(!MOSQUITTO || !OPENSSL)('uplink over mqtts:// (mosquitto, client certificate required)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-pki-'));
  let broker: TestBroker;
  beforeAll(async () => {
    makePki(dir);
    broker = await mosquittoBroker({ tls: { cafile: join(dir, 'ca.pem'), certfile: join(dir, 'server.pem'), keyfile: join(dir, 'server.key'), requireCertificate: true } });
  });
  afterAll(async () => {
    await broker?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects with the CA and a client certificate', async () => {
    const demo = await demoSite({ speed: 600, ...uplinkTo(broker, { tls: { ca: join(dir, 'ca.pem'), cert: join(dir, 'client.pem'), key: join(dir, 'client.key') } }) });
    try {
      await waitFor('connected over TLS', () => demo.daemon.uplink!.health().connected || undefined);
      expect(demo.daemon.uplink!.health().lastError).toBeNull();
    } finally {
      await demo.cleanup();
    }
  });

  it("names a TLS failure when the broker's CA is not given", async () => {
    const demo = await demoSite({ speed: 600, ...uplinkTo(broker, { tls: { cert: join(dir, 'client.pem'), key: join(dir, 'client.key') } }) });
    try {
      const e = await waitFor('TLS failure in health', () => (demo.daemon.uplink!.health().lastError?.code === 'TLS_FAILURE' ? demo.daemon.uplink!.health().lastError : undefined));
      expect(e!.message).toMatch(/not signed by a trusted CA .*uplink.tls.ca/);
      expect(demo.daemon.uplink!.health().connected).toBe(false);
    } finally {
      await demo.cleanup();
    }
  });
});
