/**
 * Generated malformed input at the two edges that are not HTTP: the MQTT command topic
 * (`{prefix}/cmd/resync` through an in-process aedes broker, as the uplink tests do) and
 * `site.yaml` (parseConfig on mutated valid files). What must hold: every command gets exactly
 * one answer, an error with a named code for every malformed one, the uplink stays connected and
 * the stored buckets unchanged; parseConfig never throws and answers either a config or errors
 * that each carry a path and a message.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { demoSite, waitFor } from '../support/demo.js';
import { aedesBroker, type Collector, collect, type TestBroker } from '../support/mqtt-brokers.js';
import { capturingLogger, uplinkTo } from '../support/uplink.js';
import { int, jsonJunk, junk, mutateN, pick, rng, SCALE, SEED, storedChecksum, Tally } from './gen.js';

const PREFIX = 'sitegw/demo-site';
const START = Date.UTC(2026, 5, 1, 10, 5, 0);

describe('fuzz: MQTT command topic', () => {
  let broker: TestBroker;
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let c: Collector;
  const cap = capturingLogger();

  beforeAll(async () => {
    broker = await aedesBroker();
    c = await collect(broker.url, `${PREFIX}/cmd/resync/response`);
    demo = await demoSite({ speed: 1, start: START, history: 'PT3H', log: cap.log, ...uplinkTo(broker) });
    await waitFor('uplink connected', () => demo.daemon.uplink!.health().connected || undefined);
  });
  afterAll(async () => {
    await demo?.cleanup();
    await c?.close();
    await broker?.close();
  });

  it('mutated resync commands: one answer each, malformed ones an error with a code', async () => {
    const r = rng(SEED + 20);
    const t = new Tally();
    const before = storedChecksum(demo.daemon.ctx.db);
    const good = () =>
      JSON.stringify({
        requestId: `r${int(r, 1000)}`,
        interval: pick(r, [
          '2026-06-01T07:00:00Z/2026-06-01T08:00:00Z',
          '2026-06-01T07:00:00Z/PT1H',
          'PT1H/2026-06-01T08:00:00Z',
        ]),
      });
    const cases = 800 * SCALE;
    const payloads: Buffer[] = [];
    for (let i = 0; i < cases; i++) {
      const roll = int(r, 6);
      payloads.push(
        roll === 0
          ? Buffer.from(JSON.stringify(jsonJunk(r)))
          : roll === 1
            ? Buffer.from(Array.from({ length: int(r, 300) }, () => int(r, 256)))
            : roll === 2
              ? Buffer.from(junk(r, 6000))
              : roll === 3
                ? Buffer.from(good())
                : Buffer.from(mutateN(r, good())),
      );
    }
    for (let i = 0; i < payloads.length; i += 50) {
      await Promise.all(
        payloads.slice(i, i + 50).map((p) => c.client.publishAsync(`${PREFIX}/cmd/resync`, p, { qos: 1 })),
      );
    }
    const answers = await waitFor(
      `${cases} answers`,
      () => (c.messages.length >= cases ? c.messages : undefined),
      30_000,
    );
    await new Promise((res) => setTimeout(res, 200));
    const bodies = answers.map((m) => JSON.parse(m.payload) as { status: string; code?: string });
    for (const b of bodies) t.add(b.status === 'error' ? `error ${b.code}` : b.status);
    console.log(t.line('MQTT cmd/resync'));
    expect(bodies.length, 'exactly one answer per command').toBe(cases);
    expect(
      bodies.filter(
        (b) =>
          b.status !== 'accepted' &&
          !(b.status === 'error' && typeof b.code === 'string' && b.code !== 'INTERNAL_ERROR'),
      ),
    ).toEqual([]);
    expect(t.counts.get('accepted') ?? 0).toBeGreaterThan(0);
    expect(demo.daemon.uplink!.health().connected).toBe(true);
    expect(storedChecksum(demo.daemon.ctx.db)).toBe(before);
    expect((await fetch(`${demo.url}/healthz`)).status).toBe(200);
    expect(
      cap
        .lines()
        .filter((l) => (l.level as number) >= 50)
        .map((l) => l.msg),
    ).toEqual([]);
    console.log('[fuzz] after the MQTT fuzz: uplink connected, /healthz 200, buckets unchanged, 0 errors logged');
  });
});

describe('fuzz: site.yaml', () => {
  it('parseConfig on mutated valid files never throws; every error has a path and a message', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const example = readFileSync(`${root}/examples/site.example.yaml`, 'utf8');
    const r = rng(SEED + 30);
    const t = new Tally();
    const problems: string[] = [];
    const lines = example.split('\n');
    const cases = 2000 * SCALE;
    for (let i = 0; i < cases; i++) {
      let text: string;
      const roll = int(r, 4);
      if (roll === 0) text = mutateN(r, example, 4);
      else if (roll === 1) {
        // one line changed, so most of the file stays valid and the schema is reached
        const ls = [...lines];
        const k = int(r, ls.length);
        ls[k] = int(r, 2)
          ? mutateN(r, ls[k]!)
          : ls[k]!.replace(
              /:\s.*$/,
              `: ${pick(r, ['', '~', '[]', '{}', '-1', '99999999', '"x"', 'yes', '1e400', '!!binary aGk=', '&a x', '*a', '<<: *a', junk(r, 12).replace(/\n/g, '')])}`,
            );
        text = ls.join('\n');
      } else if (roll === 2) {
        // lines dropped or repeated (duplicate keys, lost parents)
        const ls = [...lines];
        const k = int(r, ls.length);
        if (int(r, 2)) ls.splice(k, 1 + int(r, 4));
        else ls.splice(k, 0, ...ls.slice(k, k + 1 + int(r, 4)));
        text = ls.join('\n');
      } else text = junk(r, 400);
      try {
        const res = parseConfig(text, 'site.yaml', root);
        if (res.ok) t.add('valid');
        else {
          t.add('errors');
          for (const e of res.errors)
            if (typeof e.path !== 'string' || typeof e.message !== 'string' || e.message.length === 0)
              problems.push(`case ${i}: ${JSON.stringify(e)}`);
        }
      } catch (err) {
        t.add('threw');
        problems.push(`case ${i} threw ${(err as Error).stack?.slice(0, 400)}\n--- input ---\n${text.slice(0, 400)}`);
      }
    }
    console.log(t.line('site.yaml'));
    expect(problems.slice(0, 3)).toEqual([]);
    expect(t.counts.get('errors') ?? 0).toBeGreaterThan(cases / 2);
  });
});
