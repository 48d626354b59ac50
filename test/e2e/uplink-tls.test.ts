/**
 * The uplink over TLS end to end: the demo site's gateway (the real daemon polling the simulator)
 * against mosquitto listening for MQTT over TLS (mqtts://) and MQTT over secure WebSockets
 * (wss://), with a CA, broker and client certificates the test makes with openssl
 * (test/support/pki.ts). A consumer on the broker checks what arrives, as a cloud service would.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteConfig, UplinkConfig } from '../../src/config/types.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { collect, MOSQUITTO, mosquittoBroker, noteMosquittoSkipped, type TestBroker } from '../support/mqtt-brokers.js';
import { HAVE_OPENSSL, makePki, type Pki } from '../support/pki.js';
import { capturingLogger, expectDelivered, storedBuckets, uplinkTo, waitingOf } from '../support/uplink.js';

noteMosquittoSkipped('test/e2e/uplink-tls.test.ts');
if (!HAVE_OPENSSL)
  console.warn(
    '\n*** test/e2e/uplink-tls.test.ts: openssl is not installed: the TLS uplink tests are SKIPPED (.ci/run installs it) ***\n',
  );

const PREFIX = 'sitegw/demo-site';
type Demo = Awaited<ReturnType<typeof demoSite>>;

/** Both ways a cloud broker takes TLS; one by host name and one by address, so both SAN entries are used. */
const TRANSPORTS = [
  { name: 'mqtts://', url: (b: TestBroker) => `mqtts://localhost:${b.port}` },
  { name: 'wss://', url: (b: TestBroker) => `wss://127.0.0.1:${b.wsPort}/mqtt` },
];

/** The demo's gateway uplinked to `url` on `broker`; `config` is the daemon's config, to change before a restart. */
async function gateway(
  broker: TestBroker,
  url: string,
  tls: UplinkConfig['tls'],
  more: { history?: string; log?: ReturnType<typeof capturingLogger>['log'] } = {},
) {
  const up = uplinkTo(broker, { url, tls });
  let config: SiteConfig | undefined;
  const demo = await demoSite({
    speed: 600,
    ...more,
    mqtt: up.mqtt,
    configure: (c) => {
      up.configure(c);
      config = c;
    },
  });
  return { demo, config: config! };
}

const failure = (demo: Demo, code: string) => () => {
  const e = demo.daemon.uplink!.health().lastError;
  return e?.code === code ? e : undefined;
};

describe.skipIf(!MOSQUITTO || !HAVE_OPENSSL)('uplink over TLS to mosquitto', () => {
  let pki: Pki;
  beforeAll(() => {
    pki = makePki();
  });
  afterAll(() => pki?.remove());

  // brokers of their own per transport: retained messages of one must not reach the other's consumers
  describe.each(TRANSPORTS)('over $name', ({ url }) => {
    /** TLS with a broker certificate from the test CA */
    let broker: TestBroker;
    /** the same, and a client certificate from the test CA required (mutual TLS) */
    let mutual: TestBroker;
    /** an impostor: its certificate and chain come from a CA the gateway is not told about */
    let rogue: TestBroker;
    beforeAll(async () => {
      const tls = (ca: string, s: Pki['server'], requireCertificate = false) => ({
        cafile: ca,
        certfile: s.cert,
        keyfile: s.key,
        requireCertificate,
      });
      [broker, mutual, rogue] = await Promise.all([
        mosquittoBroker({ tls: tls(pki.ca, pki.server), websockets: true }),
        mosquittoBroker({ tls: tls(pki.ca, pki.server, true), websockets: true }),
        mosquittoBroker({ tls: tls(pki.rogueCa, pki.rogueServer), websockets: true }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([broker?.close(), mutual?.close(), rogue?.close()]);
    });

    it('delivers every stored bucket at QoS 1 with seq, and a later client finds the status online (retained)', async () => {
      const ca = readFileSync(pki.ca);
      const c = await collect(url(broker), `${PREFIX}/#`, { ca });
      const { demo } = await gateway(broker, url(broker), { ca: pki.ca }, { history: 'PT1H' });
      try {
        const up = demo.daemon.uplink!;
        await waitFor('connected', () => up.health().connected || undefined);
        // wait for a live bucket too, so pre-filled and live ones both went over TLS
        await waitFor('a live bucket', () => storedBuckets(demo.daemon.ctx.db).size > 4 * 7 || undefined);
        await expectDelivered(c, storedBuckets(demo.daemon.ctx.db));
        const withSeq = c.messages.filter((m) => typeof JSON.parse(m.payload).seq === 'number');
        // a QoS 1 subscription hands on each message at the QoS it was published with, at most 1
        expect(new Set(withSeq.map((m) => m.qos))).toEqual(new Set([1]));
        expect(up.health()).toMatchObject({ connected: true, lastError: null, broker: url(broker) });

        const later = await collect(url(broker), `${PREFIX}/status`, { ca });
        try {
          const status = await waitFor('retained status', () => later.messages.find((m) => m.retain));
          expect(JSON.parse(status.payload)).toMatchObject({ v: 2, state: 'online', siteId: 'demo-site', devices: 5 });
        } finally {
          await later.close();
        }
      } finally {
        await demo.cleanup();
        await c.close();
      }
    });

    it('connects with a client certificate where the broker requires one (mutual TLS)', async () => {
      const { demo } = await gateway(mutual, url(mutual), { ca: pki.ca, cert: pki.client.cert, key: pki.client.key });
      try {
        const up = demo.daemon.uplink!;
        await waitFor(
          'connected and a message acknowledged',
          () => (up.health().connected && up.health().delivered > 0) || undefined,
        );
        expect(up.health().lastError).toBeNull();
      } finally {
        await demo.cleanup();
      }
    });

    it('names a missing client certificate and one the broker does not trust', async () => {
      const without = await gateway(mutual, url(mutual), { ca: pki.ca });
      const foreign = await gateway(mutual, url(mutual), {
        ca: pki.ca,
        cert: pki.rogueClient.cert,
        key: pki.rogueClient.key,
      });
      try {
        const e1 = await waitFor('no client certificate', failure(without.demo, 'TLS_FAILURE'));
        expect(e1.message).toMatch(/wants a client certificate .*uplink\.tls\.cert and uplink\.tls\.key/);
        const e2 = await waitFor('foreign client certificate', failure(foreign.demo, 'TLS_FAILURE'));
        expect(e2.message).toContain(
          `refused the client certificate in uplink.tls.cert (${pki.rogueClient.cert}, ERR_SSL_TLSV1_ALERT_UNKNOWN_CA)`,
        );
        for (const d of [without.demo, foreign.demo])
          expect(d.daemon.uplink!.health()).toMatchObject({ connected: false, delivered: 0 });
      } finally {
        await without.demo.cleanup();
        await foreign.demo.cleanup();
      }
    });

    it('refuses a broker whose certificate the configured CA did not sign, says why in log and health, keeps every message and delivers them once the CA is right', async () => {
      const captured = capturingLogger();
      // the consumer trusts the rogue broker: it sees whatever the gateway would hand over
      const c = await collect(url(rogue), `${PREFIX}/#`, { ca: readFileSync(pki.rogueCa) });
      const { demo, config } = await gateway(rogue, url(rogue), { ca: pki.ca }, { history: 'PT1H', log: captured.log });
      try {
        const up = demo.daemon.uplink!;
        const e = await waitFor('TLS failure in health', failure(demo, 'TLS_FAILURE'));
        expect(e.message).toBe(
          `the secure connection to ${url(rogue).replace(/^[a-z]+:\/\//, '')} failed: the broker's certificate is not signed by the CA in uplink.tls.ca (${pki.ca}, SELF_SIGNED_CERT_IN_CHAIN); get the broker's CA certificate from its operator, or the connection does not reach the real broker`,
        );
        // live buckets keep closing into the outbox while the broker is refused
        const before = storedBuckets(demo.daemon.ctx.db).size;
        await waitFor('two more buckets', () => storedBuckets(demo.daemon.ctx.db).size >= before + 2 * 7 || undefined);
        const h = up.health();
        expect(h.connected).toBe(false);
        expect(h.delivered).toBe(0);
        expect(h.outbox.depth).toBeGreaterThanOrEqual(6);
        expect(h.lastError?.code).toBe('TLS_FAILURE');
        const health = await getJson(`${demo.url}/healthz`);
        expect(health.status).toBe(200);
        expect(health.body.status).toBe('degraded');
        expect(health.body.problems.join('\n')).toMatch(
          /the uplink is not connected \(the secure connection .* not signed by the CA in uplink\.tls\.ca .*\); \d+ messages wait in the outbox/,
        );
        // retried every second, logged once
        const logged = captured.lines().filter((l) => l.code === 'TLS_FAILURE');
        expect(logged).toHaveLength(1);
        expect(logged[0]).toMatchObject({ level: 40, feature: 'uplink', msg: `uplink: ${e.message}` });
        expect(c.messages).toEqual([]);

        const firstSeq = Math.min(...waitingOf(demo.daemon.ctx.db).seqs);
        config.uplink!.tls.ca = pki.rogueCa;
        await demo.restartDaemon();
        const d = await expectDelivered(c, storedBuckets(demo.daemon.ctx.db), 30_000);
        expect(d[0]!.seq).toBe(firstSeq);
        expect(demo.daemon.uplink!.health()).toMatchObject({ connected: true, lastError: null });
      } finally {
        await demo.cleanup();
        await c.close();
      }
    });

    it("names the missing uplink.tls.ca when the broker's CA is not among the system's", async () => {
      const { demo } = await gateway(broker, url(broker), {});
      try {
        const e = await waitFor('TLS failure in health', failure(demo, 'TLS_FAILURE'));
        // mosquitto sends the test CA along with its certificate
        expect(e.message).toMatch(
          /not signed by a trusted CA \(SELF_SIGNED_CERT_IN_CHAIN\); give the broker's CA certificate as uplink\.tls\.ca$/,
        );
        expect(demo.daemon.uplink!.health().connected).toBe(false);
      } finally {
        await demo.cleanup();
      }
    });

    it('takes a client key that stopped being PEM after loading (a rotation gone wrong) as a TLS failure, not a crash', async () => {
      const bad = join(pki.dir, 'replaced-client.key');
      writeFileSync(bad, 'this is not a key\n');
      const { demo } = await gateway(mutual, url(mutual), { ca: pki.ca, cert: pki.client.cert, key: bad });
      try {
        const e = await waitFor('TLS failure in health', failure(demo, 'TLS_FAILURE'));
        expect(e.message).toMatch(/a file of uplink\.tls cannot be used \(.*, ERR_OSSL_[A-Z_]+\); give PEM files/);
        // still polling and storing, and retrying
        const before = storedBuckets(demo.daemon.ctx.db).size;
        await waitFor(
          'a bucket stored after the failure',
          () => storedBuckets(demo.daemon.ctx.db).size > before || undefined,
        );
        expect(demo.daemon.uplink!.health()).toMatchObject({ connected: false, lastError: { code: 'TLS_FAILURE' } });
      } finally {
        await demo.cleanup();
      }
    });
  });
});
