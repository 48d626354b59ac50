/**
 * docs/asyncapi.yaml as data: its versioning agrees with the code and docs/api.md, and its
 * schemas refuse what the gateway must not send. The uplink e2e tests validate every message
 * the gateway sends against it (test/support/contract.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { streamIds } from '../../src/core/streams.js';
import { GridWatch } from '../../src/grid/watch.js';
import { gridEventBody } from '../../src/uplink/payloads.js';
import { PAYLOAD_VERSION } from '../../src/uplink/topics.js';
import { loadContract } from '../support/contract.js';

const P = 'sitegw/s';
const contract = loadContract(P);

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
