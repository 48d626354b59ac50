/**
 * The refusal log's bound (src/api/refusals.ts): a flood of one kind fills the shared bucket,
 * yet the first refusal of another kind is still written, once per kind per `kindEveryMs`.
 * CI once lost the port-full line this way (test/attack/hostile-lan): the attackers' WebSockets
 * on a stolen token were refused (WEBSOCKET_LIMIT_REACHED, reconnecting at once) first and
 * spent the burst, and the log never named the addresses holding the port.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RefusalLog } from '../../src/api/refusals.js';

interface Line {
  msg: string;
  statusCode?: number | string;
  reason?: string;
  code?: string;
  notLogged?: number;
}

function harness() {
  const lines: Line[] = [];
  let t = 1_000_000;
  const log = new RefusalLog(
    pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) }),
    {
      burst: 3,
      refillMs: 6000,
      kindEveryMs: 600_000,
      now: () => t,
    },
  );
  return {
    lines,
    log,
    advance: (ms: number) => void (t += ms),
    refused: () => lines.filter((l) => l.msg === 'refused'),
  };
}

const ws429 = { remote: '127.0.0.2', statusCode: 429, code: 'WEBSOCKET_LIMIT_REACHED', upgrade: true as const };
const full = (n: number) => ({
  remote: '127.0.0.3',
  statusCode: 'connection' as const,
  reason: `limits.http.maxConnections (128) reached: a connection of the address holding the most gives way`,
  holders: `127.0.0.3×${n}`,
});

describe('the refusal log, kind by kind', () => {
  it('writes the first refusal of a new kind after a flood of another kind spent the burst, and counts the rest', () => {
    const h = harness();
    for (let i = 0; i < 50; i++) h.log.note(ws429);
    expect(h.refused()).toHaveLength(3);
    h.log.note(full(32));
    h.log.note(full(31));
    const written = h.refused();
    expect(written).toHaveLength(4);
    expect(written[3]).toMatchObject({ statusCode: 'connection', notLogged: 47 });
    // the second port-full refusal is of a kind seen now: counted, not written
    h.advance(6000);
    h.log.note(ws429);
    expect(h.refused().at(-1)).toMatchObject({ statusCode: 429, notLogged: 1 });
  });

  it('a kind is new again after kindEveryMs, and counts and addresses do not make a new kind', () => {
    const h = harness();
    for (let i = 0; i < 10; i++) h.log.note(full(32 - i));
    expect(h.refused()).toHaveLength(3);
    h.advance(599_999);
    // the refills came back meanwhile; spend them on the other kind
    for (let i = 0; i < 10; i++) h.log.note(ws429);
    const before = h.refused().length;
    h.log.note(full(20));
    expect(h.refused()).toHaveLength(before);
    h.advance(1);
    h.log.note(full(19));
    expect(h.refused()).toHaveLength(before + 1);
  });

  it('bounds what a flood of every kind can write: one line per kind per kindEveryMs beyond the bucket', () => {
    const h = harness();
    const kinds = [400, 401, 403, 408, 413, 429].map((statusCode) => ({ remote: '127.0.0.4', statusCode }));
    // an hour of a flood of six kinds, one refusal of each every 100 ms
    for (let ms = 0; ms < 3_600_000; ms += 100) {
      for (const k of kinds) h.log.note(k);
      h.advance(100);
    }
    // bucket: 3 + 600 refills; kinds: 6 × 6 windows at most
    expect(h.refused().length).toBeLessThanOrEqual(3 + 600 + 36);
    expect(h.refused().length).toBeGreaterThan(600);
  });
});
