/**
 * docs/asyncapi.yaml as data: its versioning agrees with the code and docs/api.md, and its
 * schemas refuse what the gateway must not send. The uplink e2e tests validate every message
 * the gateway sends against it (test/support/contract.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkPlanSlots } from '../../src/control/plan-body.js';
import { streamIds } from '../../src/core/streams.js';
import { GridWatch } from '../../src/grid/watch.js';
import { writeTx } from '../../src/store/db.js';
import { enqueue } from '../../src/store/outbox.js';
import { retainedRefusal } from '../../src/uplink/commands.js';
import { gridEventBody, payloadContext } from '../../src/uplink/payloads.js';
import { answerResync, parseResync, type ResyncTarget } from '../../src/uplink/resync.js';
import { PAYLOAD_VERSION } from '../../src/uplink/topics.js';
import { loadContract } from '../support/contract.js';
import { fixture, GRID, siteConfig } from '../tariffs/fixture.js';

const P = 'sitegw/s';
const contract = loadContract(P);
const RANGE = '2026-11-20T10:00:00Z/2026-11-20T11:00:00Z';

/** A site with two stored buckets, whose resync would queue them (test/uplink/resync-disk.test.ts). */
function resyncTarget(): ResyncTarget {
  const f = fixture(siteConfig());
  f.put(GRID, '2026-11-20T10:00:00Z', 100);
  f.put(GRID, '2026-11-20T10:15:00Z', 100);
  return {
    db: f.db,
    site: f.site,
    ctx: payloadContext(f.site, 'percent'),
    outboxMaxBytes: 1_000_000,
    enqueue: (messages) => writeTx(f.db, () => enqueue(f.db, messages, Date.parse('2026-11-21T00:00:00Z'))),
  };
}

describe('docs/asyncapi.yaml', () => {
  it('is at the payload version of the code and of the version table in docs/api.md', () => {
    expect(contract.doc.info['x-payload-version']).toBe(PAYLOAD_VERSION);
    expect(contract.doc.info.version.split('.')[0]).toBe(String(PAYLOAD_VERSION));
    const table = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8').split(
      '## MQTT payload versions',
    )[1]!;
    const rows = [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    expect(rows.at(-1)).toBe(PAYLOAD_VERSION);
  });

  it('has a message for every payload version on every channel the gateway sends on', () => {
    for (const [name, ch] of Object.entries(contract.doc.channels)) {
      // the gateway receives these; a channel added later starts at its payload version
      if (name === 'resync' || name === 'plan' || name === 'limits') continue;
      const keys = Object.keys(ch.messages);
      const since = (ch as { 'x-since-payload-version'?: number })['x-since-payload-version'] ?? 1;
      for (let v = since; v <= PAYLOAD_VERSION; v++)
        expect(
          keys.some((k) => k.endsWith(`V${v}`)),
          `${name} v${v}`,
        ).toBe(true);
    }
  });

  it("tells the versions apart: a v2 grid event names the connection point's stream, a v1 one the meter", () => {
    const streamId = streamIds.gridMeter('grid-meter');
    const watch = new GridWatch({ streamId, deviceId: 'grid-meter', debounce: 1 });
    watch.observe({ streamId, ts: 0, values: { state: 'ok' } });
    const e = watch.observe({ streamId, ts: 1000, values: { state: 'not_present' } })!;
    const body = {
      seq: 7,
      ...JSON.parse(gridEventBody({ siteId: 's', stream: () => undefined, socScale: 'percent' }, e).body),
    };
    expect(contract.check(`${P}/grid-events`, body)).toEqual([]);
    expect(contract.check(`${P}/grid-events`, { ...body, deviceId: 'grid-meter' })).not.toEqual([]);
    expect(contract.check(`${P}/grid-events`, { ...body, v: 1, deviceId: 'grid-meter' }, 1)).toEqual([]);
    expect(contract.check(`${P}/grid-events`, body, 1)).not.toEqual([]);
  });

  it('refuses a field it does not list, a missing seq, and a topic it does not have', () => {
    const status = { v: PAYLOAD_VERSION, state: 'offline', siteId: 's' };
    expect(contract.check(`${P}/status`, status)).toEqual([]);
    expect(contract.check(`${P}/status`, { ...status, extra: 1 }).join()).toMatch(/additional/);
    const avail = {
      seq: 1,
      v: PAYLOAD_VERSION,
      time: '2026-11-01T00:00:00Z',
      siteId: 's',
      deviceId: 'meter-1',
      online: true,
      lastSeen: null,
    };
    expect(contract.check(`${P}/devices/meter-1/availability`, avail)).toEqual([]);
    const { seq: _s, ...noSeq } = avail;
    expect(contract.check(`${P}/devices/meter-1/availability`, noSeq).join()).toMatch(/seq/);
    expect(contract.check(`${P}/other`, avail).join()).toMatch(/no channel/);
    expect(
      contract.check(`${P}/cmd/resync/response`, { v: PAYLOAD_VERSION, requestId: 'r', status: 'accepted' }).join(),
    ).toMatch(/firstSeq|must match/);
  });
});

/** Every schema node reachable from `node`, $refs into the document followed once. */
function reachable(doc: unknown, node: unknown, seen = new Set<unknown>()): Record<string, unknown>[] {
  if (node === null || typeof node !== 'object' || seen.has(node)) return [];
  seen.add(node);
  if (Array.isArray(node)) return node.flatMap((n) => reachable(doc, n, seen));
  const o = node as Record<string, unknown>;
  const out = [o];
  if (typeof o.$ref === 'string' && o.$ref.startsWith('#/')) {
    const target = o.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, k) => (at as Record<string, unknown>)?.[k], doc);
    out.push(...reachable(doc, target, seen));
  }
  for (const v of Object.values(o)) out.push(...reachable(doc, v, seen));
  return out;
}

describe('docs/asyncapi.yaml agrees with the contract and the gateway (issue 44 item 4)', () => {
  const open = loadContract(P, { open: true });
  const doc = open.doc as unknown as {
    info: { version: string };
    operations: Record<string, { action: string; channel: { $ref: string } }>;
    channels: Record<string, { messages: Record<string, { $ref: string }> }>;
  };

  it('is open on everything the gateway sends: no additionalProperties: false a client receives', () => {
    const sent = Object.values(doc.operations)
      .filter((o) => o.action === 'send')
      .map((o) => doc.channels[o.channel.$ref.split('/').at(-1)!]!);
    expect(sent.length).toBeGreaterThan(5);
    const closed = sent
      .flatMap((ch) => Object.values(ch.messages).flatMap((m) => reachable(doc, m)))
      .filter((n) => n.additionalProperties === false)
      .map((n) => JSON.stringify(n).slice(0, 80));
    expect(closed).toEqual([]);
  });

  it('lists every code the gateway answers a resync with', () => {
    const t = resyncTarget();
    t.db.pragma('query_only = ON');
    const full = answerResync(t, Buffer.from(JSON.stringify({ requestId: 'r', interval: RANGE })));
    t.db.pragma('query_only = OFF');
    const answers = [
      full,
      retainedRefusal(Buffer.from('{"requestId":"r"}')),
      answerResync(t, Buffer.from('{')),
      answerResync(t, Buffer.from('{"requestId":"a b"}')),
      answerResync(t, Buffer.from('{"requestId":"r","interval":"x"}')),
      answerResync(t, Buffer.from('{"requestId":"r","interval":"2026-01-01T00:00:00Z/2026-03-01T00:00:00Z"}')),
    ];
    expect(answers.map((a) => a.status === 'error' && a.code)).toEqual([
      'STORAGE_UNAVAILABLE',
      'RETAINED_COMMAND',
      'INVALID_PAYLOAD',
      'INVALID_REQUEST_ID',
      'INVALID_INTERVAL',
      'INTERVAL_TOO_LONG',
    ]);
    for (const a of answers)
      expect(open.check(`${P}/cmd/resync/response`, { v: PAYLOAD_VERSION, siteId: 's', ...a })).toEqual([]);
  });

  it('takes in a request every interval the gateway accepts (offsets, durations) and refuses one without an offset', () => {
    const accepted = [
      '2026-11-20T10:00:00Z/2026-11-20T11:00:00Z',
      '2026-11-20T11:00:00+01:00/2026-11-20T12:00:00+01:00',
      '2026-11-20T05:00:00-05:00/PT1H',
      'PT1H/2026-11-20T11:00:00Z',
    ];
    for (const interval of accepted) {
      expect(parseResync(Buffer.from(JSON.stringify({ requestId: 'r', interval }))).interval).toBe(interval);
      expect(open.check(`${P}/cmd/resync`, { requestId: 'r', interval }), interval).toEqual([]);
      const slot = { interval, mode: 'hold' as const };
      expect(checkPlanSlots([slot], Date.parse('2026-11-20T00:00:00Z'))).toHaveLength(1);
      expect(open.check(`${P}/cmd/plan`, { requestId: 'r', deviceId: 'inverter', slots: [slot] }), interval).toEqual(
        [],
      );
    }
    const local = '2026-11-20T10:00:00/2026-11-20T11:00:00';
    expect(() => parseResync(Buffer.from(JSON.stringify({ requestId: 'r', interval: local })))).toThrow(/offset/);
    expect(open.check(`${P}/cmd/resync`, { requestId: 'r', interval: local })).not.toEqual([]);
    // the request's description says what is accepted, not "UTC" alone
    const req = (doc as unknown as { components: { schemas: Record<string, any> } }).components.schemas;
    expect(JSON.stringify(req.ResyncRequest)).not.toMatch(/interval in UTC/);
  });

  it('docs/api.md lists every field-addition version of the current payload version, up to info.version', () => {
    const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8').split(
      '## MQTT payload versions',
    )[1]!;
    const versions = [...text.matchAll(/^\| (\d+\.\d+\.\d+) \|/gm)].map((m) => m[1]);
    const [v, n] = doc.info.version.split('.').map(Number) as [number, number];
    expect(versions).toEqual(Array.from({ length: n + 1 }, (_, i) => `${v}.${i}.0`));
  });
});
